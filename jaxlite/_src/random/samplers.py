"""Basic samplers of ``jax.random``, step for step as JAX computes them (same bits, same
float arithmetic): bits, uniform, normal, truncated_normal, bernoulli, randint, permutation,
choice, gumbel, categorical, exponential, laplace, logistic, cauchy, rademacher, maxwell,
double_sided_maxwell, weibull_min, rayleigh, wald, geometric, triangular, lognormal, pareto,
multivariate_normal, orthogonal.

All are written in lax/jnp operations on the key's data (the threefry hash is the only
primitive), so they work eagerly, under jit, under vmap over keys and under grad.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.prims.elementwise import bitcast_convert_type_p
from jaxlite._src.random import prng
from jaxlite._src.random.keys import check_prng_key
from jaxlite._src.random.special import erf, erf_inv, fma
from jaxlite._src.config import config
from jaxlite._src.random.fused import threefry_sample
from jaxlite._src.random.threefry import UINT_DTYPES

__all__ = ["bits", "uniform", "normal", "truncated_normal", "bernoulli", "randint",
           "permutation", "choice", "gumbel", "categorical", "exponential", "laplace",
           "logistic", "cauchy", "rademacher", "maxwell", "double_sided_maxwell",
           "weibull_min", "rayleigh", "wald", "geometric", "triangular", "lognormal",
           "pareto", "multivariate_normal", "orthogonal"]


# ----------------------------------------------------------------------------- helpers

def canonicalize_shape(shape, name="shape"):
    """A tuple of ints from a shape argument (raising JAX's errors for traced sizes)."""
    if isinstance(shape, Tracer):
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.")
    if not isinstance(shape, Sequence) and np.ndim(shape) == 0:
        shape = (shape,)
    out = []
    for d in shape:
        if isinstance(d, Tracer):
            raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                            f"got {tuple(shape)}.")
        out.append(int(d))
    return tuple(out)


def user_dtype(dtype, default):
    """The canonical dtype for a user-given dtype argument (``default`` for None)."""
    if dtype is None:
        dtype = default
    if dtype is float:
        return dtypes.default_float_dtype()
    if dtype is int:
        return dtypes.default_int_dtype()
    dtypes.check_user_dtype_supported(dtype)
    return np.dtype(dtypes.canonicalize_dtype(dtype))


def check_shape(name, shape, *param_shapes):
    """JAX's check that parameter shapes broadcast to exactly ``shape``."""
    if param_shapes:
        shape_ = np.broadcast_shapes(shape, *param_shapes)
        if tuple(shape) != tuple(shape_):
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, "
                "and the result of broadcasting the shapes must equal the shape argument, "
                f"but got result {shape_} for shape argument {shape}.")


def check_broadcast_shapes(name, shape, *args):
    """``shape`` (or the broadcast of the parameter shapes when None), checked."""
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return tuple(np.broadcast_shapes(*arg_shapes)) if arg_shapes else ()
    shape = canonicalize_shape(shape)
    check_shape(name, shape, *arg_shapes)
    return shape


def check_safe_cast(name, dtype, *args):
    """JAX's TypePromotionError when a parameter cannot be cast to ``dtype`` safely."""
    for a in args:
        dt = dtypes.dtype(a)
        weak = dtypes.is_weakly_typed(a)
        if dtypes.issubdtype(dt, np.complexfloating) and not dtypes.issubdtype(
                dtype, np.complexfloating):
            ok = False
        elif weak:
            ok = True
        else:
            ok = np.can_cast(dt, dtype, casting="safe") or (
                dtypes.issubdtype(dt, np.floating) and dtypes.issubdtype(dtype, np.floating))
        if not ok:
            raise dtypes.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type {dt} to {dtype}")


def const(x, v, dtype=None):
    """A rank-0 constant of ``x``'s dtype (or ``dtype``)."""
    return lax.full((), v, dtype if dtype is not None else x.dtype)


def random_bits(key, bit_width, shape):
    """Raw random bits for one typed key."""
    return prng.random_bits(key, bit_width, shape)


def split_key(key, num=2):
    """``num`` typed subkeys of a typed key (as a key array)."""
    return prng.random_split(key, (num,))


def _fdtype(dtype):
    return dtypes.finfo(dtype)


