"""Non-uniform samplers that need rejection loops or other samplers underneath.

* gamma / loggamma: Marsaglia & Tsang, "A simple method for generating gamma variables"
  (ACM TOMS 26(3), 2000), with the ``U**(1/a)`` boost for shapes below one, drawn by the
  ``random_gamma_p`` primitive of ``gamma.py`` (every key implementation and float dtype).
* beta, dirichlet, chisquare, f, t, generalized_normal, ball: closed-form transformations
  of gamma (and normal / exponential / Rademacher) draws.
* poisson: Knuth's multiplication method (TAOCP vol. 2, 3.4.1) for small rates and
  Hörmann's PTRS transformed rejection ("The transformed rejection method for generating
  Poisson random variables", 1993) for large ones.
* binomial: geometric waiting-time inversion for small means and BTRS (Hörmann, "The
  generation of binomial random variates", 1993, a transformed-rejection refinement of
  Kachitvichyanukul & Schmeiser's BTPE) for large ones.
* multinomial: a scan of conditional binomials over the categories.

Every sampler consumes keys and performs its floating-point arithmetic in the same order
as JAX does, so the samples are bit-identical to ``jax.random``'s; comments below point
out where an expression's grouping is load-bearing.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from jaxlite._src.api.sharding_types import with_out_sharding
from jaxlite._src.lax import namespace as lax
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.config import config
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer, current_trace
from jaxlite._src.prims import special as sp
from jaxlite._src.prims.elementwise import log_p as lax_log_p
from jaxlite._src.random import prng
from jaxlite._src.random import xla_extra as XE
from jaxlite._src.random import xla_math as X
from jaxlite._src.random import xla_ops as xo
from jaxlite._src.random.keys import check_prng_key
from jaxlite._src.random.samplers import (
    canonicalize_shape, check_broadcast_shapes, check_safe_cast, check_shape, const,
    exponential_typed, jnp_power, normal_typed, rademacher, split_key, uniform_typed,
    user_dtype, _float_dtype_check)
from jaxlite._src.random.gamma import random_gamma

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t",
           "generalized_normal", "ball", "poisson", "binomial", "multinomial"]


def _float_sampler_setup(name, key, dtype):
    """Validate the key and resolve a float output dtype (the common prologue)."""
    key, _ = check_prng_key(name, key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check(name, dtype)
    return key, dtype


def _as(x, dtype):
    return lax.convert_element_type(jnp.asarray(x), dtype)


# ============================================================================= gamma
#
# Marsaglia-Tsang with one key per element, drawn by the ``random_gamma`` primitive
# (gamma.py) for every key implementation and float dtype. JAX compiles the terms that
# depend on the shape parameter alone with exact arithmetic when that parameter is a
# compile-time constant of the XLA program (a scalar, broadcast), and with XLA's runtime
# kernels otherwise; ``_compile_time_constant`` tells the two apart.

def _staging_active():
    """Whether some enclosing transformation stages a program (jit, make_jaxpr, ...)."""
    from jaxlite._src.interpreters.staging import StagingTrace
    t = current_trace()
    while t is not None:
        if isinstance(t, StagingTrace):
            return True
        t = t.parent
    return False


def _compile_time_constant(x):
    """Whether ``x`` would be a constant of JAX's compiled program: traced under jit (JAX
    compiles eager calls with their parameters as arguments) and depending on no argument
    of the traced function."""
    from jaxlite._src.interpreters.staging import StagingTracer
    if not isinstance(x, Tracer):
        return _staging_active()
    if not isinstance(x, StagingTracer):
        return False
    return x._trace.is_input_free(x.var)


def _gamma_draws(key, a, log_space, folded):
    """Independent draws for every element of ``a``, one subkey per element."""
    size = math.prod(a.shape)
    if size == 0:
        return jnp.zeros(a.shape, a.dtype)
    per_element = prng.random_split(key, (size,))
    impl = prng.key_impl_of(key)
    raw = jnp.reshape(prng.key_data_of(per_element), (*a.shape, *impl.key_shape))
    # JAX maps over the keys of other implementations in a loop, where nothing folds
    folded = folded if impl is prng.threefry_prng_impl else ""
    return random_gamma(raw, a, log_space, impl.tag, config.jax_threefry_partitionable,
                        folded)


def _gamma_sample(key, a, shape, dtype, log_space=False):
    """Gamma draws with shape ``a`` broadcast to ``shape`` (None: ``a``'s own shape)."""
    a_shape = tuple(np.shape(a))
    if shape is None:
        shape = a_shape
    else:
        check_shape("gamma", shape, a_shape)
    a = _as(a, dtype)
    # XLA folds the terms of a constant scalar broadcast to the sample shape, or of a
    # constant array of that shape (not of a broadcast array)
    kind = "scalar" if a.ndim == 0 else "array" if tuple(a.shape) == tuple(shape) else ""
    folded = kind if kind and _compile_time_constant(a) else ""
    if tuple(a.shape) != tuple(shape):
        a = jnp.broadcast_to(a, shape)
    return _gamma_draws(key, a, log_space, folded)


def _gamma_setup(name, key, dtype, shape):
    key, _ = check_prng_key(name, key)
    dtype = user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.floating):
        # JAX reports `gamma` here for loggamma too.
        raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dtype}")
    if shape is not None:
        shape = canonicalize_shape(shape)
    return key, dtype, shape


