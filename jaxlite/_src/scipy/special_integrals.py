"""Exponential, sine/cosine integrals and the dilogarithm: exp1, expi, expn, sici, spence.

Written for jaxlite from the classical expansions (DLMF 6.6, 6.9, 8.19, 25.12): power series
for small arguments, the continued fraction
``E_n(z) = e^-z / (z + n - 1 n / (z + n + 2 - 2 (n + 1) / (z + n + 4 - ...)))`` (evaluated
bottom-up with a fixed depth, so the functions trace to straight-line code) for large ones,
and the reflection/Landen identities of the dilogarithm. Every branch sees only arguments
of its own range, so values and gradients stay finite."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["exp1", "expi", "expn", "sici", "spence"]

_EULER = 0.57721566490153286061
_PI2_6 = np.pi ** 2 / 6


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _c(v, like):
    return np.asarray(v, like.dtype)


def _en_cf(n, x, depth=80):
    """``E_n(x)`` by the continued fraction above (good for x >= 1), bottom-up."""
    jnp = _np()
    acc = x + n + 2 * depth
    for j in range(depth, 0, -1):
        acc = x + n + 2 * (j - 1) - (j * (n + j - 1)) / acc
    return jnp.exp(-x) / acc


def _real_only(name, x):
    if _np().iscomplexobj(x):
        raise NotImplementedError(f"{name} of complex arguments is not implemented")


def _exp1_impl(x):
    jnp = _np()
    small = x <= 1
    # series: E1(x) = -gamma - log x - sum_{k>=1} (-x)^k / (k k!)
    xs = jnp.where(jnp.logical_and(small, x > 0), x, _c(0.5, x))
    term, total = -xs, -xs
    for k in range(2, 30):
        term = term * (-xs) / k
        total = total + term / k
    series = -_c(_EULER, x) - jnp.log(xs) - total
    xl = jnp.where(small, _c(2, x), x)
    out = jnp.where(small, series, _en_cf(_c(1, x), xl))
    out = jnp.where(x == 0, _c(np.inf, x), out)
    return jnp.where(x < 0, _c(np.nan, x), out)


def _expi_impl(x):
    jnp = _np()
    # Ei(x) = -E1(-x) for x < 0
    xneg = jnp.where(x < 0, -x, _c(1, x))
    neg = -_exp1_impl(xneg)
    # 0 < x <= 40: series Ei(x) = gamma + log x + sum x^k / (k k!) (positive terms)
    mid = jnp.logical_and(x > 0, x <= 40)
    xs = jnp.where(mid, x, _c(1, x))
    term, total = xs, xs
    for k in range(2, 140):
        term = term * xs / k
        total = total + term / k
    series = _c(_EULER, x) + jnp.log(xs) + total
    # x > 40: asymptotic Ei(x) ~ e^x / x sum_k k! / x^k, summed to its smallest term
    xl = jnp.where(x > 40, x, _c(50, x))
    term, total = jnp.ones_like(xl), jnp.ones_like(xl)
    for k in range(1, 40):
        term = term * k / xl
        total = total + term
    asym = jnp.exp(xl) / xl * total
    out = jnp.where(x < 0, neg, jnp.where(mid, series, asym))
    return jnp.where(x == 0, _c(-np.inf, x), out)


def _make(impl, deriv):
    from jaxlite._src.api.custom_derivatives import custom_jvp

    @custom_jvp
    def f(x):
        return impl(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        x = _np().asarray(x)
        return f(x), deriv(x) * t
    return f


_cache = {}


def _cj(key, impl, deriv):
    if key not in _cache:
        _cache[key] = _make(impl, deriv)
    return _cache[key]


def exp1(x):
    """Exponential integral ``E1(x) = integral_x^inf exp(-t)/t dt`` for real x >= 0 (NaN for
    x < 0, inf at 0)."""
    jnp = _np()
    (x,) = promote_args_inexact("exp1", x)
    _real_only("exp1", x)
    return _cj("exp1", _exp1_impl, lambda v: -jnp.exp(-v) / v)(x)


def expi(x):
    """Exponential integral ``Ei(x) = PV integral_-inf^x exp(t)/t dt`` (``-E1(-x)`` for
    x < 0, -inf at 0)."""
    jnp = _np()
    (x,) = promote_args_inexact("expi", x)
    _real_only("expi", x)
    return _cj("expi", _expi_impl, lambda v: jnp.exp(v) / v)(x)


def expn(n, x):
    """Generalized exponential integral ``E_n(x) = integral_1^inf exp(-x t) / t^n dt`` for
    integer ``n >= 0`` and x >= 0 (NaN for n < 0, x < 0 or non-integer n)."""
    from jaxlite._src.scipy.special_basic import digamma, gammaln
    jnp = _np()
    n, x = promote_args_inexact("expn", n, x)
    _real_only("expn", x)
    n, x = jnp.broadcast_arrays(n, x)
    bad = jnp.logical_or(jnp.logical_or(n < 0, x < 0), jnp.floor(n) != n)
    ns = jnp.where(bad, _c(1, n), n)
    small = x <= 1
    pos = x > 0
    # n == 0: E0(x) = exp(-x) / x
    xz = jnp.where(pos, x, _c(1, x))
    e0 = jnp.exp(-xz) / xz
    # series (x <= 1, n >= 1): E_n(x) = (-x)^(n-1)/(n-1)! (psi(n) - log x)
    #                                   - sum_{k != n-1} (-x)^k / ((k - n + 1) k!)
    xs = jnp.where(jnp.logical_and(small, pos), x, _c(0.5, x))
    nn = jnp.where(ns >= 1, ns, _c(1, n))
    lead_mag = jnp.exp((nn - 1) * jnp.log(xs) - gammaln(nn))
    lead_sign = jnp.where(jnp.remainder(nn - 1, 2) != 0, _c(-1, x), _c(1, x))
    lead = lead_sign * lead_mag * (digamma(nn) - jnp.log(xs))
    power = jnp.ones_like(xs)          # (-x)^k / k!
    total = jnp.zeros_like(xs)
    for k in range(0, 40):
        if k > 0:
            power = power * (-xs) / k
        denom = k - nn + 1
        total = total + jnp.where(denom == 0, _c(0, x),
                                  power / jnp.where(denom == 0, _c(1, x), denom))
    series = lead - total
    xl = jnp.where(small, _c(2, x), x)
    cf = _en_cf(nn, xl)
    out = jnp.where(small, series, cf)
    out = jnp.where(ns == 0, e0, out)
    # x == 0: 1/(n-1) for n > 1, inf otherwise
    at0 = jnp.where(ns > 1, 1 / jnp.where(ns > 1, ns - 1, _c(1, n)), _c(np.inf, x))
    out = jnp.where(x == 0, at0, out)
    return jnp.where(bad, _c(np.nan, x), out)


def sici(x):
    """Sine and cosine integrals ``(Si(x), Ci(x))``: ``Si(x) = integral_0^x sin t / t dt``
    (odd) and ``Ci(x) = gamma + log|x| + integral_0^|x| (cos t - 1)/t dt``."""
    jnp = _np()
    (x,) = promote_args_inexact("sici", x)
    _real_only("sici", x)
    sgn = jnp.where(x < 0, _c(-1, x), _c(1, x))
    ax = jnp.abs(x)
    small = ax <= 4
    xs = jnp.where(jnp.logical_and(small, ax > 0), ax, _c(1, x))
    x2 = xs * xs
    # Si = sum (-1)^k x^(2k+1) / ((2k+1) (2k+1)!); Ci - gamma - log x =
    #      sum_{k>=1} (-1)^k x^(2k) / (2k (2k)!)
    odd = xs                      # (-1)^k x^(2k+1)/(2k+1)!
    si_s = xs
    even = jnp.ones_like(xs)      # (-1)^k x^(2k)/(2k)!
    ci_s = jnp.zeros_like(xs)
    for k in range(1, 25):
        even = -even * x2 / ((2 * k - 1) * (2 * k))
        ci_s = ci_s + even / (2 * k)
        odd = -odd * x2 / ((2 * k) * (2 * k + 1))
        si_s = si_s + odd / (2 * k + 1)
    ci_small = _c(_EULER, x) + jnp.log(xs) + ci_s
    # large: E1(i x) = -Ci(x) + i (Si(x) - pi/2), from the continued fraction
    xl = jnp.where(small, _c(8, x), ax)
    cdt = np.complex128 if x.dtype == np.float64 else np.complex64
    z = jnp.asarray(xl, cdt) * np.asarray(1j, cdt)
    acc = z + (1 + 2 * 100)
    for j in range(100, 0, -1):
        acc = z + (1 + 2 * (j - 1)) - (j * j) / acc
    e1 = jnp.exp(-z) / acc
    si_l = np.pi / 2 + jnp.imag(e1)
    ci_l = -jnp.real(e1)
    si = jnp.where(small, si_s, si_l.astype(x.dtype))
    ci = jnp.where(small, ci_small, ci_l.astype(x.dtype))
    si = jnp.where(ax == 0, _c(0, x), sgn * si)
    ci = jnp.where(ax == 0, _c(-np.inf, x), ci)
    si = jnp.where(ax == np.inf, sgn * _c(np.pi / 2, x), si)
    ci = jnp.where(ax == np.inf, _c(0, x), ci)
    return si, ci


def _li2_series(y, terms=60):
    """``Li2(y) = sum_k y^k / k^2`` for |y| <= 1/2."""
    jnp = _np()
    power, total = y, y
    for k in range(2, terms):
        power = power * y
        total = total + power / (k * k)
    return total


def spence(x):
    """Spence's function (SciPy's convention) ``integral_1^x log t / (1 - t) dt``, i.e. the
    dilogarithm ``Li2(1 - x)``, for real x >= 0 (NaN below 0)."""
    jnp = _np()
    (x,) = promote_args_inexact("spence", x)
    _real_only("spence", x)
    # 1/2 <= x <= 3/2: series in y = 1 - x
    mid = jnp.logical_and(x >= 0.5, x <= 1.5)
    ym = jnp.where(mid, 1 - x, _c(0, x))
    v_mid = _li2_series(ym)
    # 0 <= x < 1/2: Li2(1 - x) = pi^2/6 - log(x) log(1 - x) - Li2(x)
    low = x < 0.5
    xlo = jnp.where(jnp.logical_and(low, x > 0), x, _c(0.25, x))
    v_low = _c(_PI2_6, x) - jnp.log(xlo) * jnp.log1p(-xlo) - _li2_series(xlo)
    v_low = jnp.where(x == 0, _c(_PI2_6, x), v_low)
    # x > 3/2: Landen, Li2(1 - x) = -Li2((x - 1)/x) - log(x)^2 / 2, and for w = (x-1)/x
    # > 1/2 the reflection Li2(w) = pi^2/6 - log(w) log(1 - w) - Li2(1 - w), 1 - w = 1/x
    high = x > 1.5
    xh = jnp.where(high, x, _c(2, x))
    w = (xh - 1) / xh
    lw = jnp.where(w <= 0.5, _li2_series(jnp.where(w <= 0.5, w, _c(0, x))),
                   _c(_PI2_6, x) - jnp.log(w) * jnp.log1p(-w)
                   - _li2_series(jnp.where(w <= 0.5, _c(0, x), 1 / xh)))
    lx = jnp.log(xh)
    v_high = -lw - lx * lx / 2
    out = jnp.where(mid, v_mid, jnp.where(low, v_low, v_high))
    return jnp.where(x < 0, _c(np.nan, x), out)