def _float_dtype_check(name, dtype):
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")


# ------------------------------------------------------------------------------- bits

def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform random bits of an unsigned integer dtype (uint32 by default)."""
    key, _ = check_prng_key("bits", key)
    dtype = user_dtype(dtype, dtypes.default_uint_dtype())
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    shape = canonicalize_shape(shape)
    return random_bits(key, dtype.itemsize * 8, shape)


# ---------------------------------------------------------------------------- uniform

def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in ``[minval, maxval)``."""
    key, _ = check_prng_key("uniform", key)
    dtype = user_dtype(dtype, float)
    shape = canonicalize_shape(shape)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dtype}")
    return uniform_typed(key, shape, dtype, minval, maxval)


_FUSED_UNIFORM = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _fused(key):
    """Whether samples of ``key`` can come from the fused ``threefry_sample`` kernel."""
    return key._impl is prng.threefry_prng_impl and config.jax_threefry_partitionable


def uniform_typed(key, shape, dtype, minval=0.0, maxval=1.0):
    """uniform() after argument checks (``key`` typed, ``shape`` a tuple)."""
    dtype = np.dtype(dtype)
    if _fused(key) and dtype in _FUSED_UNIFORM:
        floats = threefry_sample(key._base_array, "uniform", shape, dtype)
        if type(minval) is float and type(maxval) is float and minval == 0.0 and \
                maxval == 1.0:
            return floats       # max(0, u * 1 + 0) is u: skip the scaling
        minval = lax.convert_element_type(jnp.asarray(minval), dtype)
        maxval = lax.convert_element_type(jnp.asarray(maxval), dtype)
        minval = lax.broadcast_to_rank(minval, len(shape)) if minval.ndim else minval
        maxval = lax.broadcast_to_rank(maxval, len(shape)) if maxval.ndim else maxval
        return _scale_uniform(floats, shape, minval, maxval)
    minval = lax.convert_element_type(jnp.asarray(minval), dtype)
    maxval = lax.convert_element_type(jnp.asarray(maxval), dtype)
    minval = lax.broadcast_to_rank(minval, len(shape)) if minval.ndim else minval
    maxval = lax.broadcast_to_rank(maxval, len(shape)) if maxval.ndim else maxval
    finfo = _fdtype(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    rng_bits = 8 if nmant < 8 else nbits
    raw = random_bits(key, rng_bits, shape)
    uint_dtype = UINT_DTYPES[nbits]
    if rng_bits != nbits:
        raw = lax.convert_element_type(raw, uint_dtype)
    fbits = lax.shift_right_logical(raw, const(raw, rng_bits - nmant))
    one_bits = int(np.array(1.0, dtype).view(uint_dtype))
    fbits = lax.bitwise_or(fbits, const(fbits, one_bits))
    floats = lax.sub(bitcast_convert_type_p.bind(fbits, new_dtype=np.dtype(dtype)),
                     const(minval, 1.0))
    return _scale_uniform(floats, shape, minval, maxval)


def _scale_uniform(floats, shape, minval, maxval):
    # XLA contracts this multiply-add into an FMA: do the same for identical roundings
    # (float32 only: narrower floats are multiplied and added with a rounding in between)
    if floats.dtype == np.float32:
        scaled = fma(floats, lax.sub(maxval, minval), minval)
    else:
        scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
    return lax.max(minval, lax.reshape(scaled, shape) if scaled.shape != shape else scaled)


# ----------------------------------------------------------------------------- normal

def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal samples (real or complex dtype)."""
    key, _ = check_prng_key("normal", key)
    shape = canonicalize_shape(shape)
    dtype = user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError("dtype argument to `normal` must be a float or complex dtype, got "
                         f"{dtype}")
    return normal_typed(key, shape, dtype)


def normal_typed(key, shape, dtype):
    """normal() after argument checks."""
    if dtypes.issubdtype(dtype, np.complexfloating):
        sqrt2 = np.array(np.sqrt(2), dtype)
        k_re, k_im = split_key(key)
        real_dtype = np.array(0, dtype).real.dtype
        re = _normal_real(k_re, shape, real_dtype).astype(dtype)
        im = _normal_real(k_im, shape, real_dtype).astype(dtype)
        return (re + 1j * im) / sqrt2
    return _normal_real(key, shape, dtype)


def _normal_real(key, shape, dtype):
    if _fused(key) and dtype == np.float32:
        return threefry_sample(key._base_array, "normal", shape, dtype)
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = uniform_typed(key, shape, dtype, lo, np.array(1.0, dtype))
    return lax.mul(const(u, np.sqrt(2)), erf_inv(u))


def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal samples truncated to ``[lower, upper]``."""
    if shape is not None:
        shape = canonicalize_shape(shape)
    key, _ = check_prng_key("truncated_normal", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("truncated_normal", dtype)
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(lower), np.shape(upper)))
    else:
        check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    sqrt2 = lax.full((), np.sqrt(2), dtype)
    lower = lax.convert_element_type(jnp.asarray(lower), dtype)
    upper = lax.convert_element_type(jnp.asarray(upper), dtype)
    a = erf(lower / sqrt2)
    b = erf(upper / sqrt2)
    u = uniform_typed(key, shape, dtype, a, b)
    out = sqrt2 * erf_inv(u)
    return jnp.clip(out, lax.nextafter(lax.stop_gradient(lower), lax.full_like(lower, np.inf)),
                    lax.nextafter(lax.stop_gradient(upper), lax.full_like(upper, -np.inf)))


