"""Samplers built on rejection loops and on other samplers, as JAX computes them: gamma
(Marsaglia-Tsang, one while_loop per element under vmap), loggamma, beta, dirichlet,
chisquare, f, t, generalized_normal, ball, poisson (Knuth / PTRS), binomial (inversion /
BTRS) and multinomial."""
from __future__ import annotations

import math

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite._src.api.vmap import vmap
from jaxlite._src.core import dtypes
from jaxlite._src.random import prng
from jaxlite._src.random.keys import check_prng_key, split
from jaxlite._src.random.samplers import (
    canonicalize_shape, check_broadcast_shapes, check_safe_cast, check_shape,
    exponential_typed, normal_typed, rademacher, split_key, uniform_typed, user_dtype,
    _float_dtype_check)
from jaxlite._src.random.gamma import GAMMA_DTYPES, random_gamma
from jaxlite._src.random.special import lgamma

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t",
           "generalized_normal", "ball", "poisson", "binomial", "multinomial"]


def _c(x, v):
    return lax.full((), v, x.dtype)


# ------------------------------------------------------------------------------ gamma

def _gamma_one(key, alpha, log_space):
    zero, one, minus_one, two = _c(alpha, 0), _c(alpha, 1), _c(alpha, -1), _c(alpha, 2)
    one_over_two, one_over_three = _c(alpha, 0.5), _c(alpha, 1.0 / 3.0)
    squeeze_const = _c(alpha, 0.0331)
    dtype = alpha.dtype
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, one_over_three)
    c = lax.div(one_over_three, lax.sqrt(d))

    def cond_fn(kXVU):
        _, X, V, U = kXVU
        return lax.bitwise_and(
            lax.ge(U, lax.sub(one, lax.mul(squeeze_const, lax.mul(X, X)))),
            lax.ge(lax.log(U), lax.add(lax.mul(X, one_over_two),
                                       lax.mul(d, lax.add(lax.sub(one, V), lax.log(V))))))

    def body_fn(kXVU):
        def next_kxv(kxv):
            k = kxv[0]
            k, subkey = split_key(k)
            x = normal_typed(subkey, (), dtype)
            return k, x, lax.add(one, lax.mul(x, c))
        k = kXVU[0]
        k, x_key, u_key = split_key(k, 3)
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv,
                                 (x_key, zero, minus_one))
        X = lax.mul(x, x)
        V = lax.mul(lax.mul(v, v), v)
        U = uniform_typed(u_key, (), dtype)
        return k, X, V, U

    key, subkey = split_key(key)
    _, _, V, _ = lax.while_loop(cond_fn, body_fn, (key, zero, one, two))
    if log_space:
        log_samples = lax.neg(exponential_typed(subkey, (), dtype))
        log_boost = lax.select(boost_mask | (log_samples == 0), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    samples = 1 - uniform_typed(subkey, (), dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


def _gamma_impl(key, a, log_space):
    n = math.prod(a.shape)
    if n == 0:
        return jnp.zeros(a.shape, a.dtype)
    keys = prng.random_split(key, (n,))
    if key._impl is prng.threefry_prng_impl and a.dtype in GAMMA_DTYPES:
        raw = jnp.reshape(keys._base_array, tuple(a.shape) + (2,))
        return random_gamma(raw, a, log_space)
    samples = vmap(lambda k, al: _gamma_one(k, al, log_space))(keys, jnp.reshape(a, (n,)))
    return jnp.reshape(samples, a.shape)


def _gamma(key, a, shape, dtype, log_space=False):
    if shape is None:
        shape = tuple(np.shape(a))
    else:
        check_shape("gamma", shape, np.shape(a))
    a = lax.convert_element_type(jnp.asarray(a), dtype)
    if tuple(a.shape) != tuple(shape):
        a = jnp.broadcast_to(a, shape)
    return _gamma_impl(key, a, log_space)


def _gamma_args(name, key, dtype, shape):
    key, _ = check_prng_key(name, key)
    dtype = user_dtype(dtype, float)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `gamma` must be a float dtype, got {dtype}")
    return key, dtype, (None if shape is None else canonicalize_shape(shape))


def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Gamma samples with shape parameter ``a`` (unit scale)."""
    key, dtype, shape = _gamma_args("gamma", key, dtype, shape)
    return _gamma(key, a, shape, dtype)


def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Logarithms of gamma samples, accurate for small ``a``."""
    key, dtype, shape = _gamma_args("loggamma", key, dtype, shape)
    return _gamma(key, a, shape, dtype, log_space=True)


def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Beta samples with parameters ``a`` and ``b``."""
    key, _ = check_prng_key("beta", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("beta", dtype)
    check_safe_cast("beta", dtype, a, b)
    shape = check_broadcast_shapes("beta", shape, a, b)
    a = lax.convert_element_type(jnp.asarray(a), dtype)
    b = lax.convert_element_type(jnp.asarray(b), dtype)
    key_a, key_b = split_key(key)
    a = jnp.broadcast_to(a, shape)
    b = jnp.broadcast_to(b, shape)
    log_gamma_a = _gamma(key_a, a, shape, dtype, log_space=True)
    log_gamma_b = _gamma(key_b, b, shape, dtype, log_space=True)
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a_scaled = jnp.exp(log_gamma_a - log_max)
    gamma_b_scaled = jnp.exp(log_gamma_b - log_max)
    return gamma_a_scaled / (gamma_a_scaled + gamma_b_scaled)


def _softmax(x, axis):
    unnormalized = jnp.exp(x - lax.stop_gradient(x.max(axis, keepdims=True)))
    return unnormalized / unnormalized.sum(axis, keepdims=True)


def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Dirichlet samples with concentrations ``alpha`` (..., k)."""
    key, _ = check_prng_key("dirichlet", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("dirichlet", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    if not np.ndim(alpha) >= 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == "
                         f"{np.ndim(alpha)}")
    if shape is None:
        shape = tuple(np.shape(alpha)[:-1])
    else:
        check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    alpha = lax.convert_element_type(jnp.asarray(alpha), dtype)
    log_gamma_samples = _gamma(key, alpha, shape + tuple(np.shape(alpha)[-1:]), dtype,
                               log_space=True)
    return _softmax(log_gamma_samples, -1)


def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Chi-square samples with ``df`` degrees of freedom."""
    key, _ = check_prng_key("chisquare", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("chisquare", dtype)
    shape = check_broadcast_shapes("chisquare", shape, df)
    check_safe_cast("chisquare", dtype, df)
    return _chisquare(key, df, shape, dtype)


def _chisquare(key, df, shape, dtype):
    df = lax.convert_element_type(jnp.asarray(df), dtype)
    two = _c(df, 2)
    log_g = _gamma(key, lax.div(df, two), shape, dtype, log_space=True)
    return lax.mul(jnp.exp(log_g), two)


def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """F-distribution samples with ``dfnum`` and ``dfden`` degrees of freedom."""
    key, _ = check_prng_key("f", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("f", dtype)
    shape = check_broadcast_shapes("f", shape, dfnum, dfden)
    check_safe_cast("f", dtype, dfnum, dfden)
    dfden = lax.convert_element_type(jnp.asarray(dfden), dtype)
    dfnum = lax.convert_element_type(jnp.asarray(dfnum), dtype)
    key_dfd, key_dfn = split_key(key)
    chi2_dfn = _chisquare(key_dfn, dfnum, shape, dtype)
    chi2_dfd = _chisquare(key_dfd, dfden, shape, dtype)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Student's t samples with ``df`` degrees of freedom."""
    key, _ = check_prng_key("t", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("t", dtype)
    shape = check_broadcast_shapes("t", shape, df)
    check_safe_cast("t", dtype, df)
    df = lax.convert_element_type(jnp.asarray(df), dtype)
    key_n, key_g = split_key(key)
    n = normal_typed(key_n, shape, dtype)
    half_df = lax.div(df, _c(n, 2))
    g = _gamma(key_g, half_df, shape, dtype)
    return n * jnp.sqrt(half_df / g)


def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Generalized normal samples with exponent ``p``."""
    key, _ = check_prng_key("generalized_normal", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("generalized_normal", dtype)
    shape = canonicalize_shape(shape)
    return _generalized_normal(key, p, shape, dtype)


def _generalized_normal(key, p, shape, dtype):
    k0, k1 = split_key(key)
    g = _gamma(k0, 1 / p, shape, dtype)
    r = rademacher(k1, shape, dtype)
    return r * g ** (1 / p)


def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Samples uniform in the unit ``p``-norm ball of dimension ``d``."""
    key, _ = check_prng_key("ball", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("ball", dtype)
    shape = canonicalize_shape(shape)
    d = int(d)
    k1, k2 = split_key(key)
    g = _generalized_normal(k1, p, (*shape, d), dtype)
    e = exponential_typed(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


# ---------------------------------------------------------------------------- poisson

def _poisson_knuth(key, lam, shape, dtype, max_iters):
    def body_fn(carry):
        i, k, rng, log_prod = carry
        rng, subkey = split_key(rng)
        k = lax.select(log_prod > -lam, k + _c(k, 1), k)
        u = uniform_typed(subkey, shape, np.dtype(np.float32))
        return i + 1, k, rng, log_prod + jnp.log(u)

    def cond_fn(carry):
        i, log_prod = carry[0], carry[3]
        return jnp.any(log_prod > -lam) & (i < max_iters)

    k_init = lax.full(shape, 0, dtype)
    log_rate_init = lax.full(shape, 0, np.float32)
    k = lax.while_loop(cond_fn, body_fn, (jnp.asarray(0, dtype), k_init, key,
                                          log_rate_init))[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body_fn(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split_key(key, 3)
        u = uniform_typed(subkey_0, shape, lam.dtype) - 0.5
        v = uniform_typed(subkey_1, shape, lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        tt = -lam + k * log_lam - lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept2 = s <= tt
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        accepted = accepted | accept
        return i + 1, k_out, accepted, key

    def cond_fn(carry):
        i, _, accepted, _ = carry
        return jnp.any(~accepted) & (i < max_iters)

    k_init = lax.full(shape, -1, lam.dtype)
    accepted = lax.full(shape, False, np.bool_)
    k = lax.while_loop(cond_fn, body_fn, (jnp.asarray(0, dtype), k_init, accepted, key))[1]
    return k.astype(dtype)


def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Poisson samples with rate ``lam`` (Knuth below 10, transformed rejection above)."""
    key, _ = check_prng_key("poisson", key)
    dtype = user_dtype(dtype, int)
    if key._impl is not prng.threefry_prng_impl:
        raise NotImplementedError("`poisson` is only implemented for the threefry2x32 RNG, "
                                  f"not {key._impl}")
    if shape is not None:
        shape = canonicalize_shape(shape)
    else:
        shape = tuple(np.shape(lam))
    lam = jnp.broadcast_to(jnp.asarray(lam), shape)
    lam = lax.convert_element_type(lam, np.float32)
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, lax.full_like(lam, 0.0))
    lam_rejection = lax.select(use_knuth, lax.full_like(lam, 100000.0), lam)
    max_iters = dtype.type(dtypes.iinfo(dtype).max)
    result = lax.select(use_knuth,
                        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters))
    return lax.select(lam == 0, jnp.zeros_like(result), result)


# --------------------------------------------------------------------------- binomial

_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983,
                  0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                  0.0118967099458917, 0.010411265261972, 0.00925546218271273,
                  0.00833056343336287)


def _stirling_approx_tail(k):
    vals = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_tail_values = k <= 9
    k = lax.clamp(_c(k, 0.0), k, _c(k, 9.0))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(use_tail_values, vals[jnp.asarray(k, dtype="int32")], approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    log1minusprob = jnp.log1p(-prob)

    def body_fn(carry):
        i, num_geom, geom_sum, key = carry
        subkey, key = split(key)
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = uniform_typed(subkey, shape, prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, key

    def cond_fn(carry):
        i, geom_sum = carry[0], carry[2]
        return jnp.any(geom_sum <= count) & (i < max_iters)

    init = (jnp.asarray(0, prob.dtype), lax.full(shape, 0, prob.dtype),
            lax.full(shape, 0, prob.dtype), key)
    k = lax.while_loop(cond_fn, body_fn, init)[1]
    return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body_fn(carry):
        i, k_out, accepted, key = carry
        key, subkey_0, subkey_1 = split(key, 3)
        u = uniform_typed(subkey_0, shape, prob.dtype)
        v = uniform_typed(subkey_1, shape, prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
              + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
              + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
              + _stirling_approx_tail(m) + _stirling_approx_tail(count - m)
              - _stirling_approx_tail(k) - _stirling_approx_tail(count - k))
        accept2 = v <= ub
        accept = accept1 | (~reject & accept2)
        k_out = lax.select(accept, k, k_out)
        return i + 1, k_out, accepted | accept, key

    def cond_fn(carry):
        i, accepted = carry[0], carry[2]
        return jnp.any(~accepted) & (i < max_iters)

    init = (jnp.asarray(0, prob.dtype), lax.full(shape, -1, prob.dtype),
            jnp.full(shape, False, bool), key)
    return lax.while_loop(cond_fn, body_fn, init)[1].astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial samples: successes in ``n`` trials of probability ``p``."""
    key, _ = check_prng_key("binomial", key)
    dtype = user_dtype(dtype, float)
    _float_dtype_check("binomial", dtype)
    if shape is not None:
        shape = canonicalize_shape(shape)
    return _binomial(key, n, p, shape, dtype)


def _binomial(key, count, prob, shape, dtype):
    if shape is None:
        shape = tuple(np.broadcast_shapes(np.shape(count), np.shape(prob)))
    else:
        check_shape("binomial", shape, np.shape(count), np.shape(prob))
    prob = jnp.asarray(prob)
    if not dtypes.issubdtype(prob.dtype, np.inexact):
        prob = prob.astype(dtypes.default_float_dtype())
    count = lax.convert_element_type(jnp.asarray(count), prob.dtype)
    count = jnp.broadcast_to(count, shape)
    prob = jnp.broadcast_to(prob, shape)
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, lax.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = lax.select(use_inversion, count, lax.full_like(count, 0.0))
    count_btrs = lax.select(use_inversion, lax.full_like(count, 10000.0), count)
    q_btrs = lax.select(use_inversion, lax.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(use_inversion,
                         _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
                         _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters))
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & ~invalid, jnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(p_lt_half | count_nan_or_neg | q_is_nan | count_inf, samples,
                      count.astype(dtype) - samples)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts of ``n`` trials over the categories of ``p`` (last axis)."""
    key, _ = check_prng_key("multinomial", key)
    n, p = jnp.asarray(n), jnp.asarray(p)
    dt = jnp.result_type(n, p)
    if not dtypes.issubdtype(dt, np.inexact):
        dt = dtypes.default_float_dtype()
    n, p = n.astype(dt), p.astype(dt)
    dtype = user_dtype(dtype, float)
    if shape is None:
        shape = tuple(p.shape)
    else:
        shape = canonicalize_shape(shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.broadcast_to(p, shape)

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = _binomial(k, remainder, jnp.clip(ratio, 0, 1), None, remainder.dtype)
        return remainder - count, count

    p = jnp.moveaxis(p, -1, 0)
    remaining_probs = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining_probs == 0, 1, remaining_probs)
    keys = prng.random_split(key, (ratios.shape[0],))
    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)
