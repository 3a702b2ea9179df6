"""jax.nn: activation functions, softmax & co, one_hot, standardize, dot_product_attention.

Written with jnp/lax (so jit, grad and vmap apply), with JAX's formulas so the numbers match,
and JAX's custom derivatives where it defines them (relu, relu6, softmax)."""
from __future__ import annotations

import functools
import operator

import numpy as np

from jaxlite._src.api.custom_derivatives import custom_jvp, stop_gradient
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.numpy import reductions as R
from jaxlite._src.numpy import ufuncs as U
from jaxlite._src.numpy.creation import asarray
from jaxlite._src.numpy.util import ensure_arraylike, promote_args_inexact

__all__ = ["relu", "relu6", "sigmoid", "softplus", "sparse_plus", "sparse_sigmoid",
           "soft_sign", "silu", "swish", "log_sigmoid", "leaky_relu", "hard_sigmoid",
           "hard_silu", "hard_swish", "hard_tanh", "tanh", "elu", "celu", "selu", "gelu",
           "glu", "squareplus", "mish", "identity", "softmax", "log_softmax", "logmeanexp",
           "logsumexp", "standardize", "one_hot", "dot_product_attention", "log1mexp"]


@jit
def identity(x):
    """The identity activation."""
    return asarray(x)


def _full_like(x, v):
    from jaxlite._src.lax.shape import full_like
    return full_like(x, v)


@custom_jvp
@jit
def relu(x):
    """Rectified linear unit ``max(x, 0)`` (derivative 0 at 0, as JAX)."""
    return U.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(U.greater(x, 0), g, _full_like(g, 0)))


@custom_jvp
@jit
def relu6(x):
    """``min(max(x, 0), 6)``."""
    return U.minimum(U.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select(U.logical_and(U.greater(x, 0), U.less(x, 6)), g,
                                           _full_like(g, 0)))


@jit
def squareplus(x, b=4):
    """``(x + sqrt(x^2 + b)) / 2``."""
    x, b = ensure_arraylike("squareplus", x, b)
    return U.divide(U.add(x, U.sqrt(U.add(U.square(x), b))), 2)


@jit
def softplus(x):
    """``log(1 + exp(x))``."""
    return U.logaddexp(x, 0)


@jit
def sparse_plus(x):
    """0 below -1, x above 1, ``(x + 1)^2 / 4`` between."""
    x = ensure_arraylike("sparse_plus", x)
    from jaxlite._src.numpy.ufuncs import where
    return where(U.less_equal(x, -1.0), 0.0, where(U.greater_equal(x, 1.0), x,
                                                    U.power(U.add(x, 1.0), 2) / 4))


@jit
def soft_sign(x):
    """``x / (|x| + 1)``."""
    x = ensure_arraylike("soft_sign", x)
    return U.divide(x, U.add(U.abs(x), 1))


def sigmoid(x):
    """The logistic sigmoid ``1 / (1 + exp(-x))`` (floating or complex ``x``, as
    ``lax.logistic``)."""
    return lax.logistic(x)


@jit
def sparse_sigmoid(x):
    """``clip((x + 1) / 2, 0, 1)``."""
    return U.multiply(0.5, U.clip(U.add(x, 1.0), 0.0, 2.0))


@jit
def silu(x):
    """``x * sigmoid(x)`` (also ``swish``)."""
    x = ensure_arraylike("silu", x)
    return U.multiply(x, sigmoid(x))


swish = silu


@jit
def mish(x):
    """``x * tanh(softplus(x))``."""
    x = ensure_arraylike("mish", x)
    return U.multiply(x, U.tanh(softplus(x)))


@jit
def log_sigmoid(x):
    """``-softplus(-x)``."""
    x = ensure_arraylike("log_sigmoid", x)
    return U.negative(softplus(U.negative(x)))


