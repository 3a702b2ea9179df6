"""The samplers of ``jax.random`` that need no rejection loop: bits, uniform, normal,
truncated_normal, bernoulli, randint, permutation, choice, gumbel, categorical, rademacher
and the closed-form transforms of uniform and normal draws (exponential, laplace, logistic,
cauchy, maxwell, double_sided_maxwell, weibull_min, rayleigh, wald, geometric, triangular,
lognormal, pareto; multivariate_normal and orthogonal are in ``multivariate.py``).

Each sampler consumes its key and performs its float arithmetic operation for operation
as JAX's compiled sampler does, so the samples are JAX's bit for bit: the transcendental
functions and the multiply-adds that XLA fuses come from ``xla_ops`` (same primitives and
jaxpr text as lax, XLA:CPU's float32 rounding). Everything is lax/jnp operations on the
key's data, so the samplers work eagerly, under jit, vmap (over keys) and grad.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from jaxlite._src.api.sharding_types import place_as, with_out_sharding
from jaxlite._src.sharding.types import resolve_out_sharding
from jaxlite._src.lax import namespace as lax
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.config import config
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.numpy.util import (asarray_value, promote_args, promote_args_inexact,
                                     promote_args_numeric, promote_shapes)
from jaxlite._src.prims.elementwise import bitcast_convert_type_p
from jaxlite._src.random import prng
from jaxlite._src.random import xla_ops as xo
from jaxlite._src.random.fused import sampled_as, threefry_sample
from jaxlite._src.random.keys import check_prng_key
from jaxlite._src.random.special import erf, erf_inv, fma
from jaxlite._src.random.threefry import UINT_DTYPES

__all__ = ["bits", "uniform", "normal", "truncated_normal", "bernoulli", "randint",
           "permutation", "choice", "gumbel", "categorical", "exponential", "laplace",
           "logistic", "cauchy", "rademacher", "maxwell", "double_sided_maxwell",
           "weibull_min", "rayleigh", "wald", "geometric", "triangular", "lognormal",
           "pareto"]


# ------------------------------------------------------------------- argument handling

def canonicalize_shape(shape, name="shape"):
    """``shape`` as a tuple of Python ints (JAX's TypeError for traced sizes)."""
    if isinstance(shape, Tracer):
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.")
    dims = (shape,) if not isinstance(shape, Sequence) and np.ndim(shape) == 0 else shape
    if any(isinstance(d, Tracer) for d in dims):
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {tuple(dims)}.")
    return tuple(int(d) for d in dims)


def user_dtype(dtype, default):
    """The canonical dtype a dtype argument names (``default`` for None; ``float``/``int``
    mean the default float/int dtype)."""
    dtype = default if dtype is None else dtype
    if dtype is float:
        return dtypes.default_float_dtype()
    if dtype is int:
        return dtypes.default_int_dtype()
    dtypes.check_user_dtype_supported(dtype)
    return np.dtype(dtypes.canonicalize_dtype(dtype))


def check_shape(name, shape, *param_shapes):
    """JAX's ValueError unless the parameter shapes broadcast to exactly ``shape``."""
    if not param_shapes:
        return
    joint = np.broadcast_shapes(shape, *param_shapes)
    if tuple(joint) != tuple(shape):
        raise ValueError(
            f"{name} parameter shapes must be broadcast-compatible with shape argument, "
            "and the result of broadcasting the shapes must equal the shape argument, "
            f"but got result {joint} for shape argument {shape}.")


def check_broadcast_shapes(name, shape, *args):
    """The sample shape: ``shape`` checked against the parameters, or their broadcast."""
    param_shapes = [np.shape(a) for a in args]
    if shape is not None:
        shape = canonicalize_shape(shape)
        check_shape(name, shape, *param_shapes)
        return shape
    return tuple(np.broadcast_shapes(*param_shapes)) if param_shapes else ()


def check_safe_cast(name, dtype, *args):
    """JAX's TypePromotionError for a parameter that cannot be cast to ``dtype`` safely: the
    cast is safe when promoting the parameter with ``dtype`` gives ``dtype``: integer and
    bool parameters go to any float, a weakly typed float to any float, a float only to
    one at least as wide (float64 to float32 only without x64), complex never."""
    dtype = np.dtype(dtype)
    for a in args:
        src = dtypes.dtype(a)
        if src != dtype and dtypes.result_type(a, dtype) != dtype:
            raise dtypes.TypePromotionError(
                f"In arguments to {name}, cannot safely cast argument of type {src} to "
                f"{dtype}")


def _float_dtype_check(name, dtype):
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")


def _float_args(name, key, dtype):
    """The key checked and a float dtype resolved (the start of most samplers)."""
    key, _ = check_prng_key(name, key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check(name, dtype)
    return key, dtype


def const(x, v, dtype=None):
    """A rank-0 constant ``v`` of ``x``'s dtype (or of ``dtype``)."""
    return lax.full((), v, x.dtype if dtype is None else dtype)


def _as(x, dtype):
    return lax.convert_element_type(jnp.asarray(x), dtype)


def random_bits(key, bit_width, shape):
    """Raw random bits for one typed key."""
    return prng.random_bits(key, bit_width, shape)


def split_key(key, num=2):
    """``num`` typed subkeys of a typed key (as a key array)."""
    return prng.random_split(key, (num,))


def _fused(key):
    """Whether samples of ``key`` come from the fused ``threefry_sample`` kernel."""
    return prng.key_impl_of(key) is prng.threefry_prng_impl and config.jax_threefry_partitionable


# --------------------------------------------------------------------------------- bits

def _drawn_as(out_sharding, shape, draw):
    """``draw()`` laid out by ``out_sharding``; eagerly, partitionable Threefry samples of
    ``shape`` are drawn shard by shard (the same values as unsharded)."""
    if out_sharding is None:
        return draw()
    s = resolve_out_sharding(out_sharding)
    from jaxlite._src.sharding.mesh import Mesh
    if config.jax_threefry_partitionable and isinstance(getattr(s, "mesh", None), Mesh) and \
            _divides(s, shape):
        with sampled_as(s, shape):
            return place_as(draw(), s)
    return place_as(draw(), s)


def _divides(sharding, shape):
    try:
        pieces = sharding._tile_cached(len(shape)).shape[:-1]
    except ValueError:
        return False
    return all(n % p == 0 for n, p in zip(shape, pieces))


def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Uniform random bits of an unsigned integer dtype (uint32 by default)."""
    key, _ = check_prng_key("bits", key)
    dtype = user_dtype(dtype, dtypes.default_uint_dtype())
    if not dtypes.issubdtype(dtype, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    shape = canonicalize_shape(shape)
    return _drawn_as(out_sharding, shape, lambda: random_bits(key, dtype.itemsize * 8, shape))


# ------------------------------------------------------------------------------ uniform

_FUSED_FLOATS = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in ``[minval, maxval)``."""
    key, _ = check_prng_key("uniform", key)
    dtype = user_dtype(dtype, float)
    shape = canonicalize_shape(shape)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `uniform` must be a float dtype, got {dtype}")
    return _drawn_as(out_sharding, shape,
                     lambda: uniform_typed(key, shape, dtype, minval, maxval))


def _unit_floats(key, shape, dtype):
    """Floats in [0, 1) from the top mantissa bits of random words: ``1.m - 1``."""
    if _fused(key) and dtype in _FUSED_FLOATS:
        return threefry_sample(prng.key_data_of(key), "uniform", shape, dtype)
    info = dtypes.finfo(dtype)
    width, nmant = info.bits, info.nmant
    if width not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    word_bits = width if nmant >= 8 else 8
    words = random_bits(key, word_bits, shape)
    udt = UINT_DTYPES[width]
    if word_bits != width:
        words = lax.convert_element_type(words, udt)
    mantissa = lax.shift_right_logical(words, const(words, word_bits - nmant))
    one = np.array(1.0, dtype)
    one_to_two = lax.bitwise_or(mantissa, const(mantissa, int(one.view(udt))))
    return lax.sub(bitcast_convert_type_p.bind(one_to_two, new_dtype=np.dtype(dtype)),
                   lax.full((), 1.0, dtype))


def _bound(v, dtype, rank):
    v = _as(v, dtype)
    return lax.broadcast_to_rank(v, rank) if v.ndim else v


def uniform_typed(key, shape, dtype, minval=0.0, maxval=1.0):
    """uniform() after argument checks (``key`` typed, ``shape`` a tuple)."""
    dtype = np.dtype(dtype)
    if _fused(key) and dtype in _FUSED_FLOATS:
        u = _unit_floats(key, shape, dtype)
        if type(minval) is float and type(maxval) is float and (minval, maxval) == (0., 1.):
            return u                                # max(0, u * 1 + 0) is u
        lo, hi = _bound(minval, dtype, len(shape)), _bound(maxval, dtype, len(shape))
    else:
        lo, hi = _bound(minval, dtype, len(shape)), _bound(maxval, dtype, len(shape))
        u = _unit_floats(key, shape, dtype)
    width = lax.sub(hi, lo)
    # one rounding for float32, where XLA fuses the multiply-add
    y = fma(u, width, lo) if u.dtype == np.float32 else lax.add(lax.mul(u, width), lo)
    return lax.max(lo, y if y.shape == shape else lax.reshape(y, shape))


# ------------------------------------------------------------------------------- normal

def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Standard normal samples (real or complex dtype)."""
    key, _ = check_prng_key("normal", key)
    shape = canonicalize_shape(shape)
    dtype = user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError("dtype argument to `normal` must be a float or complex dtype, got "
                         f"{dtype}")
    return _drawn_as(out_sharding, shape, lambda: normal_typed(key, shape, dtype))


def _std_normal(key, shape, dtype):
    """sqrt(2) erfinv(u) for u uniform in (-1, 1)."""
    if _fused(key) and dtype == np.float32:
        return threefry_sample(prng.key_data_of(key), "normal", shape, dtype)
    above_minus_one = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = uniform_typed(key, shape, dtype, above_minus_one, np.array(1.0, dtype))
    return lax.mul(const(u, np.sqrt(2)), erf_inv(u))


def normal_typed(key, shape, dtype):
    """normal() after argument checks; a complex normal has independent real and imaginary
    parts of variance 1/2."""
    if not dtypes.issubdtype(dtype, np.complexfloating):
        return _std_normal(key, shape, dtype)
    part_dtype = np.array(0, dtype).real.dtype
    parts = [_std_normal(k, shape, part_dtype).astype(dtype) for k in split_key(key)]
    return (parts[0] + 1j * parts[1]) / np.array(np.sqrt(2), dtype)


@with_out_sharding
def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Normal samples truncated to ``[lower, upper]`` (by inverting the normal CDF)."""
    if shape is not None:
        shape = canonicalize_shape(shape)
    key, dtype = _float_args("truncated_normal", key, dtype)
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(lower), np.shape(upper)))
    else:
        check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
    root2 = lax.full((), np.sqrt(2), dtype)
    lower, upper = _as(lower, dtype), _as(upper, dtype)
    cdf_lo = erf(jnp_divide_by_broadcast(lower, root2))
    cdf_hi = erf(jnp_divide_by_broadcast(upper, root2))
    draws = root2 * erf_inv(uniform_typed(key, shape, dtype, cdf_lo, cdf_hi))
    # keep rounding from landing on (or past) the bounds
    inner_lo = lax.nextafter(lax.stop_gradient(lower), lax.full_like(lower, np.inf))
    inner_hi = lax.nextafter(lax.stop_gradient(upper), lax.full_like(upper, -np.inf))
    return jnp.clip(draws, inner_lo, inner_hi)