@with_out_sharding
def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma samples with shape parameter ``a`` (unit scale)."""
    key, dtype, shape = _gamma_setup("gamma", key, dtype, shape)
    return _gamma_sample(key, a, shape, dtype)


@with_out_sharding
def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Logarithms of gamma samples, accurate for small ``a``."""
    key, dtype, shape = _gamma_setup("loggamma", key, dtype, shape)
    return _gamma_sample(key, a, shape, dtype, log_space=True)


# ---------------------------------------------------------- gamma-derived samplers
#
# The arithmetic after the gamma draws is XLA:CPU's, after XLA's algebraic rewrites: its
# exp and pow (xla_ops), a division by a broadcast done as a product with the reciprocal,
# and the re-association of the F ratio, which differs when the degrees of freedom are
# compile-time constants.

def _is_bf16(x):
    return x.dtype.name == "bfloat16"


def _f32(x):
    return lax.convert_element_type(x, np.float32)


def _times_recip_bf16(v, divisor):
    """bfloat16 ``v / divisor`` as XLA:CPU computes it: ``v`` times the float32 reciprocal
    of ``divisor`` (not rounded to bfloat16), the product rounded to bfloat16."""
    recip = lax.div(lax.full((), 1, np.float32), _f32(divisor))
    return lax.convert_element_type(jnp.multiply(_f32(v), recip), divisor.dtype)


def _normalise_from_logs(log_a, log_b):
    """a / (a + b) from log a and log b, scaled by the larger so nothing overflows."""
    top = lax.max(log_a, log_b)
    ea, eb = xo.exp(lax.sub(log_a, top)), xo.exp(lax.sub(log_b, top))
    return lax.div(ea, lax.add(ea, eb))


