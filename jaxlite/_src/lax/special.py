"""lax's special functions (erf, erfc, erf_inv, lgamma, digamma, polygamma, igamma, igammac,
igamma_grad_a, bessel_i0e, bessel_i1e, zeta, betainc)."""
from __future__ import annotations

from jaxlite._src.prims import special as sp
from jaxlite._src.prims.operands import asarray_value as _v

__all__ = ["erf", "erfc", "erf_inv", "lgamma", "digamma", "polygamma", "igamma", "igammac",
           "igamma_grad_a", "bessel_i0e", "bessel_i1e", "zeta", "betainc"]


def erf(x):
    """Error function."""
    return sp.erf_p.bind(_v(x))


def erfc(x):
    """Complementary error function ``1 - erf(x)``."""
    return sp.erfc_p.bind(_v(x))


def erf_inv(x):
    """Inverse error function."""
    return sp.erf_inv_p.bind(_v(x))


def lgamma(x):
    """Log of the absolute value of the gamma function."""
    return sp.lgamma_p.bind(_v(x))


def digamma(x):
    """The digamma function (derivative of lgamma)."""
    return sp.digamma_p.bind(_v(x))


def polygamma(m, x):
    """The ``m``-th derivative of digamma."""
    return sp.polygamma_p.bind(_v(m), _v(x))


def igamma(a, x):
    """Regularized lower incomplete gamma function P(a, x)."""
    return sp.igamma_p.bind(_v(a), _v(x))


def igammac(a, x):
    """Regularized upper incomplete gamma function Q(a, x)."""
    return sp.igammac_p.bind(_v(a), _v(x))


def igamma_grad_a(a, x):
    """The derivative of the regularized lower incomplete gamma P(a, x) with respect to
    ``a``."""
    return sp.igamma_grad_a_p.bind(_v(a), _v(x))


def bessel_i0e(x):
    """Exponentially scaled modified Bessel function of order 0."""
    return sp.bessel_i0e_p.bind(_v(x))


def bessel_i1e(x):
    """Exponentially scaled modified Bessel function of order 1."""
    return sp.bessel_i1e_p.bind(_v(x))


def zeta(x, q):
    """Hurwitz zeta function."""
    return sp.zeta_p.bind(_v(x), _v(q))


def betainc(a, b, x):
    """Regularized incomplete beta function I_x(a, b)."""
    return sp.regularized_incomplete_beta_p.bind(_v(a), _v(b), _v(x))
