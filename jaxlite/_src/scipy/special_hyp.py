"""jax.scipy.special: Pochhammer's symbol, the confluent and Gauss hypergeometric functions and
Owen's T, ported from JAX's jnp/lax formulations (Apache-2.0, The JAX Authors)."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite._src.api.custom_derivatives import custom_jvp
from jaxlite._src.api.jit import jit
from jaxlite._src.api.vmap import vmap
from jaxlite._src.api.ad import jvp
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.numpy.util import promote_args_inexact, promote_dtypes_inexact
from jaxlite._src.numpy.ufuncs import arctan, isposinf, isneginf, sinc
from jaxlite._src.scipy.special import (gammaln, betaln, digamma, gamma, erf, erfc, xlogy,
                                        xlog1py, entr, expit, logit, ndtr, zeta, polygamma,
                                        i0e, i1e, gammainc, gammaincc, logsumexp)


from jaxlite._src.scipy.special_more import (  # noqa: F401
    _lax_const, core, custom_derivatives, jnp_vectorize, jnp_einsum, promote_args_complex,
    gammasgn, loggamma, factorial, comb, beta)


@custom_derivatives.custom_jvp
def poch(z, m):
    """The Pochammer symbol (as jax.scipy.special.poch)."""
    z, m = promote_args_inexact('poch', z, m)
    if dtypes.issubdtype(z.dtype, np.complexfloating):
        raise ValueError('jnp.poch does not support complex-valued inputs.')
    return jnp.where(m == 0.0, jnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


def _poch_z_derivative(z, m):
    return (digamma(z + m) - digamma(z)) * poch(z, m)


def _poch_m_derivative(z, m):
    return digamma(z + m) * poch(z, m)


poch.defjvps(lambda z_dot, primal_out, z, m: _poch_z_derivative(z, m) * z_dot, lambda m_dot, primal_out, z, m: _poch_m_derivative(z, m) * m_dot)


def _hyp1f1_serie(a, b, x):
    precision = dtypes.finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term
        term *= (a + k) / (b + k) * x / (k + 1)
        k += 1
        return (serie, k, term)

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)
    init = (1, 1, a / b * x)
    return lax.while_loop(cond, body, init)[0]


def _hyp1f1_asymptotic(a, b, x):
    precision = dtypes.finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term
        term *= (b - a + k) * (1 - a + k) / (k + 1) / x
        k += 1
        return (serie, k, term)

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)
    init = (1, 1, (b - a) * (1 - a) / x)
    serie = lax.while_loop(cond, body, init)[0]
    return gamma(b) / gamma(a) * lax.exp(x) * x ** (a - b) * serie


@jit
@jnp_vectorize.vectorize
def _hyp1f1_a_derivative(a, b, x):
    precision = dtypes.finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term * (digamma(a + k) - digamma(a))
        term *= (a + k) / (b + k) * x / (k + 1)
        k += 1
        return (serie, k, term)

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)
    init = (0, 1, a / b * x)
    return lax.while_loop(cond, body, init)[0]


@jit
@jnp_vectorize.vectorize
def _hyp1f1_b_derivative(a, b, x):
    precision = dtypes.finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term * (digamma(b) - digamma(b + k))
        term *= (a + k) / (b + k) * x / (k + 1)
        k += 1
        return (serie, k, term)

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)
    init = (0, 1, a / b * x)
    return lax.while_loop(cond, body, init)[0]


@jit
def _hyp1f1_x_derivative(a, b, x):
    return a / b * hyp1f1(a + 1, b + 1, x)


@custom_derivatives.custom_jvp
@jit
@jnp_vectorize.vectorize
def hyp1f1(a, b, x):
    """The 1F1 hypergeometric function (as jax.scipy.special.hyp1f1)."""
    a, b, x = promote_args_inexact('hyp1f1', a, b, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError('hyp1f1 does not support complex-valued inputs.')
    result = lax.cond(lax.abs(x) < 100, _hyp1f1_serie, _hyp1f1_asymptotic, a, b, x)
    index = (a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3
    return lax.select_n(index, result, jnp.array(1, dtype=x.dtype), jnp.exp(x), jnp.array(np.inf, dtype=x.dtype))


hyp1f1.defjvps(lambda a_dot, primal_out, a, b, x: _hyp1f1_a_derivative(a, b, x) * a_dot, lambda b_dot, primal_out, a, b, x: _hyp1f1_b_derivative(a, b, x) * b_dot, lambda x_dot, primal_out, a, b, x: _hyp1f1_x_derivative(a, b, x) * x_dot)


def _hyp2f1_terminal(a, b, c, x):
    eps = dtypes.finfo(x.dtype).eps * 50
    ib = jnp.round(b)
    mask = jnp.logical_and(b < a, jnp.logical_and(jnp.abs(b - ib) < eps, jnp.logical_not(jnp.logical_and(c % 1 == 0, jnp.logical_and(c <= 0, c > b)))))
    orig_a = a
    a = jnp.where(mask, b, a)
    b = jnp.where(mask, orig_a, b)
    a = jnp.abs(a)

    def body(i, state):
        serie, term = state
        term *= -(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x
        serie += term
        return (serie, term)
    init = (jnp.array(1, dtype=x.dtype), jnp.array(1, dtype=x.dtype))
    return lax.fori_loop(jnp.array(1, dtype=a.dtype), a + 1, body, init)[0]


def _hyp2f1_serie(a, b, c, x):
    rtol = dtypes.finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term
        term *= (a + k - 1) * (b + k - 1) / (c + k - 1) / k * x
        k += 1
        return (serie, k, term)

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) > rtol * lax.abs(serie))
    init = (jnp.array(0, dtype=x.dtype), jnp.array(1, dtype=x.dtype), jnp.array(1, dtype=x.dtype))
    return lax.while_loop(cond, body, init)[0]


def _hyp2f1_terminal_or_serie(a, b, c, x):
    eps = dtypes.finfo(x.dtype).eps * 50
    d = c - a - b
    ia = jnp.round(a)
    ib = jnp.round(b)
    id = jnp.round(d)
    neg_int_a = jnp.logical_and(a <= 0, jnp.abs(a - ia) < eps)
    neg_int_b = jnp.logical_and(b <= 0, jnp.abs(b - ib) < eps)
    neg_int_a_or_b = jnp.logical_or(neg_int_a, neg_int_b)
    not_neg_int_a_or_b = jnp.logical_not(neg_int_a_or_b)
    index = jnp.where(jnp.logical_and(x > 0.9, not_neg_int_a_or_b), jnp.where(jnp.abs(d - id) >= eps, 0, 1), jnp.where(neg_int_a_or_b, 2, 0))
    return lax.select_n(index, _hyp2f1_serie(a, b, c, x), _hyp2f1_digamma_transform(a, b, c, x), _hyp2f1_terminal(a, b, c, x))


def _hyp2f1_digamma_transform(a, b, c, x):
    rtol = dtypes.finfo(x.dtype).eps
    d = c - a - b
    s = 1 - x
    rd = jnp.round(d)
    e = jnp.where(rd >= 0, d, -d)
    d1 = jnp.where(rd >= 0, d, jnp.array(0, dtype=d.dtype))
    d2 = jnp.where(rd >= 0, jnp.array(0, dtype=d.dtype), d)
    ard = jnp.where(rd >= 0, rd, -rd).astype('int32')
    ax = jnp.log(s)
    y = digamma(1.0) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - ax
    y /= gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def cond(state):
        _, _, _, _, _, _, q, _, _, t, y = state
        return jnp.logical_and(t < 250, jnp.abs(q) >= rtol * jnp.abs(y))

    def body(state):
        a, ax, b, d1, e, p, q, r, s, t, y = state
        r = digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) - digamma(b + t + d1) - ax
        q = p * r
        y += q
        p *= s * (a + t + d1) / (t + 1.0)
        p *= (b + t + d1) / (t + 1.0 + e)
        t += 1.0
        return (a, ax, b, d1, e, p, q, r, s, t, y)
    init = (a, ax, b, d1, e, p, y, jnp.array(0, dtype=x.dtype), s, jnp.array(1, dtype=x.dtype), y)
    _, _, _, _, _, _, q, r, _, _, y = lax.while_loop(cond, body, init)

    def compute_sum(y):
        y1 = jnp.array(1, dtype=x.dtype)
        t = jnp.array(0, dtype=x.dtype)
        p = jnp.array(1, dtype=x.dtype)

        def for_body(i, state):
            a, b, d2, e, p, s, t, y1 = state
            r = 1.0 - e + t
            p *= s * (a + t + d2) * (b + t + d2) / r
            t += 1.0
            p /= t
            y1 += p
            return (a, b, d2, e, p, s, t, y1)
        init_val = (a, b, d2, e, p, s, t, y1)
        y1 = lax.fori_loop(1, ard, for_body, init_val)[-1]
        p = gamma(c)
        y1 *= gamma(e) * p / (gamma(a + d1) * gamma(b + d1))
        y *= p / (gamma(a + d2) * gamma(b + d2))
        y = jnp.where(ard & 1 != 0, -y, y)
        q = s ** rd
        return jnp.where(rd > 0, y * q + y1, y + y1 * q)
    return jnp.where(rd == 0, y * gamma(c) / (gamma(a) * gamma(b)), compute_sum(y))


@jit
@jnp_vectorize.vectorize
def _hyp2f1_a_derivative(a, b, c, x):
    precision = dtypes.finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term * (digamma(a + k) - digamma(a))
        term *= (a + k) * (b + k) / (c + k) / (k + 1) * x
        k += 1
        return (serie, k, term)

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)
    init = (0, 1, a * b / c * x)
    return lax.while_loop(cond, body, init)[0]


@jit
@jnp_vectorize.vectorize
def _hyp2f1_b_derivative(a, b, c, x):
    precision = dtypes.finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term * (digamma(b + k) - digamma(b))
        term *= (a + k) * (b + k) / (c + k) / (k + 1) * x
        k += 1
        return (serie, k, term)

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)
    init = (0, 1, a * b / c * x)
    return lax.while_loop(cond, body, init)[0]


@jit
@jnp_vectorize.vectorize
def _hyp2f1_c_derivative(a, b, c, x):
    precision = dtypes.finfo(x.dtype).eps

    def body(state):
        serie, k, term = state
        serie += term * (digamma(c) - digamma(c + k))
        term *= (a + k) * (b + k) / (c + k) / (k + 1) * x
        k += 1
        return (serie, k, term)

    def cond(state):
        serie, k, term = state
        return (k < 250) & (lax.abs(term) / lax.abs(serie) > precision)
    init = (0, 1, a * b / c * x)
    return lax.while_loop(cond, body, init)[0]


@jit
def _hyp2f1_x_derivative(a, b, c, x):
    return a * b / c * hyp2f1(a + 1, b + 1, c + 1, x)


@custom_derivatives.custom_jvp
@jit
@jnp_vectorize.vectorize
def hyp2f1(a, b, c, x):
    """The 2F1 hypergeometric function (as jax.scipy.special.hyp2f1)."""
    a, b, c, x = promote_args_inexact('hyp2f1', a, b, c, x)
    eps = dtypes.finfo(x.dtype).eps * 50
    d = c - a - b
    s = 1 - x
    ca = c - a
    cb = c - b
    id = jnp.round(d)
    index = jnp.where(jnp.logical_or(x == 0, jnp.logical_and(jnp.logical_or(a == 0, b == 0), c != 0)), 0, jnp.where(jnp.logical_or(c == 0, jnp.logical_and(c < 0, c % 1 == 0)), 1, jnp.where(jnp.logical_and(d <= -1, jnp.logical_not(jnp.logical_and(jnp.abs(d - id) >= eps, s < 0))), 2, jnp.where(jnp.logical_and(d <= 0, x == 1), 1, jnp.where(jnp.logical_and(x < 1, b == c), 3, jnp.where(jnp.logical_and(x < 1, a == c), 4, jnp.where(x > 1, 1, jnp.where(x == 1, 5, 6))))))))
    return lax.select_n(index, jnp.array(1, dtype=x.dtype), jnp.array(np.inf, dtype=x.dtype), s ** d * _hyp2f1_terminal_or_serie(ca, cb, c, x), s ** (-a), s ** (-b), gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)), _hyp2f1_terminal_or_serie(a, b, c, x))


hyp2f1.defjvps(lambda a_dot, primal_out, a, b, c, x: _hyp2f1_a_derivative(a, b, c, x) * a_dot, lambda b_dot, primal_out, a, b, c, x: _hyp2f1_b_derivative(a, b, c, x) * b_dot, lambda c_dot, primal_out, a, b, c, x: _hyp2f1_c_derivative(a, b, c, x) * c_dot, lambda x_dot, primal_out, a, b, c, x: _hyp2f1_x_derivative(a, b, c, x) * x_dot)


_OWENS_T_QUAD_PTS = np.array([0.0035082039676451716, 0.031279042338030756, 0.08526682628321945, 0.16245071730812277, 0.25851196049125436, 0.3680755384069753, 0.485010929056047, 0.6027751415261857, 0.7147788421775323, 0.814755109887601, 0.8971102975594897, 0.9572380808594426, 0.991788329746297])


_OWENS_T_QUAD_WTS = np.array([0.018831438115323503, 0.01856708624397765, 0.018042093461223385, 0.017263829606398752, 0.016243219975989858, 0.014994592034116705, 0.013535474469662087, 0.011886351605820165, 0.010070377242777432, 0.008113054574229958, 0.006041900952847024, 0.0038862217010742057, 0.001679303108454609])


def _owens_t_quadrature(h, a):
    quad_pts = jnp.expand_dims(_OWENS_T_QUAD_PTS, tuple(range(a.ndim)))
    r = jnp.square(a)[..., None] * quad_pts
    integrand = jnp.exp(-0.5 * jnp.square(h)[..., None] * (1.0 + r)) / (1.0 + r)
    return a * (integrand @ _OWENS_T_QUAD_WTS)


@custom_derivatives.custom_jvp
def _owens_t_impl(h, a):
    h = jnp.abs(h)
    abs_a = jnp.abs(a)
    root_2 = _lax_const(h, np.sqrt(2))
    h_normed = h / root_2
    modified_a = jnp.where(abs_a <= 1.0, abs_a, jnp.reciprocal(abs_a))
    modified_h = jnp.where(abs_a <= 1.0, h, abs_a * h)
    result = _owens_t_quadrature(modified_h, modified_a)
    result = jnp.where(modified_h == 0.0, arctan(modified_a) / (2 * np.pi), result)
    result = jnp.where(modified_a == 1.0, 0.125 * lax.erfc(-modified_h / root_2) * lax.erfc(modified_h / root_2), result)
    normh = lax.erfc(h_normed)
    normah = lax.erfc(abs_a * h_normed)
    result = jnp.where(abs_a > 1.0, jnp.where(abs_a * h <= 0.67, 0.25 - 0.25 * lax.erf(h_normed) * lax.erf(abs_a * h_normed) - result, 0.25 * (normh + normah - normh * normah) - result), result)
    result = lax.sign(a) * result
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.full_like(result, jnp.nan), result)


def _owens_t_jvp(primals, tangents):
    h, a = primals
    dh, da = tangents
    result = _owens_t_impl(h, a)
    root_2 = _lax_const(h, np.sqrt(2))
    dout_dh = -lax.exp(-0.5 * lax.square(h)) * lax.erf(a * h / root_2) / (2.0 * _lax_const(h, np.sqrt(2.0 * np.pi)))
    dout_da = lax.exp(-0.5 * (lax.square(a) + 1.0) * lax.square(h)) / (2.0 * np.pi * (lax.square(a) + 1.0))
    return (result, (dout_dh * dh + dout_da * da).astype(result.dtype))


_owens_t_impl.defjvp(_owens_t_jvp)


def owens_t(h, a):
    """Owen's T function (as jax.scipy.special.owens_t)."""
    h, a = promote_args_inexact('owens_t', h, a)
    return _owens_t_impl(h, a)