@with_out_sharding
def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta samples with parameters ``a`` and ``b``: X / (X + Y) for X ~ Ga(a), Y ~ Ga(b)."""
    key, dtype = _float_sampler_setup("beta", key, dtype)
    check_safe_cast("beta", dtype, a, b)
    shape = check_broadcast_shapes("beta", shape, a, b)
    key_a, key_b = split_key(key)
    log_x = _gamma_sample(key_a, a, shape, dtype, log_space=True)
    log_y = _gamma_sample(key_b, b, shape, dtype, log_space=True)
    return _normalise_from_logs(log_x, log_y)


def _softmax_last(logits):
    shifted = logits - lax.stop_gradient(logits.max(-1, keepdims=True))
    if _is_bf16(shifted):
        # the float32 exps summed and the sum rounded; the rounded exps times the sum's
        # float32 reciprocal
        w = xo.exp(_f32(shifted))
        total = lax.convert_element_type(w.sum(-1, keepdims=True), shifted.dtype)
        return _times_recip_bf16(w.astype(shifted.dtype), total)
    w = xo.exp(shifted)
    total = jnp.broadcast_to(w.sum(-1, keepdims=True), w.shape)
    return xo.div_by_broadcast(w, total)


@with_out_sharding
def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet samples with concentrations ``alpha`` (..., k): normalised gammas."""
    key, dtype = _float_sampler_setup("dirichlet", key, dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    ndim = np.ndim(alpha)
    if ndim < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {ndim}")
    batch, categories = tuple(np.shape(alpha)[:-1]), tuple(np.shape(alpha)[-1:])
    if shape is None:
        shape = batch
    else:
        check_shape("dirichlet", shape, batch)
    log_g = _gamma_sample(key, _as(alpha, dtype), shape + categories, dtype, log_space=True)
    return _softmax_last(log_g)


def _chi2_half(key, df, shape, dtype):
    """Gamma(df / 2) drawn in log space and exponentiated (a chi-square is twice it)."""
    return xo.exp(_gamma_sample(key, lax.div(df, const(df, 2)), shape, dtype, log_space=True))


@with_out_sharding
def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square samples with ``df`` degrees of freedom."""
    key, dtype = _float_sampler_setup("chisquare", key, dtype)
    shape = check_broadcast_shapes("chisquare", shape, df)
    check_safe_cast("chisquare", dtype, df)
    df = _as(df, dtype)
    return lax.mul(_chi2_half(key, df, shape, dtype), const(df, 2))


@with_out_sharding
def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F-distribution samples: (chi2(dfnum) / dfnum) / (chi2(dfden) / dfden)."""
    key, dtype = _float_sampler_setup("f", key, dtype)
    shape = check_broadcast_shapes("f", shape, dfnum, dfden)
    check_safe_cast("f", dtype, dfnum, dfden)
    dfnum, dfden = _as(dfnum, dtype), _as(dfden, dtype)
    # The first subkey drives the denominator.
    den_key, num_key = split_key(key)
    x = _chi2_half(num_key, dfnum, shape, dtype)
    y = _chi2_half(den_key, dfden, shape, dtype)
    two = const(x, 2)
    if _is_bf16(x):
        return lax.div(_times_recip_bf16(lax.mul(x, two), dfnum),
                       _times_recip_bf16(lax.mul(y, two), dfden))
    if dfnum.ndim or dfden.ndim:
        return lax.div(lax.div(lax.mul(x, two), dfnum), lax.div(lax.mul(y, two), dfden))
    # XLA computes (2x / m) / (2y / n) as (x (2/m)) / (y (2/n)) when both degrees of
    # freedom are constants, as (2x) / (y (m (2/n))) when only n is, else as
    # (x (2n)) / (y (2m)); bfloat16 as (2x (1/m)) / (2y (1/n)) with float32 reciprocals.
    if _compile_time_constant(dfden) and x.dtype != np.float16:
        two_over_n = lax.mul(two, lax.div(const(x, 1), dfden))
        if _compile_time_constant(dfnum):
            two_over_m = lax.mul(two, lax.div(const(x, 1), dfnum))
            return lax.div(lax.mul(x, two_over_m), lax.mul(y, two_over_n))
        return lax.div(lax.mul(x, two), lax.mul(y, lax.mul(dfnum, two_over_n)))
    return lax.div(lax.mul(x, lax.mul(dfden, two)), lax.mul(y, lax.mul(dfnum, two)))


@with_out_sharding
def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t samples: Z * sqrt((df/2) / G) with Z ~ N(0, 1), G ~ Gamma(df/2)."""
    key, dtype = _float_sampler_setup("t", key, dtype)
    shape = check_broadcast_shapes("t", shape, df)
    check_safe_cast("t", dtype, df)
    df = _as(df, dtype)
    normal_key, gamma_key = split_key(key)
    z = normal_typed(normal_key, shape, dtype)
    half_df = lax.div(df, const(z, 2))
    g = _gamma_sample(gamma_key, half_df, shape, dtype)
    return z * jnp.sqrt(half_df / g)


def _gen_normal(key, p, shape, dtype):
    """sign * G^(1/p) for G ~ Gamma(1/p) (|X|^p ~ Gamma(1/p)) and a random sign."""
    gamma_key, sign_key = split_key(key)
    inv_p = jnp.true_divide(1, jnp.asarray(p))
    g = _gamma_sample(gamma_key, inv_p, shape, dtype)
    sign = rademacher(sign_key, shape, dtype)
    return sign * jnp_power(g, inv_p)


@with_out_sharding
def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal samples with exponent ``p`` (density ∝ exp(-|x|^p))."""
    key, dtype = _float_sampler_setup("generalized_normal", key, dtype)
    return _gen_normal(key, p, canonicalize_shape(shape), dtype)


_sum_sq3_jit = []


def _sum_sq3():
    """sum(v * v) over a last axis of length 3 with the multiply-adds of XLA:CPU's fused
    reduction (jitted: the contraction is tracked between the two operations)."""
    if not _sum_sq3_jit:
        from jaxlite._src.api.jit import jit
        _sum_sq3_jit.append(jit(lambda v: xo.sum_last3(xo.mul(v, v))))
    return _sum_sq3_jit[0]


@with_out_sharding
def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Samples uniform in the unit ``p``-norm ball of dimension ``d``.

    Barthe, Guédon, Mendelson & Naor (2005): with g a vector of generalized-normal(p)
    coordinates and e ~ Exp(1), g / (||g||_p^p + e)^(1/p) is uniform in the ball."""
    key, dtype = _float_sampler_setup("ball", key, dtype)
    shape = canonicalize_shape(shape)
    d = int(d)
    direction_key, radius_key = split_key(key)
    g = _gen_normal(direction_key, p, (*shape, d), dtype)
    e = exponential_typed(radius_key, shape, dtype)
    p_arr = jnp.asarray(p)
    if _is_bf16(g):
        # |g|^p summed in float32; g times the float32 reciprocal of the radius
        powers = jnp_power(_f32(jnp.abs(g)), _f32(p_arr.astype(g.dtype)))
        total = lax.convert_element_type(powers.sum(-1), g.dtype)
        radius = jnp_power(total + e, jnp.true_divide(1, p_arr).astype(g.dtype))
        return _times_recip_bf16(g, radius[..., None])
    if not _compile_time_constant(p_arr):
        # a runtime p: |g|^p by the C library's powf even for an integer p
        total = jnp_power(jnp.abs(g), p_arr.astype(g.dtype)).sum(-1)
    elif p == 2 and d == 3 and g.dtype == np.float32:
        total = _sum_sq3()(g)                   # XLA:CPU's fused reduction loop
    else:
        total = (jnp.abs(g) ** p).sum(-1)
    # XLA turns g / s^(1/p) into g * s^(-1/p)
    scale = jnp_power(total + e, -jnp.true_divide(1, p_arr))
    return g * scale[..., None]


# =========================================================================== poisson
#
# Both branches are vectorised over the whole output: a single while_loop runs until
# every element is done, drawing a full-shape batch of uniforms per round.

class _KnuthState(NamedTuple):
    rounds: object
    count: object     # uniforms multiplied in so far while still above exp(-lam)
    key: object
    log_prod: object  # log of the running product of uniforms


def _poisson_by_products(key, lam, shape, dtype, max_rounds):
    """Knuth: N is one less than the number of uniforms whose product drops below
    exp(-lam); tracked with a running sum of logs."""
    threshold = -lam

    def still_above(st):
        return jnp.any(st.log_prod > threshold) & (st.rounds < max_rounds)

    def multiply_one_more(st):
        next_key, sub = split_key(st.key)
        count = lax.select(st.log_prod > threshold, st.count + const(st.count, 1), st.count)
        u = uniform_typed(sub, shape, np.dtype(np.float32))
        return _KnuthState(st.rounds + 1, count, next_key, st.log_prod + jnp.log(u))

    start = _KnuthState(jnp.asarray(0, dtype), lax.full(shape, 0, dtype), key,
                        lax.full(shape, 0, np.float32))
    done = lax.while_loop(still_above, multiply_one_more, start)
    return (done.count - 1).astype(dtype)


class _RejectionState(NamedTuple):
    rounds: object
    sample: object    # latest accepted candidate (-1 before any)
    accepted: object  # whether some round has accepted for this element
    key: object


# ``log`` of a rate XLA's constant folder evaluates (the C library's ``logf``)
_folded_log_p = xo._twin(lax_log_p, xo._shaped(XE.folded_log_f32))

_EXACT_INT_F32 = 2.0 ** 24      # float32 holds every integer of smaller magnitude


def _lgamma_of_counts_f32(x):
    """XLA:CPU's float32 ``lgamma`` of ``x``, evaluated once per distinct integer for the
    integers in the bulk of ``x`` (PTRS's k + 1: a few hundred distinct values among the
    whole sample) and looked up, elementwise for everything else; the same bits as
    ``xla_math.lgamma_f32`` of every element, at a fraction of its cost."""
    x = np.asarray(x, np.float32)
    flat = x.reshape(-1)
    if flat.size < 4096:
        return X.lgamma_f32(x)
    probe = flat[::64]
    probe = probe[np.isfinite(probe)]
    if probe.size < 16:
        return X.lgamma_f32(x)
    # a window around the middle of the values, wide enough for all but a few per cent
    low, mid, high = np.quantile(probe, (0.02, 0.5, 0.98))
    half = min(2 * max(mid - low, high - mid) + 16, flat.size // 8)
    lo = math.floor(max(mid - half, -_EXACT_INT_F32 + 1))
    hi = math.floor(min(mid + half, _EXACT_INT_F32 - 1))
    if hi < lo:
        return X.lgamma_f32(x)
    table = X.lgamma_f32(np.arange(lo, hi + 1, dtype=np.float64).astype(np.float32))
    listed = (flat >= lo) & (flat <= hi) & (flat == np.floor(flat)) & (flat != 0)
    out = np.empty(flat.size, np.float32)
    out[listed] = table[(flat[listed].astype(np.float64) - lo).astype(np.int64)]
    rest = ~listed
    if rest.any():
        out[rest] = X.lgamma_f32(flat[rest])
    return out.reshape(x.shape)


# ``lgamma`` (lax's, as traced) of PTRS's integer arguments
_lgamma_of_counts_p = xo._twin(sp.lgamma_p, xo._shaped(_lgamma_of_counts_f32))


def _ptrs_constants(lam, folded):
    """PTRS's hat parameters (log lam, b, a, 1/alpha, v_r) as JAX's compiled program has
    them. A compile-time constant rate (``folded``) is folded by XLA one operation at a
    time in float32 (``logf`` for the logarithm). A runtime rate is computed by XLA's
    kernels after its algebraic rewrites: b = 2.53 sqrt(lam) + 0.931 and a = 0.02483 b -
    0.059 are fused multiply-adds, the constants of b - 3.4 and b - 2 are pre-added
    (sqrt(lam) 2.53 + (0.931 - 3.4), one FMA), and 1.1328 / (b - 3.4) becomes 1.1328
    times the reciprocal, fused with the + 1.1239."""
    f32 = lambda v: lax.full((), v, np.float32)   # noqa: E731
    root = lax.sqrt(lam)
    if folded:
        log_lam = _folded_log_p.bind(lam)
        b = 0.931 + 2.53 * root
        a = -0.059 + 0.02483 * b
        inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
        v_r = 0.9277 - 3.6224 / (b - 2)
        return log_lam, b, a, inv_alpha, v_r
    log_lam = xo.log(lam)
    b = xo.add(xo.mul(root, f32(2.53)), f32(0.931))
    a = xo.add(xo.mul(b, f32(0.02483)), f32(-0.059))
    shift = np.float32(0.931)
    b_less_34 = xo.add(xo.mul(root, f32(2.53)), f32(shift - np.float32(3.4)))
    b_less_2 = xo.add(xo.mul(root, f32(2.53)), f32(shift - np.float32(2)))
    inv_alpha = xo.add(xo.mul(f32(1.1328), lax.div(f32(1), b_less_34)), f32(1.1239))
    v_r = f32(0.9277) - lax.div(f32(3.6224), b_less_2)
    return log_lam, b, a, inv_alpha, v_r


def _poisson_ptrs(key, lam, shape, dtype, max_rounds, folded=False):
    """Hörmann's PTRS: a transformed-rejection sampler whose hat comes from the
    transformation k = floor((2a/us + b) u + lam + 0.43) of a centred uniform u.

    The arithmetic is XLA:CPU's: its float32 ``log`` and ``lgamma``, and the products
    ``(2a/us + b) u`` (plus lam) and ``k log(lam)`` (minus lam) contracted into FMAs."""
    # the hat's parameters at the rate's own shape (a scalar, say), then broadcast
    params = (lam, -lam, *_ptrs_constants(lam, folded))
    lam, neg_lam, log_lam, b, a, inv_alpha, v_r = (
        p if tuple(p.shape) == shape else jnp.broadcast_to(p, shape) for p in params)

    def one_round(st):
        next_key, u_key, v_key = split_key(st.key, 3)
        u = uniform_typed(u_key, shape, lam.dtype) - 0.5
        v = uniform_typed(v_key, shape, lam.dtype)
        us = 0.5 - abs(u)
        k = lax.floor(xo.add(xo.mul(2 * a / us + b, u), lam) + 0.43)
        # Fast acceptance inside the region where the hat is below the density.
        quick = (us >= 0.07) & (v <= v_r)
        hopeless = (k < 0) | ((us < 0.013) & (v > us))
        # Full test: the log of v scaled by the hat's density at u against the log
        # Poisson mass -lam + k log lam - log k!.
        lhs = xo.log(v * inv_alpha / (a / (us * us) + b))
        rhs = xo.sub(xo.add(neg_lam, xo.mul(k, log_lam)), _lgamma_of_counts_p.bind(k + 1))
        ok = quick | (~hopeless & (lhs <= rhs))
        # An element that already accepted is overwritten by any later acceptance
        # (rounds continue for the others); JAX behaves the same way.
        return _RejectionState(st.rounds + 1, lax.select(ok, k, st.sample),
                               st.accepted | ok, next_key)

    def pending(st):
        return jnp.any(~st.accepted) & (st.rounds < max_rounds)

    start = _RejectionState(jnp.asarray(0, dtype), lax.full(shape, -1, lam.dtype),
                            lax.full(shape, False, np.bool_), key)
    return lax.while_loop(pending, one_round, start).sample.astype(dtype)


_ptrs_jitted = []


def _ptrs_jit():
    """``_poisson_ptrs`` jitted (shape, dtype, rounds and ``folded`` static)."""
    if not _ptrs_jitted:
        from jaxlite._src.api.jit import jit
        _ptrs_jitted.append(jit(_poisson_ptrs, static_argnums=(2, 3, 4, 5)))
    return _ptrs_jitted[0]


@with_out_sharding
def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson samples with rate ``lam`` (Knuth below 10, PTRS from 10 up)."""
    key, _ = check_prng_key("poisson", key)
    dtype = user_dtype(dtype, int)
    if prng.key_impl_of(key) is not prng.threefry_prng_impl:
        raise NotImplementedError("`poisson` is only implemented for the threefry2x32 RNG, "
                                  f"not {prng.key_impl_of(key)}")
    shape = tuple(np.shape(lam)) if shape is None else canonicalize_shape(shape)
    rate = lax.convert_element_type(jnp.asarray(lam), np.float32)
    lam = jnp.broadcast_to(rate, shape)
    small = jnp.isnan(lam) | (lam < 10)
    # Both branches run on the same key over the full shape; each sees a harmless rate
    # where the other branch's result will be kept.
    small_lam = lax.select(small, lam, lax.full_like(lam, 0.0))
    small_rate = jnp.isnan(rate) | (rate < 10)
    large_rate = lax.select(small_rate, lax.full_like(rate, 100000.0), rate)
    max_rounds = dtype.type(dtypes.iinfo(dtype).max)
    # XLA folds the hat parameters of a constant rate: a scalar, or an array of the
    # sample's shape (not a broadcast array)
    folded = (np.ndim(rate) == 0 or tuple(np.shape(rate)) == shape) and \
        _compile_time_constant(rate)
    # (traced, PTRS is a nested jit as JAX's ``_poisson_rejection``: its loop gets the hat's
    # parameters as operands from outside its function, which XLA does not sink into it)
    ptrs = _ptrs_jit() if _staging_active() else _poisson_ptrs
    draws = lax.select(small,
                       _poisson_by_products(key, small_lam, shape, dtype, max_rounds),
                       ptrs(key, large_rate, shape, dtype, max_rounds, folded))
    return lax.select(lam == 0, jnp.zeros_like(draws), draws)


# ========================================================================== binomial

# log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi)/2] for k = 0..9, the Stirling
# remainder that BTRS tabulates for small arguments.
_STIRLING_REMAINDER = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                       0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                       0.0118967099458917, 0.010411265261972, 0.00925546218271273,
                       0.00833056343336287)