# ----------------------------------------------------------------------------- discrete

@with_out_sharding
def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """Boolean samples that are True with probability ``p`` ('high' mode resolves small
    probabilities with a second uniform)."""
    if shape is not None:
        shape = canonicalize_shape(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    key, _ = check_prng_key("bernoulli", key)
    dtype = dtypes.dtype(p, canonicalize=True)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = _as(p, dtype)
    if shape is None:
        shape = tuple(np.shape(p))
    else:
        check_shape("bernoulli", shape, np.shape(p))
    if mode == "low":
        return uniform_typed(key, shape, dtype) < p
    pair = uniform_typed(key, (2, *shape), dtype)
    coarse, fine = pair[0], pair[1]
    fine = fine * const(fine, 2 ** (-dtypes.finfo(dtype).nmant))
    return fine < p - coarse


@with_out_sharding
def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Random signs (-1 or +1) with equal probability."""
    key, _ = check_prng_key("rademacher", key)
    dtype = user_dtype(dtype, int)
    coin = bernoulli(key, 0.5, canonicalize_shape(shape)).astype(dtype)
    return (2 * coin - 1).astype(dtype)


def _clamp_cast(val, dtype):
    """Integer ``val`` converted to ``dtype``, saturating at the range both can hold."""
    a, b = dtypes.iinfo(val.dtype), dtypes.iinfo(dtype)
    lo, hi = max(int(a.min), int(b.min)), min(int(a.max), int(b.max))
    return lax.convert_element_type(
        jnp.clip(val, lax.full((), lo, val.dtype), lax.full((), hi, val.dtype)), dtype)


@with_out_sharding
def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Uniform integers in ``[minval, maxval)``."""
    key, _ = check_prng_key("randint", key)
    dtype = user_dtype(dtype, int)
    shape = canonicalize_shape(shape)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    work = dtype
    if info.bits < 32:          # narrow dtypes draw int32 values from the clipped range
        work = np.dtype("int32")
        minval = jnp.asarray(minval).astype(work).clip(int(info.min), int(info.max))
        maxval = jnp.asarray(maxval).astype(work).clip(int(info.min), int(info.max) + 1)
    return _integers(key, shape, minval, maxval, work).astype(dtype)


def _int_array(v):
    v = jnp.asarray(v)
    return v if dtypes.issubdtype(v.dtype, np.integer) else v.astype(int)


def _integers(key, shape, minval, maxval, dtype):
    """Integers in [minval, maxval) as (two random words read as one 2n-bit number) mod
    span, where span = maxval - minval (plus one when maxval exceeds the dtype, which
    means "up to the largest value"). With n-bit words hi, lo and w = 2**n mod span the
    remainder is ((hi mod span) w + lo mod span) mod span, and w = (2**(n/2) mod span)**2
    mod span, so nothing overflows."""
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    lo_in, hi_in = _int_array(minval), _int_array(maxval)
    info = dtypes.iinfo(dtype)
    past_top = lax.gt(hi_in, _clamp_cast(jnp.array(info.max, dtype), hi_in.dtype))
    lo = lax.broadcast_to_rank(_clamp_cast(lo_in, dtype), len(shape))
    hi = lax.broadcast_to_rank(_clamp_cast(hi_in, dtype), len(shape))
    n = info.bits
    if n not in (8, 16, 32, 64):
        raise TypeError(f"randint only accepts 8-, 16-, 32-, or 64-bit dtypes, got {dtype}")
    hi_key, lo_key = split_key(key)
    hi_word = random_bits(hi_key, n, shape)
    lo_word = random_bits(lo_key, n, shape)
    empty = hi <= lo
    span = lax.convert_element_type(hi - lo, UINT_DTYPES[n])
    span = jnp.where(empty, jnp.ones_like(span), span)
    span = jnp.where(past_top & ~empty, span + const(span, 1), span)
    root = lax.rem(const(span, 2 ** (n // 2)), span)
    weight = lax.rem(lax.mul(root, root), span)
    mixed = jnp.remainder(hi_word, span) * weight + jnp.remainder(lo_word, span)
    return lo + lax.convert_element_type(jnp.remainder(mixed, span), dtype)


def _sort_shuffle(key, x, axis):
    """``x`` permuted along ``axis`` by sorting it on fresh random 32-bit words, repeated
    so that ties (which would bias it) survive all rounds with probability about
    n**3 / 2**(32 rounds): rounds = ceil(3 log n / log(2**32 - 1))."""
    count = max(1, x.size)
    rounds = int(np.ceil(3 * np.log(count) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        key, this_round = split_key(key)
        _, x = lax.sort_key_val(random_bits(this_round, 32, x.shape), x, axis)
    return x


def _axis_index(axis, ndim):
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


@with_out_sharding
def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """A random permutation of ``x`` along ``axis`` (of ``arange(x)`` for an int)."""
    key, _ = check_prng_key("permutation", key)
    if not isinstance(x, (int, np.integer)) and not hasattr(x, "shape"):
        raise TypeError(f"permutation requires ndarray or scalar arguments, got {type(x)} "
                        "at position 1.")
    ndim = np.ndim(x)
    axis = _axis_index(axis, ndim or 1)
    if ndim:
        x = jnp.asarray(x)
        if independent or ndim == 1:
            return _sort_shuffle(key, x, axis)
        order = _sort_shuffle(key, jnp.arange(x.shape[axis]), 0)
        return jnp.take(x, order, axis, unique_indices=True)
    if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
        raise TypeError("x must be an integer or at least 1-dimensional")
    if isinstance(x, Tracer):
        from jaxlite._src.core import errors
        raise errors.ConcretizationTypeError(x, "argument x of jax.random.permutation()")
    return _sort_shuffle(key, jnp.arange(int(x)), axis)


def _weights(p, n):
    w = jnp.asarray(p)
    if not dtypes.issubdtype(w.dtype, np.inexact):
        w = w.astype(dtypes.default_float_dtype())
    if w.shape != (n,):
        raise ValueError("p must be None or a 1D vector with the same size as "
                         f"a.shape[axis]. p has shape {w.shape} and a.shape[axis] is {n}.")
    return w


def _choose_indices(key, n, shape, replace, p, mode, pool):
    """Indices into a population of ``n`` (``pool`` the array to permute when drawing
    unweighted without replacement)."""
    count = math.prod(shape)
    if p is None:
        if replace:
            return randint(key, shape, 0, n), False
        return permutation(key, pool[0], pool[1])[pool[2]], True
    w = _weights(p, n)
    if replace:
        cum = jnp.cumsum(w)
        target = cum[-1] * (1 - uniform_typed(key, shape, cum.dtype))
        return jnp.searchsorted(cum, target).astype(int), False
    # the largest Gumbel-perturbed log-weights are a weighted draw without replacement
    scores = gumbel(key, (n,), dtype=w.dtype, mode=mode) + xo.log(w)
    return lax.top_k(scores, count)[1].astype(int), False


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Random samples from ``a`` (an int n means ``arange(n)``), optionally weighted by
    ``p`` and with or without replacement."""
    key, _ = check_prng_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError("shape argument of jax.random.choice must be a sequence, got "
                        f"{shape}")
    shape = tuple(shape)
    pop = jnp.asarray(a)
    scalar = pop.ndim == 0
    if not scalar:
        axis = _axis_index(axis, pop.ndim)
    n = int(a) if scalar else pop.shape[axis]
    count = math.prod(shape)
    if count == 0:
        return jnp.zeros(shape, dtype=pop.dtype)
    if n <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and count > n:
        raise ValueError(f"Cannot take a larger sample (size {count}) than population "
                         f"(size {n}) when 'replace=False'")
    head = (slice(None),) * axis + (slice(count),)
    picked, taken = _choose_indices(key, n, shape, replace, p, mode,
                                    (n if scalar else pop, axis, head))
    if not (scalar or taken):
        picked = jnp.take(pop, picked, axis)
    out_shape = shape if scalar else pop.shape[:axis] + shape + pop.shape[axis + 1:]
    return picked.reshape(out_shape)


# ------------------------------------------------------------------ gumbel/categorical

@with_out_sharding
def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Standard Gumbel samples (``mode`` 'low' by default, or 'high'/'highest')."""
    key, dtype = _float_args("gumbel", key, dtype)
    shape = canonicalize_shape(shape)
    if mode is None:
        mode = "high" if config.jax_high_dynamic_range_gumbel else "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError("Must provide valid mode for gumbel got: %s" % mode)
    return gumbel_typed(key, shape, dtype, mode)


def gumbel_typed(key, shape, dtype, mode="low"):
    """gumbel() after argument checks: -log(-log(u)). The 'high' modes build u from two
    uniforms (a coarse one refined by a second below 1/2) and use -log(-log1p(-u));
    'highest' is served as 'high' (JAX's float32 'highest' is a 64-bit construction)."""
    info = dtypes.finfo(dtype)
    if mode == "low":
        u = uniform_typed(key, shape, dtype, np.array(info.tiny, dtype), 1.0)
        return -xo.log(-xo.log(u))
    pair = uniform_typed(key, (2,) + shape, dtype, 0.0, 1.0)
    coarse, fine = pair[0], pair[1]
    u = jnp.where(coarse >= 0.5, coarse,
                  coarse + const(coarse, 2 ** (-info.nmant)) * fine + const(coarse, info.tiny))
    return -xo.log(-xo.log1p(-u))


@with_out_sharding
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *,
                out_sharding=None):
    """Category indices drawn with log-probabilities ``logits`` along ``axis`` (the argmax
    of Gumbel-perturbed logits; without replacement, the top k)."""
    key, _ = check_prng_key("categorical", key)
    logits = jnp.asarray(logits)
    if axis >= 0:
        axis -= logits.ndim
    batch = tuple(np.delete(logits.shape, axis))
    if shape is None:
        shape = batch
    else:
        shape = canonicalize_shape(shape)
        check_shape("categorical", shape, batch)
    mode = "low" if mode is None else mode
    lead = shape[:len(shape) - len(batch)]
    if not replace:
        perturbed = logits + gumbel_typed(key, logits.shape, logits.dtype, mode)
        k = math.prod(lead)
        if k > logits.shape[axis]:
            raise ValueError(f"Number of samples without replacement ({k}) cannot exceed "
                             f"number of categories ({logits.shape[axis]}).")
        _, top = lax.top_k(jnp.moveaxis(perturbed, axis, -1), k)
        return lax.reshape(top, shape, (top.ndim - 1, *range(top.ndim - 1)))
    noise_shape = list(shape[len(lead):])
    noise_shape.insert(axis % logits.ndim, logits.shape[axis])
    noise = gumbel_typed(key, (*lead, *noise_shape), logits.dtype, mode)
    return jnp.argmax(noise + lax.expand_dims(logits, tuple(range(len(lead)))), axis=axis)


# ------------------------------------------------------------------ closed-form transforms

def _simple(name):
    """The public signature (key, shape=(), dtype=None) around ``fn(key, shape, dtype)``."""
    def wrap(fn):
        def sampler(key, shape=(), dtype=None, *, out_sharding=None):
            key, dt = _float_args(name, key, dtype)
            return fn(key, canonicalize_shape(shape), dt)
        sampler.__name__ = sampler.__qualname__ = name
        sampler.__doc__ = fn.__doc__
        return with_out_sharding(sampler)
    return wrap


def exponential_typed(key, shape, dtype):
    """-log(1 - u): standard exponential draws (exponential() after argument checks)."""
    return lax.neg(xo.log1p(lax.neg(uniform_typed(key, shape, dtype))))


@_simple("exponential")
def exponential(key, shape, dtype):
    """Standard exponential samples."""
    return exponential_typed(key, shape, dtype)


@_simple("laplace")
def laplace(key, shape, dtype):
    """Standard Laplace samples: sign(u) log(1 - |u|) for u uniform in (-1, 1)."""
    u = uniform_typed(key, shape, dtype, -1.0 + dtypes.finfo(dtype).epsneg, 1.0)
    return lax.mul(lax.sign(u), xo.log1p(lax.neg(lax.abs(u))))


@_simple("logistic")
def logistic(key, shape, dtype):
    """Standard logistic samples: log(u / (1 - u))."""
    u = uniform_typed(key, shape, dtype, np.array(dtypes.finfo(dtype).tiny, dtype), 1.0)
    return lax.sub(xo.log(u), xo.log1p(lax.neg(u)))


@_simple("cauchy")
def cauchy(key, shape, dtype):
    """Standard Cauchy samples: tan(pi (u - 1/2))."""
    u = uniform_typed(key, shape, dtype, np.array(dtypes.finfo(dtype).eps, dtype), 1.0)
    return xo.tan(lax.mul(const(u, np.pi), lax.sub(u, const(u, 0.5))))


@_simple("maxwell")
def maxwell(key, shape, dtype):
    """Maxwell samples: the length of a standard normal 3-vector."""
    z = normal_typed(key, shape + (3,), dtype)
    if z.dtype != np.float32:
        return jnp.linalg.norm(z, axis=-1)
    if not _norm3_jit:
        from jaxlite._src.api.jit import jit
        _norm3_jit.append(jit(norm))
    return _norm3_jit[0](z)


_norm3_jit = []


def norm(v):
    """Euclidean length of float32 3-vectors along the last axis (``jnp.linalg.norm(v,
    axis=-1)``) with the fused multiply-adds of XLA:CPU's reduction loop."""
    return lax.sqrt(xo.sum_last3(xo.mul(v, v)))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Double-sided Maxwell samples (a Maxwell length with a random sign) with location
    ``loc`` and scale ``scale``."""
    key, dtype = _float_args("double_sided_maxwell", key, dtype)
    param_shape = tuple(np.broadcast_shapes(np.shape(loc), np.shape(scale)))
    shape = (canonicalize_shape(shape) or param_shape) + param_shape
    length_key, sign_key = split_key(key)
    length = maxwell(length_key, shape, dtype)
    signed = rademacher(sign_key, shape, dtype) * length
    return _jnp_add(_jnp_mul(signed, scale), loc)       # one multiply-add in XLA


def _jnp_mul(x, y):
    """``x * y`` with jnp's promotion, as a product the next ``_jnp_add``/``_jnp_sub``
    fuses (XLA contracts a product feeding one add into a multiply-add)."""
    return xo.mul(*promote_args("multiply", x, y))


def _jnp_add(x, y):
    """``x + y`` with jnp's promotion, fusing a ``_jnp_mul`` operand."""
    return xo.add(*promote_args("add", x, y))


def _jnp_sub(x, y):
    """``x - y`` with jnp's promotion, fusing a ``_jnp_mul`` operand."""
    return xo.sub(*promote_args("subtract", x, y))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Weibull samples: scale (-log(1 - u))**(1 / concentration)."""
    key, dtype = _float_args("weibull_min", key, dtype)
    u = uniform_typed(key, canonicalize_shape(shape), dtype, 0, 1)
    return jnp_power(-xo.log1p(-u), 1.0 / concentration) * scale


def jnp_power(x, y):
    """``jnp.power(x, y)`` with XLA's float ``pow`` (the C library's ``powf``)."""
    if _concrete_int(y):
        return jnp.power(x, y)           # integer_pow: repeated multiplication
    x, y = promote_shapes("power", asarray_value(x), asarray_value(y))
    bx, by = promote_args_numeric("power", x, y)
    if not dtypes.issubdtype(bx.dtype, np.inexact) or (
            dtypes.issubdtype(x.dtype, np.inexact) and dtypes.issubdtype(y.dtype, np.integer)):
        return jnp.power(x, y)
    return xo.pow(bx, by)


def _concrete_int(v):
    if isinstance(v, Tracer) or np.ndim(v) != 0:
        return False
    try:
        operator.index(v)
    except TypeError:
        return False
    return True


@with_out_sharding
def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Rayleigh samples: scale sqrt(-2 log u)."""
    key, dtype = _float_args("rayleigh", key, dtype)
    shape = check_broadcast_shapes("rayleigh", shape, scale)
    check_safe_cast("rayleigh", dtype, scale)
    u = uniform_typed(key, shape, dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(xo.log(u), const(scale, -2))))


@with_out_sharding
def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian) samples with ``mean`` (Michael, Schucany and Haas' method:
    a root of the chi-square(1) equation, the other root with probability 1 - m/(m + x))."""
    key, dtype = _float_args("wald", key, dtype)
    shape = check_broadcast_shapes("wald", shape, mean)
    check_safe_cast("wald", dtype, mean)
    normal_key, pick_key = split_key(key)
    m = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    z = normal_typed(normal_key, shape, dtype)
    u = uniform_typed(pick_key, shape, dtype)
    chi = lax.integer_pow(z, 2)
    chi_sq = lax.integer_pow(chi, 2)
    m_sq = lax.integer_pow(m, 2)
    # XLA fuses the first product of each sum into a multiply-add
    root = lax.sqrt(_jnp_add(_jnp_mul(4 * m, chi), m_sq * chi_sq))
    x = _jnp_sub(m + m_sq * chi / 2, _jnp_mul(m / 2, root))
    return lax.select(lax.le(u, m / (m + x)), x, m_sq / x)


@with_out_sharding
def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Geometric samples (trials up to the first success, ``p`` per trial):
    floor(log u / log(1 - p)) + 1."""
    key, _ = check_prng_key("geometric", key)
    dtype = user_dtype(dtype, int)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = check_broadcast_shapes("geometric", shape, p)
    p = jnp.asarray(p)
    if not dtypes.issubdtype(p.dtype, np.inexact):
        p = p.astype(dtypes.default_float_dtype())
    u = uniform_typed(key, shape, p.dtype)
    u = jnp.where(u == 0, jnp.ones_like(u), u)           # keeps log u finite
    per_trial = jnp.broadcast_to(xo.log1p(-p), shape)
    div = xo.div_by_broadcast if np.shape(p) != tuple(shape) else lax.div
    return (lax.floor(div(xo.log(u), per_trial)) + 1).astype(dtype)


@with_out_sharding
def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Triangular samples on ``[left, right]`` peaking at ``mode`` (inverse CDF)."""
    key, dtype = _float_args("triangular", key, dtype)
    shape = check_broadcast_shapes("triangular", shape, left, mode, right)
    check_safe_cast("triangular", dtype, left, mode, right)
    a, b, c = (jnp.broadcast_to(_as(v, dtype), shape) for v in (left, right, mode))
    split = (c - a) / (b - a)
    u = uniform_typed(key, shape, dtype)
    rising = a + lax.sqrt(u * (b - a) * (c - a))
    falling = b - lax.sqrt((1 - u) * (b - a) * (b - c))
    return lax.select(u < split, rising, falling)


@with_out_sharding
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None, *, out_sharding=None):
    """Log-normal samples: exp(sigma * normal)."""
    key, _ = check_prng_key("lognormal", key)
    dtype = user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"dtype argument to `lognormal` must be a float or complex dtype, "
                         f"got {dtype}")
    shape = check_broadcast_shapes("lognormal", shape, sigma)
    check_safe_cast("lognormal", dtype, sigma)
    sigma = _as(sigma, dtype)
    return xo.exp(normal_typed(key, shape, dtype) * sigma)


@with_out_sharding
def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Pareto samples with shape parameter ``b``: exp(E / b) for E exponential."""
    key, dtype = _float_args("pareto", key, dtype)
    shape = check_broadcast_shapes("pareto", shape, b)
    check_safe_cast("pareto", dtype, b)
    b = _as(b, dtype)
    return xo.exp(jnp_divide_by_broadcast(exponential_typed(key, shape, dtype), b))


def jnp_divide_by_broadcast(x, y):
    """``x / y`` (jnp's promotion) where XLA sees ``y`` as a broadcast or a constant, so it
    multiplies by the rounded reciprocal of ``y``."""
    return xo.div_by_broadcast(*promote_args_inexact("true_divide", x, y))