@jit
def elu(x, alpha=1.0):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` otherwise."""
    x = ensure_arraylike("elu", x)
    return U.where(U.greater(x, 0), x,
                   U.multiply(alpha, U.expm1(U.where(U.greater(x, 0), 0.0, x))))


@jit
def leaky_relu(x, negative_slope=1e-2):
    """``x`` for x >= 0, ``negative_slope * x`` otherwise."""
    x = ensure_arraylike("leaky_relu", x)
    return U.where(U.greater_equal(x, 0), x, U.multiply(negative_slope, x))


@jit
def hard_tanh(x):
    """``clip(x, -1, 1)``."""
    x = ensure_arraylike("hard_tanh", x)
    return U.where(U.greater(x, 1), 1, U.where(U.less(x, -1), -1, x))


@jit
def celu(x, alpha=1.0):
    """``max(x, 0) + alpha * expm1(min(x, 0) / alpha)``."""
    return U.add(U.maximum(x, 0.0),
                 U.multiply(alpha, U.expm1(U.divide(U.minimum(x, 0.0), alpha))))


@jit
def selu(x):
    """Scaled ELU with the self-normalizing constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return U.multiply(scale, elu(x, alpha))


def gelu(x, approximate=True):
    """Gaussian error linear unit (the tanh approximation by default)."""
    (x,) = promote_args_inexact("gelu", x)
    if approximate:
        c = np.sqrt(2 / np.pi).astype(x.dtype)
        cdf = U.multiply(0.5, U.add(1.0, U.tanh(U.multiply(
            c, U.add(x, U.multiply(0.044715, U.power(x, 3)))))))
        return U.multiply(x, cdf)
    from jaxlite._src.lax.special import erfc
    sqrt_half = np.sqrt(0.5).astype(x.dtype)
    return U.multiply(U.multiply(0.5, x), erfc(U.multiply(U.negative(x), sqrt_half)))


@functools.partial(jit, static_argnames=('axis',))
def glu(x, axis=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the two halves of ``x`` along ``axis``."""
    from jaxlite._src.numpy.joining import split
    x = asarray(x)
    if x.shape[axis] % 2:    # (JAX's assertion)
        raise AssertionError("axis size must be divisible by 2")
    a, b = split(x, 2, axis)
    return U.multiply(a, sigmoid(b))


@jit
def hard_sigmoid(x):
    """``relu6(x + 3) / 6``."""
    return U.divide(relu6(U.add(x, 3.0)), 6.0)


@jit
def hard_silu(x):
    """``x * hard_sigmoid(x)`` (also ``hard_swish``)."""
    x = ensure_arraylike("hard_silu", x)
    return U.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


def tanh(x, /):
    """Hyperbolic tangent."""
    return U.tanh(x)


@custom_jvp
@jit
def log1mexp(x):
    """``log(1 - exp(-x))`` for x > 0, accurately (JAX's custom derivative
    ``g / expm1(x)``)."""
    from jaxlite._src.numpy.util import check_arraylike
    check_arraylike("log1mexp", x)
    x = asarray(x)
    c = U.log(2.0)
    return U.where(U.less(x, c), U.log(U.negative(U.expm1(U.negative(x)))),
                   U.log1p(U.negative(U.exp(U.negative(x)))))


log1mexp.defjvps(lambda g, ans, x: U.divide(g, U.expm1(x)))


# ----------------------------------------------------------------------------- softmax

def _axes(x, axis):
    if axis is None:
        return tuple(range(x.ndim))
    return axis


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax(x, axis=-1, where=None, initial=-np.inf):
    x_max = R.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else U.where(where, x, initial)
    unnormalized = U.exp(U.subtract(x_safe, x_max))
    result = U.divide(unnormalized, R.sum(unnormalized, axis, where=where, keepdims=True))
    if where is not None:
        result = U.where(where, result, 0)
    return result


@_softmax.defjvp
def _softmax_jvp(axis, primals, tangents):
    (x, where, initial), (x_dot, _, _) = primals, tangents
    y = _softmax(x, axis, where, initial)
    return y, U.multiply(y, U.subtract(x_dot, R.sum(U.multiply(y, x_dot), axis, where=where,
                                                      keepdims=True)))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """``log(sum(b * exp(a)))`` along ``axis``, computed stably (the max is subtracted);
    with ``return_sign`` also the sign of the sum (also ``jax.scipy.special.logsumexp``)."""
    from jaxlite._src.lax import shape as lsh
    if where is not None:
        a = U.where(where, a, 0)
    if b is not None:
        a_arr, b_arr = promote_args_inexact("logsumexp", a, b)
        a_arr = U.where(U.not_equal(b_arr, 0), a_arr, -np.inf)
    else:
        (a_arr,) = promote_args_inexact("logsumexp", a)
        b_arr = a_arr
    nd = a_arr.ndim
    if axis is None:
        dims = tuple(range(nd))
    else:
        dims = tuple(int(d) % nd if nd else 0 for d in (axis if isinstance(axis, (tuple, list))
                                                        else (axis,)))
    amax = R.max(U.real(a_arr) if a_arr.dtype.kind == "c" else a_arr, axis=dims,
                 keepdims=keepdims, where=where, initial=-np.inf)
    amax = stop_gradient(lax.select(U.isfinite(amax), amax,
                                    lsh.full_like(amax, 0)))
    amax_d = amax if keepdims else lsh.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a_arr, amax_d.astype(a_arr.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b_arr)
    sumexp = R.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    if return_sign or a_arr.dtype.kind != "c":
        sumexp = U.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and out.dtype.kind != "c":
        out = U.where(U.less(sign, 0), np.asarray(np.nan, out.dtype), out)
    return out


def _softmax_stop_gradient(x, axis, where=None, initial=-np.inf):
    """softmax as JAX 0.10.2 traces it by default: the max is a stop_gradient constant."""
    x_max = R.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else U.where(where, x, initial)
    unnormalized = U.exp(U.subtract(x_safe, stop_gradient(x_max)))
    result = U.divide(unnormalized, R.sum(unnormalized, axis, where=where, keepdims=True))
    if where is not None:
        result = U.where(where, result, 0)
    return result


def softmax(x, axis=-1, where=None):
    """``exp(x) / sum(exp(x))`` along ``axis`` (masked-out elements give 0). With the
    ``jax_softmax_custom_jvp`` flag its derivative comes from its own JVP rule."""
    from jaxlite._src.config import config
    x = asarray(x)
    if config.jax_softmax_custom_jvp:
        return _softmax(x, _axes(x, axis), where, -np.inf)
    return _softmax_stop_gradient(x, _axes(x, axis), where)


@functools.partial(jit, static_argnames=('axis',))
def log_softmax(x, axis=-1, where=None):
    """``x - logsumexp(x)`` along ``axis``, computed stably. As JAX, ``x`` keeps its dtype
    until ``exp``: a bool ``x`` raises TypeError (``sub`` of bools) and unsigned integers
    wrap in the shift by the maximum."""
    x = ensure_arraylike("log_softmax", x)
    axis = _axes(x, axis)
    x_max = R.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else U.where(where, x, -np.inf)
    shifted = U.subtract(x_safe, stop_gradient(x_max))
    shifted_lse = U.log(R.sum(U.exp(shifted), axis, where=where, keepdims=True))
    result = U.subtract(shifted, shifted_lse)
    if where is not None:
        return U.where(where, result, -np.inf)
    return result


@functools.partial(jit, static_argnames=('axis', 'keepdims'))
def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``logsumexp(x) - log(n)`` over ``axis``."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    x = asarray(x)
    if where is None:
        axes = range(x.ndim) if axis is None else (axis if isinstance(axis, tuple) else
                                                   (axis,))
        n = int(np.prod([x.shape[a] for a in axes]))
        count = np.asarray(n, lse.dtype)
    else:
        from jaxlite._src.numpy.shape_ops import broadcast_to
        count = R.sum(broadcast_to(where, x.shape), axis=axis, keepdims=keepdims,
                      dtype=lse.dtype)
    return U.subtract(lse, U.log(count))


@functools.partial(jit, static_argnames=('axis', 'algorithm'))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
    """``(x - mean) / sqrt(variance + epsilon)`` along ``axis`` (variance as
    ``mean(x²) - mean²`` with ``algorithm="fast"``, two-pass with ``"stable"``)."""
    (x,) = promote_args_inexact("standardize", x)
    if mean is None:
        mean = R.mean(x, axis, keepdims=True, where=where)
    if variance is None and algorithm == "stable":
        variance = R.mean(U.square(U.subtract(x, mean)), axis, keepdims=True, where=where)
    elif variance is None and algorithm != "fast":
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    if variance is None:
        variance = U.subtract(R.mean(U.square(x), axis, keepdims=True, where=where),
                              U.square(mean))
        variance = U.clip(variance, 0)
    return U.multiply(U.subtract(x, mean), lax.rsqrt(U.add(variance, epsilon)))


def one_hot(x, num_classes, *, dtype=None, axis=-1):
    """One-hot encode the integer ``x`` into ``num_classes`` (out-of-range -> all zeros)."""
    from jaxlite._src.lax import shape as lsh
    num_classes = operator.index(num_classes)
    x = asarray(x)
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    out_axis = axis % (x.ndim + 1)
    lhs = lsh.expand_dims(x, (out_axis,))
    rhs_shape = [1] * x.ndim
    rhs_shape.insert(out_axis, num_classes)
    rhs = lsh.broadcasted_iota(x.dtype, rhs_shape, out_axis)
    return U.equal(lhs, rhs).astype(dtype)


def _check_attention_operand(t, shape, dtype, name):
    """JAX's checks of dot_product_attention's operands (-1: any size)."""
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != dtype:
        raise ValueError(f"{name} dtype should be {dtype}, but got {t.dtype}")
    if any(want != -1 and got != want for got, want in zip(t.shape, shape)):
        raise ValueError(f"{name} shape should be {list(shape)}: but got {tuple(t.shape)}")


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None, key_value_seq_lengths=None,
                          local_window_size=None, implementation=None,
                          return_residual=False):
    """Scaled dot-product attention over ``[B, T, N, H]`` (or unbatched ``[T, N, H]``)
    query/key/value, with optional bias, boolean mask, causal masking, per-batch query and
    key/value lengths and a local window; with ``return_residual`` also the logsumexp of
    the logits (``[B, T, N]``)."""
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    from jaxlite._src.numpy.linalg_ops import einsum
    from jaxlite._src.numpy.shape_ops import expand_dims
    q, k, v = asarray(query), asarray(key), asarray(value)
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = (expand_dims(t, 0) for t in (q, k, v))
        bias = None if bias is None else asarray(bias)
        mask = None if mask is None else asarray(mask)
    _check_attention_operand(k, [-1] * 4, None, "key")
    B, S, K, H = k.shape
    _check_attention_operand(v, [B, S, K, H], k.dtype, "value")
    _check_attention_operand(q, [B, -1, -1, H], k.dtype, "query")
    B, T, N, H = q.shape
    if N % K:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, "
                         f"but got {N} vs {K}")
    if N != K:   # grouped-query attention: repeat the kv heads
        from jaxlite._src.numpy.joining import repeat
        k, v = repeat(k, N // K, axis=2), repeat(v, N // K, axis=2)
    scale = 1.0 / np.sqrt(H) if scale is None else scale
    logits = einsum("BTNH,BSNH->BNTS", q, k)
    logits = U.multiply(logits, np.asarray(scale, logits.dtype))
    if bias is not None:
        logits = U.add(logits, bias)
    S = k.shape[1]
    combined = None
    if mask is not None:
        combined = asarray(mask).astype(bool)
    if is_causal:
        from jaxlite._src.numpy.creation import tri
        causal = tri(T, S, dtype=bool)[None, None]
        combined = causal if combined is None else U.logical_and(combined, causal)
    extra = _attention_extra_mask(T, S, query_seq_lengths, key_value_seq_lengths,
                                  local_window_size)
    if extra is not None:
        combined = extra if combined is None else U.logical_and(combined, extra)
    if combined is not None:
        large_neg = np.asarray(-0.7 * np.finfo(np.dtype(logits.dtype)).max, logits.dtype)
        logits = U.where(combined, logits, large_neg)
    logits32 = logits.astype(np.float32) if logits.dtype != np.float64 else logits
    probs = softmax(logits32, axis=-1).astype(q.dtype)
    out = einsum("BNTS,BSNH->BTNH", probs, v)
    if query_seq_lengths is not None:   # padded query rows give zeros (as JAX)
        from jaxlite._src.lax import shape as lsh
        keep = U.less(lsh.broadcasted_iota(np.int32, (1, T), 1),
                      asarray(query_seq_lengths).astype(np.int32)[:, None])
        out = U.multiply(out, keep[:, :, None, None].astype(out.dtype))
    out = out[0] if unbatched else out
    if not return_residual:
        return out
    from jaxlite._src.numpy.shape_ops import transpose
    res = transpose(logsumexp(logits32, axis=-1), (0, 2, 1))
    return out, (res[0] if unbatched else res)


def _attention_extra_mask(T, S, q_lens, kv_lens, window):
    """The [B|1, 1, T, S] boolean mask of the sequence lengths and the local window."""
    from jaxlite._src.lax import shape as lsh
    rows = lsh.broadcasted_iota(np.int32, (T, S), 0)
    cols = lsh.broadcasted_iota(np.int32, (T, S), 1)
    mask = None
    if window is not None:
        left, right = (window, window) if isinstance(window, int) else window
        mask = U.logical_and(U.greater_equal(cols, U.subtract(rows, left)),
                             U.less_equal(cols, U.add(rows, right)))[None, None]
    for lens, idx in ((q_lens, rows), (kv_lens, cols)):
        if lens is not None:
            m = U.less(idx[None], asarray(lens).astype(np.int32)[:, None, None])[:, None]
            mask = m if mask is None else U.logical_and(mask, m)
    return mask