_ONE_12TH, _ONE_360TH, _ONE_1260TH = 1.0 / 12, 1.0 / 360, 1.0 / 1260


def _stirling_remainder(k):
    """Tabulated remainder for k <= 9, else the series 1/12 - 1/360 n^-2 + 1/1260 n^-4
    over n.  JAX evaluates the series at n = min(k, 9) + 1 (its argument is clamped to
    the table range first); that is kept for bit-exactness."""
    in_table = k <= 9
    kc = lax.clamp(const(k, 0.0), k, const(k, 9.0))
    n = kc + 1
    n_sq = n * n
    series = (_ONE_12TH - (_ONE_360TH - _ONE_1260TH / n_sq) / n_sq) / n
    table = jnp.array(_STIRLING_REMAINDER, dtype=k.dtype)
    row = jnp.asarray(jnp.floor(kc), dtype="int32")
    return lax.select(in_table, table[row], series)


class _GeometricState(NamedTuple):
    rounds: object
    gaps: object      # geometric gaps drawn while the running sum was <= n
    position: object  # sum of the gaps drawn so far
    key: object


def _binomial_by_waiting_times(key, n, p, shape, dtype, max_rounds):
    """Waiting-time method: the trial indices of successes are separated by
    Geometric(p) gaps ceil(log U / log(1 - p)); the count is the number of gaps that fit
    into n trials."""
    log_q = jnp.log1p(-p)

    def one_gap(st):
        # This method takes the first split as the subkey.
        sub, next_key = split_key(st.key)
        gaps = lax.select(st.position <= n, st.gaps + 1, st.gaps)
        gap = jnp.ceil(jnp.log(uniform_typed(sub, shape, p.dtype)) / log_q)
        return _GeometricState(st.rounds + 1, gaps, st.position + gap, next_key)

    def within(st):
        return jnp.any(st.position <= n) & (st.rounds < max_rounds)

    start = _GeometricState(jnp.asarray(0, p.dtype), lax.full(shape, 0, p.dtype),
                            lax.full(shape, 0, p.dtype), key)
    done = lax.while_loop(within, one_gap, start)
    return (done.gaps - 1).astype(dtype)


