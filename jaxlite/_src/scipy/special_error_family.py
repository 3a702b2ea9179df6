"""Scaled error functions: erfcx (``exp(x^2) erfc(x)``) and Dawson's integral.

Written for jaxlite: erfcx uses the direct product where ``erfc`` is representable and
Laplace's continued fraction for erfc (DLMF 7.9.2) in the tail; Dawson's integral uses its
Maclaurin series near zero and Rybicki's exponentially convergent sum elsewhere (the
sampling-theorem formula described in Numerical Recipes, sec. 6.10). Both carry custom
JVPs from their differential equations ``f' = 2 x f - 2/sqrt(pi)`` and ``F' = 1 - 2 x F``."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["erfcx", "dawsn"]

_INV_SQRT_PI = 1.0 / np.sqrt(np.pi)


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _erfcx_impl(x):
    from jaxlite._src.lax import special as ls
    jnp = _np()
    dt = x.dtype
    big = np.asarray(5.0, dt)
    # direct product below the threshold (overflows to +inf correctly for very negative x)
    xd = jnp.where(x < big, x, big)
    direct = jnp.exp(xd * xd) * ls.erfc(xd)
    # continued fraction erfc(x) e^{x^2} sqrt(pi) = 1/(x + (1/2)/(x + 1/(x + (3/2)/(x+...))))
    xt = jnp.where(x < big, big, x)
    acc = xt
    for k in range(40, 0, -1):
        acc = xt + np.asarray(k / 2.0, dt) / acc
    tail = np.asarray(_INV_SQRT_PI, dt) / acc
    return jnp.where(x < big, direct, tail)


def _make_erfcx():
    from jaxlite._src.api.custom_derivatives import custom_jvp

    @custom_jvp
    def f(x):
        return _erfcx_impl(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        x = _np().asarray(x)
        y = f(x)
        return y, (2 * x * y - np.asarray(2 * _INV_SQRT_PI, x.dtype)) * t
    return f


_erfcx_cj = None


def erfcx(x):
    """Scaled complementary error function ``exp(x**2) * erfc(x)``, accurate for large
    positive ``x`` (where ``erfc`` underflows) via Laplace's continued fraction."""
    global _erfcx_cj
    (x,) = promote_args_inexact("erfcx", x)
    if _np().iscomplexobj(x):
        raise NotImplementedError("erfcx of complex arguments is not implemented")
    if _erfcx_cj is None:
        _erfcx_cj = _make_erfcx()
    return _erfcx_cj(x)


_H = 0.25           # Rybicki step: discretisation error ~ exp(-(pi / (2 h))^2) ~ 7e-18
_NTERMS = 14        # odd offsets +-1, +-3, ..., +-(2*_NTERMS - 1); exp(-(27 h)^2) ~ 1e-20


def _dawsn_impl(x):
    jnp = _np()
    dt = x.dtype
    ax = jnp.abs(x)
    small = ax < np.asarray(0.2, dt)
    # Maclaurin: F(x) = sum_n (-1)^n 2^n x^(2n+1) / (1*3*...*(2n+1))
    xs = jnp.where(small, x, np.asarray(0, dt))
    x2 = xs * xs
    term, total = xs, xs
    for n in range(1, 12):
        term = term * (-2 * x2) / np.asarray(2 * n + 1, dt)
        total = total + term
    # Rybicki: F(x) ~ (1/sqrt(pi)) sum_{n odd} exp(-(x - n h)^2) / n, re-centred on the even
    # multiple n0 h nearest to |x| so the needed terms are the few with small |x - n h|
    xl = jnp.where(small, np.asarray(1, dt), ax)
    n0 = 2 * jnp.round(xl / (2 * _H))
    xp = xl - n0 * _H
    s = jnp.zeros_like(xl)
    for i in range(-(2 * _NTERMS - 1), 2 * _NTERMS, 2):
        s = s + jnp.exp(-(xp - i * _H) ** 2) / (n0 + i)
    large = jnp.sign(x) * np.asarray(_INV_SQRT_PI, dt) * s
    # far out the sum's denominators are ~x and its terms only cover +-7 around x; switch
    # to the asymptotic series 1/(2x) (1 + 1/(2x^2) + 3/(4x^4) + ...)
    far = ax > np.asarray(50.0, dt)
    xf = jnp.where(far, x, np.asarray(50.0, dt))
    y = 1 / (2 * xf * xf)
    asym = (1 + y * (1 + 3 * y * (1 + 5 * y * (1 + 7 * y)))) / (2 * xf)
    return jnp.where(small, total, jnp.where(far, asym, large))


def _make_dawsn():
    from jaxlite._src.api.custom_derivatives import custom_jvp

    @custom_jvp
    def f(x):
        return _dawsn_impl(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        x = _np().asarray(x)
        y = f(x)
        return y, (1 - 2 * x * y) * t
    return f


_dawsn_cj = None


def dawsn(x):
    """Dawson's integral ``F(x) = exp(-x**2) * integral_0^x exp(t**2) dt``."""
    global _dawsn_cj
    (x,) = promote_args_inexact("dawsn", x)
    if _np().iscomplexobj(x):
        raise NotImplementedError("dawsn of complex arguments is not implemented")
    if _dawsn_cj is None:
        _dawsn_cj = _make_dawsn()
    return _dawsn_cj(x)