# --------------------------------------------------------------------------- discrete

def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """Boolean samples that are True with probability ``p``."""
    if shape is not None:
        shape = canonicalize_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    key, _ = check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p, canonicalize=True)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = lax.convert_element_type(jnp.asarray(p), dtype)
    if shape is None:
        shape = tuple(np.shape(p))
    else:
        check_shape("bernoulli", shape, np.shape(p))
    if mode == "high":
        u = uniform_typed(key, (2, *shape), dtype)
        u1, u2 = u[0], u[1]
        u2 = u2 * const(u2, 2 ** (-_fdtype(dtype).nmant))
        return u2 < p - u1
    return uniform_typed(key, shape, dtype) < p


def _saturating_cast(val, dtype):
    """Convert integer ``val`` to ``dtype``, first clamping it into the range both
    dtypes can represent (so out-of-range values saturate instead of wrapping)."""
    src, dst = dtypes.iinfo(val.dtype), dtypes.iinfo(dtype)
    lo = max(int(src.min), int(dst.min))
    hi = min(int(src.max), int(dst.max))
    clamped = jnp.clip(val, lax.full((), lo, val.dtype), lax.full((), hi, val.dtype))
    return lax.convert_element_type(clamped, dtype)


def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Uniform integers in ``[minval, maxval)``."""
    key, _ = check_prng_key("randint", key)
    dtype = user_dtype(dtype, int)
    shape = canonicalize_shape(shape)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    sample_dtype = dtype
    if info.bits < 32:
        sample_dtype = np.dtype("int32")
        minval = jnp.asarray(minval).astype("int32").clip(int(info.min), int(info.max))
        maxval = jnp.asarray(maxval).astype("int32").clip(int(info.min), int(info.max) + 1)
    return _randint(key, shape, minval, maxval, sample_dtype).astype(dtype)


def _as_integer_array(v):
    v = jnp.asarray(v)
    return v if dtypes.issubdtype(v.dtype, np.integer) else v.astype(int)


def _randint(key, shape, minval, maxval, dtype):
    """Integers in [minval, maxval) from two words of random bits.

    With span = maxval - minval (as an unsigned integer), the two words hi and lo are
    combined as (hi * 2**nbits + lo) mod span, evaluated without overflow as
    ((hi mod span) * (2**nbits mod span) + lo mod span) mod span; the bias of reducing a
    2*nbits-bit number is negligible.  A maxval beyond the dtype's largest value means
    "up to and including" that value, so the span grows by one."""
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    lo_arg, hi_arg = _as_integer_array(minval), _as_integer_array(maxval)
    info = dtypes.iinfo(dtype)
    # Decided on the caller's maxval, before it is clamped into dtype.
    includes_top = lax.gt(hi_arg, _saturating_cast(jnp.array(info.max, dtype), hi_arg.dtype))
    low = lax.broadcast_to_rank(_saturating_cast(lo_arg, dtype), len(shape))
    high = lax.broadcast_to_rank(_saturating_cast(hi_arg, dtype), len(shape))
    nbits = info.bits
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    hi_key, lo_key = split_key(key)
    hi_word = random_bits(hi_key, nbits, shape)
    lo_word = random_bits(lo_key, nbits, shape)

    empty = high <= low
    span = lax.convert_element_type(high - low, UINT_DTYPES[nbits])
    span = jnp.where(empty, jnp.ones_like(span), span)
    span = jnp.where(includes_top & ~empty, span + const(span, 1), span)
    # 2**nbits mod span, built as (2**(nbits/2) mod span)**2 mod span.
    half_power = lax.rem(const(span, 2 ** (nbits // 2)), span)
    word_weight = lax.rem(lax.mul(half_power, half_power), span)
    combined = jnp.remainder(hi_word, span) * word_weight + jnp.remainder(lo_word, span)
    return low + lax.convert_element_type(jnp.remainder(combined, span), dtype)


def _shuffle(key, x, axis):
    """Shuffle ``x`` along ``axis`` by sorting it on random 32-bit keys.

    Ties between sort keys would bias the permutation, so the sort is repeated with fresh
    keys enough times that, for n elements, the chance of any tie surviving all rounds
    is about n**3 / 2**(32 r), i.e. r = ceil(3 log n / log(2**32 - 1)) rounds."""
    n = max(1, x.size)
    rounds = int(np.ceil(3 * np.log(n) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, round_key = split_key(key)
        sort_keys = random_bits(round_key, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """A random permutation of ``x`` along ``axis`` (or of ``arange(x)`` for an int)."""
    key, _ = check_prng_key("permutation", key)
    if not isinstance(x, (int, np.integer)) and not hasattr(x, "shape"):
        raise TypeError(f"permutation requires ndarray or scalar arguments, got {type(x)} "
                        "at position 1.")
    ndim = np.ndim(x)
    axis = _canon_axis(axis, ndim or 1)
    if not ndim:
        if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        if isinstance(x, Tracer):
            from jaxlite._src.core import errors
            raise errors.ConcretizationTypeError(
                x, "argument x of jax.random.permutation()")
        return _shuffle(key, jnp.arange(int(x)), axis)
    x = jnp.asarray(x)
    if independent or ndim == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


def _canon_axis(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random samples from ``a`` (an int n means ``arange(n)``), optionally weighted by
    ``p`` and with or without replacement."""
    key, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError("shape argument of jax.random.choice must be a sequence, got "
                        f"{shape}")
    shape = tuple(shape)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(a)
    else:
        axis = _canon_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                         f"(size {n_inputs}) when 'replace=False'")
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        p_arr = jnp.asarray(p)
        if not dtypes.issubdtype(p_arr.dtype, np.inexact):
            p_arr = p_arr.astype(dtypes.default_float_dtype())
        if p_arr.shape != (n_inputs,):
            raise ValueError("p must be None or a 1D vector with the same size as "
                             f"a.shape[axis]. p has shape {p_arr.shape} and a.shape[axis] is "
                             f"{n_inputs}.")
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform_typed(key, shape, p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            g = gumbel(key, (n_inputs,), dtype=p_arr.dtype, mode=mode) + jnp.log(p_arr)
            ind = lax.top_k(g, n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(shape if arr.ndim == 0 else
                          arr.shape[0:axis] + tuple(shape) + arr.shape[axis + 1:])


# ------------------------------------------------------------------ gumbel/categorical

def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Standard Gumbel samples (``mode`` 'low' by default, or 'high'/'highest')."""
    key, _ = check_prng_key("gumbel", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("gumbel", dtype)
    shape = canonicalize_shape(shape)
    if mode is None:
        mode = "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return gumbel_typed(key, shape, dtype, mode)


def gumbel_typed(key, shape, dtype, mode="low"):
    """gumbel() after argument checks."""
    info = _fdtype(dtype)
    if mode in ("high", "highest"):
        # ('highest' for float32 uses a 64-bit construction in JAX; jaxlite uses 'high')
        u = uniform_typed(key, (2,) + shape, dtype, 0.0, 1.0)
        high, low = u[0], u[1]
        x = jnp.where(high >= 0.5, high,
                      high + const(high, 2 ** (-info.nmant)) * low + const(high, info.tiny))
        return -jnp.log(-jnp.log1p(-x))
    u = uniform_typed(key, shape, dtype, np.array(info.tiny, dtype), 1.0)
    return -jnp.log(-jnp.log(u))


def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *,
                out_sharding=None):
    """Samples of category indices with log-probabilities ``logits`` along ``axis``."""
    key, _ = check_prng_key("categorical", key)
    logits_arr = jnp.asarray(logits)
    if axis >= 0:
        axis -= logits_arr.ndim
    batch_shape = tuple(np.delete(logits_arr.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = canonicalize_shape(shape)
        check_shape("categorical", shape, batch_shape)
    mode = "low" if mode is None else mode
    shape_prefix = shape[:len(shape) - len(batch_shape)]
    if replace:
        logits_shape = list(shape[len(shape) - len(batch_shape):])
        logits_shape.insert(axis % logits_arr.ndim, logits_arr.shape[axis])
        g = gumbel_typed(key, (*shape_prefix, *logits_shape), logits_arr.dtype, mode)
        return jnp.argmax(g + lax.expand_dims(logits_arr, tuple(range(len(shape_prefix)))),
                          axis=axis)
    logits_arr = logits_arr + gumbel_typed(key, logits_arr.shape, logits_arr.dtype, mode)
    k = math.prod(shape_prefix)
    if k > logits_arr.shape[axis]:
        raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                         f"of categories ({logits_arr.shape[axis]}).")
    _, indices = lax.top_k(jnp.moveaxis(logits_arr, axis, -1), k)
    dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, shape, dimensions)


# ------------------------------------------------------------ continuous transforms

def _simple(name):
    def wrapper(fn):
        def sampler(key, shape=(), dtype=None, *, out_sharding=None):
            key, _ = check_prng_key(name, key)
            dtype = user_dtype(dtype, float)
            _float_dtype_check(name, dtype)
            return fn(key, canonicalize_shape(shape), dtype)
        sampler.__name__ = sampler.__qualname__ = name
        sampler.__doc__ = fn.__doc__
        return sampler
    return wrapper


@_simple("exponential")
def exponential(key, shape, dtype):
    """Standard exponential samples."""
    return exponential_typed(key, shape, dtype)


def exponential_typed(key, shape, dtype):
    """exponential() after argument checks."""
    u = uniform_typed(key, shape, dtype)
    return lax.neg(lax.log1p(lax.neg(u)))


@_simple("laplace")
def laplace(key, shape, dtype):
    """Standard Laplace samples."""
    u = uniform_typed(key, shape, dtype, -1.0 + _fdtype(dtype).epsneg, 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@_simple("logistic")
def logistic(key, shape, dtype):
    """Standard logistic samples."""
    x = uniform_typed(key, shape, dtype, np.array(_fdtype(dtype).tiny, dtype), 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


@_simple("cauchy")
def cauchy(key, shape, dtype):
    """Standard Cauchy samples."""
    u = uniform_typed(key, shape, dtype, np.array(_fdtype(dtype).eps, dtype), 1.0)
    return lax.tan(lax.mul(const(u, np.pi), lax.sub(u, const(u, 0.5))))


def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Random signs (-1 or +1) with equal probability."""
    key, _ = check_prng_key("rademacher", key)
    dtype = user_dtype(dtype, int)
    shape = canonicalize_shape(shape)
    b = bernoulli(key, 0.5, shape).astype(dtype)
    return (2 * b - 1).astype(dtype)


@_simple("maxwell")
def maxwell(key, shape, dtype):
    """Maxwell (chi with 3 degrees of freedom) samples."""
    return jnp.linalg.norm(normal_typed(key, shape + (3,), dtype), axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples with location ``loc`` and scale ``scale``."""
    key, _ = check_prng_key("double_sided_maxwell", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("double_sided_maxwell", dtype)
    shape = canonicalize_shape(shape)
    params_shapes = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    if not shape:
        shape = params_shapes
    shape = shape + params_shapes
    maxwell_key, rademacher_key = split_key(key)
    maxwell_rvs = maxwell(maxwell_key, shape, dtype)
    random_sign = rademacher(rademacher_key, shape, dtype)
    return random_sign * maxwell_rvs * scale + loc


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples with ``scale`` and ``concentration``."""
    key, _ = check_prng_key("weibull_min", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("weibull_min", dtype)
    shape = canonicalize_shape(shape)
    u = uniform_typed(key, shape, dtype, 0, 1)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh samples with ``scale``."""
    key, _ = check_prng_key("rayleigh", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("rayleigh", dtype)
    shape = check_broadcast_shapes("rayleigh", shape, scale)
    check_safe_cast("rayleigh", dtype, scale)
    u = uniform_typed(key, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), const(scale, -2))))


def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) samples with ``mean``."""
    key, _ = check_prng_key("wald", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("wald", dtype)
    shape = check_broadcast_shapes("wald", shape, mean)
    check_safe_cast("wald", dtype, mean)
    k1, k2 = split_key(key)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = normal_typed(k1, shape, dtype)
    z = uniform_typed(k2, shape, dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Geometric samples (number of trials to the first success, ``p`` per trial)."""
    key, _ = check_prng_key("geometric", key)
    dtype = user_dtype(dtype, int)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = check_broadcast_shapes("geometric", shape, p)
    p = jnp.asarray(p)
    if not dtypes.issubdtype(p.dtype, np.inexact):
        p = p.astype(dtypes.default_float_dtype())
    u = uniform_typed(key, shape, p.dtype)
    u = jnp.where(u == 0, jnp.ones_like(u), u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    g = lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1
    return g.astype(dtype)


def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular samples on ``[left, right]`` peaking at ``mode``."""
    key, _ = check_prng_key("triangular", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("triangular", dtype)
    shape = check_broadcast_shapes("triangular", shape, left, mode, right)
    check_safe_cast("triangular", dtype, left, mode, right)
    left = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(left), dtype), shape)
    right = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(right), dtype), shape)
    mode = jnp.broadcast_to(lax.convert_element_type(jnp.asarray(mode), dtype), shape)
    fc = (mode - left) / (right - left)
    u = uniform_typed(key, shape, dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
    """Log-normal samples: ``exp(sigma * normal)``."""
    key, _ = check_prng_key("lognormal", key)
    dtype = user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dtype}")
    shape = check_broadcast_shapes("lognormal", shape, sigma)
    check_safe_cast("lognormal", dtype, sigma)
    sigma = lax.convert_element_type(jnp.asarray(sigma), dtype)
    return lax.exp(normal_typed(key, shape, dtype) * sigma)


def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto samples with shape parameter ``b``."""
    key, _ = check_prng_key("pareto", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("pareto", dtype)
    shape = check_broadcast_shapes("pareto", shape, b)
    check_safe_cast("pareto", dtype, b)
    b = lax.convert_element_type(jnp.asarray(b), dtype)
    e = exponential_typed(key, shape, dtype)
    return lax.exp(e / b)


# ------------------------------------------------------------------------ multivariate

def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky", *,
                        out_sharding=None):
    """Multivariate normal samples with ``mean`` (..., n) and ``cov`` (..., n, n)."""
    key, _ = check_prng_key("multivariate_normal", key)
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    dt = jnp.result_type(mean, cov)
    if not dtypes.issubdtype(dt, np.inexact):
        dt = dtypes.default_float_dtype()
    mean, cov = mean.astype(dt), cov.astype(dt)
    if method not in {"svd", "eigh", "cholesky"}:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else user_dtype(dtype, float)
    _float_dtype_check("multivariate_normal", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    if not mean.ndim >= 1:
        raise ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == "
                         f"{mean.ndim}")
    if not cov.ndim >= 2:
        raise ValueError("multivariate_normal requires cov.ndim >= 2, got cov.ndim == "
                         f"{cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
                         f"but got cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    samples = normal_typed(key, shape + mean.shape[-1:], dtype)
    return mean + jnp.einsum("...ij,...j->...i", factor, samples)


def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Random (semi-)orthogonal matrices of shape (*shape, n, m), Haar distributed."""
    key, _ = check_prng_key("orthogonal", key)
    dtype = user_dtype(dtype, float)
    shape = canonicalize_shape(shape)
    _m = n if m is None else m
    n, _m = int(n), int(_m)
    z = normal_typed(key, (*shape, max(n, _m), min(n, _m)), dtype)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < _m else x