def _binomial_btrs(key, n, p, shape, dtype, max_rounds):
    """BTRS transformed rejection for n p > 10 (p <= 1/2 here)."""
    spread = jnp.sqrt(n * p * (1 - p))
    b = 1.15 + 2.53 * spread
    a = -0.0873 + 0.0248 * b + 0.01 * p
    centre = n * p + 0.5
    v_r = 0.92 - 4.2 / b
    odds = p / (1 - p)
    alpha = (2.83 + 5.1 / b) * spread
    mode = jnp.floor((n + 1) * p)
    # Parts of the log-density ratio that depend only on the mode, computed once; the
    # loop adds them in the same order as a single expression would.
    mode_term = (mode + 0.5) * jnp.log((mode + 1) / (odds * (n - mode + 1)))
    rem_mode = _stirling_remainder(mode)
    rem_rest = _stirling_remainder(n - mode)

    def one_round(st):
        next_key, u_key, v_key = split_key(st.key, 3)
        u = uniform_typed(u_key, shape, p.dtype)
        v = uniform_typed(v_key, shape, p.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        quick = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + centre)
        outside = (k < 0) | (k > n)
        lhs = jnp.log(v * alpha / (a / (us * us) + b))
        # log f(k) - log f(mode), with log-factorials written via Stirling plus remainder.
        rhs = (mode_term
               + (n + 1) * jnp.log((n - mode + 1) / (n - k + 1))
               + (k + 0.5) * jnp.log(odds * (n - k + 1) / (k + 1))
               + rem_mode + rem_rest
               - _stirling_remainder(k) - _stirling_remainder(n - k))
        ok = quick | (~outside & (lhs <= rhs))
        return _RejectionState(st.rounds + 1, lax.select(ok, k, st.sample),
                               st.accepted | ok, next_key)

    def pending(st):
        return jnp.any(~st.accepted) & (st.rounds < max_rounds)

    start = _RejectionState(jnp.asarray(0, p.dtype), lax.full(shape, -1, p.dtype),
                            jnp.full(shape, False, bool), key)
    return lax.while_loop(pending, one_round, start).sample.astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial samples: successes in ``n`` trials of probability ``p``."""
    key, dtype = _float_sampler_setup("binomial", key, dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _binomial_sample(key, n, p, shape, dtype)


def _binomial_sample(key, count, prob, shape, dtype):
    """Sample with q = min(p, 1 - p) and reflect (n - X) when p >= 1/2."""
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
    else:
        check_shape("binomial", shape, np.shape(count), np.shape(prob))
    prob = jnp.asarray(prob)
    if not dtypes.issubdtype(prob.dtype, np.inexact):
        prob = prob.astype(dtypes.default_float_dtype())
    n = jnp.broadcast_to(_as(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)

    reflect = ~(prob < 0.5)
    q = lax.select(reflect, 1.0 - prob, prob)
    bad_n = jnp.isnan(n) | (n < 0.0)
    inf_n = jnp.isinf(n)
    nan_q, neg_q = jnp.isnan(q), q < 0.0
    q = lax.select(nan_q | neg_q, lax.full_like(q, 0.01), q)
    by_inversion = bad_n | (n * q <= 10.0)
    n = jnp.floor(n)
    # Each branch runs everywhere; give it benign parameters where it is not used.
    n_inv = lax.select(by_inversion, n, lax.full_like(n, 0.0))
    n_btrs = lax.select(by_inversion, lax.full_like(n, 10000.0), n)
    q_btrs = lax.select(by_inversion, lax.full_like(q, 0.5), q)
    max_rounds = dtype.type(dtypes.finfo(dtype).max)
    x = lax.select(by_inversion,
                   _binomial_by_waiting_times(key, n_inv, q, shape, dtype, max_rounds),
                   _binomial_btrs(key, n_btrs, q_btrs, shape, dtype, max_rounds))

    invalid = neg_q | nan_q | bad_n
    x = lax.select(invalid, jnp.full_like(x, np.nan, dtype), x)
    x = lax.select(inf_n & ~invalid, jnp.full_like(x, np.inf, dtype), x)
    keep_as_is = ~reflect | bad_n | nan_q | inf_n
    return lax.select(keep_as_is, x, n.astype(dtype) - x)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts of ``n`` trials over the categories of ``p`` (last axis).

    Category i receives Binomial(remaining trials, p_i / (p_i + ... + p_last)), drawn
    in order with one subkey per category."""
    key, _ = check_prng_key("multinomial", key)
    n, p = jnp.asarray(n), jnp.asarray(p)
    work = jnp.result_type(n, p)
    if not dtypes.issubdtype(work, np.inexact):
        work = dtypes.default_float_dtype()
    n, p = n.astype(work), p.astype(work)
    dtype = user_dtype(dtype, float)
    shape = tuple(p.shape) if shape is None else canonicalize_shape(shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)

    tail_mass = lax.cumsum(p, 0, reverse=True)
    conditional = p / jnp.where(tail_mass == 0, 1, tail_mass)
    category_keys = prng.random_split(key, (conditional.shape[0],))

    def take_category(left, ratio_and_key):
        ratio, k = ratio_and_key
        got = _binomial_sample(k, left, jnp.clip(ratio, 0, 1), None, left.dtype)
        return left - got, got

    _, counts = lax.scan(take_category, n, (conditional, category_keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)
