"""jax.scipy.special: logsumexp and the special functions (on lax's special primitives).

``logsumexp``, ``softmax`` and ``log_softmax`` are jax.nn's (``nn/functions.py``), as in JAX
where both namespaces share one implementation."""
from __future__ import annotations

import numpy as np

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as ls
from jaxlite._src.nn.functions import log_softmax as _nn_log_softmax
from jaxlite._src.nn.functions import logsumexp  # noqa: F401  (re-exported)
from jaxlite._src.nn.functions import softmax as _nn_softmax
from jaxlite._src.api.custom_derivatives import custom_jvp
from jaxlite._src.numpy.util import asarray_value, promote_args_inexact
from jaxlite._src.scipy.special_basic import (  # noqa: F401  (re-exported)
    digamma, erf, erfc, erfinv, expit, gammaln, i0e, i1e)
from jaxlite._src.scipy.special_normal import log_ndtr, ndtr, ndtri  # noqa: F401

__all__ = ["logsumexp", "erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma",
           "xlogy", "xlog1py", "expit", "logit", "betaln", "multigammaln", "gamma",
           "gammainc", "gammaincc", "i0e", "i1e", "i0", "i1", "zeta", "betainc", "log_ndtr",
           "ndtr", "ndtri", "entr", "softmax", "log_softmax", "sinc"]

from jaxlite._src.scipy import special_error_family as _sef  # noqa: E402
from jaxlite._src.scipy import special_gamma_family as _sgf  # noqa: E402
from jaxlite._src.scipy.special_error_family import *  # noqa: E402,F401,F403
from jaxlite._src.scipy.special_gamma_family import *  # noqa: E402,F401,F403
from jaxlite._src.scipy import special_integrals as _sin  # noqa: E402
from jaxlite._src.scipy.special_integrals import *  # noqa: E402,F401,F403
from jaxlite._src.scipy.special_owens import owens_t  # noqa: E402,F401
from jaxlite._src.scipy.special_bessel import bessel_jn  # noqa: E402,F401
from jaxlite._src.scipy.special_kummer import hyp1f1  # noqa: E402,F401
from jaxlite._src.scipy.special_sph_harm import sph_harm_y  # noqa: E402,F401
from jaxlite._src.scipy.special_faddeeva import wofz  # noqa: E402,F401
from jaxlite._src.scipy.special_gauss_hyp import hyp2f1  # noqa: E402,F401

__all__ += _sef.__all__ + _sgf.__all__ + _sin.__all__ + ["owens_t", "bessel_jn", "hyp1f1",
                                                         "sph_harm_y", "wofz", "hyp2f1"]


def gamma(x):
    """The gamma function: ``gammasgn(x) * exp(gammaln(x))`` (as JAX; NaN at the poles and
    -inf, ``+-inf`` at ``+-0``)."""
    (x,) = promote_args_inexact("gamma", x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError("jax.scipy.special.gamma of complex inputs is not "
                                  "implemented in jaxlite; use real inputs")
    return lax.mul(_sgf.gammasgn(x), lax.exp(ls.lgamma(x)))


def i0(x):
    """Modified Bessel function of order 0."""
    (x,) = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), ls.bessel_i0e(x))


def i1(x):
    """Modified Bessel function of order 1."""
    (x,) = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), ls.bessel_i1e(x))


def polygamma(n, x):
    """The ``n``-th derivative of digamma."""
    n, x = promote_args_inexact("polygamma", n, x)
    return ls.polygamma(n, x)


def gammainc(a, x):
    """Regularized lower incomplete gamma function."""
    a, x = promote_args_inexact("gammainc", a, x)
    return ls.igamma(a, x)


def gammaincc(a, x):
    """Regularized upper incomplete gamma function."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return ls.igammac(a, x)


def zeta(x, q=None):
    """Hurwitz zeta function (Riemann zeta when ``q`` is None)."""
    if q is None:
        q = 1.0
    x, q = promote_args_inexact("zeta", x, q)
    return ls.zeta(x, q)


def betainc(a, b, x):
    """Regularized incomplete beta function."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    return ls.betainc(a, b, x)


def _c(x, v):
    """``v`` shaped and typed like ``x`` (weak when x is)."""
    from jaxlite._src.lax.shape import full_like
    return full_like(x, v)


@custom_jvp
def _xlogy(x, y):
    from jaxlite._src.numpy import ufuncs as U
    from jaxlite._src.numpy.creation import zeros_like
    # NaN in y propagates also where x == 0 (as scipy's and JAX's)
    x_ok = lax.ne(x, np.asarray(0, x.dtype))
    return U.where(lax.bitwise_or(x_ok, lax.ne(y, y)), lax.mul(x, lax.log(y)), zeros_like(x))


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    # written out, so the derivative in y at x == 0 is x / y = 0 (not 0 * inf)
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), lax.add(lax.mul(tx, lax.log(y)), lax.div(lax.mul(ty, x), y))


@custom_jvp
def _xlog1py(x, y):
    from jaxlite._src.numpy import ufuncs as U
    from jaxlite._src.numpy.creation import zeros_like
    # NaN in y propagates also where x == 0 (as scipy's and JAX's)
    x_ok = lax.ne(x, np.asarray(0, x.dtype))
    return U.where(lax.bitwise_or(x_ok, lax.ne(y, y)), lax.mul(x, lax.log1p(y)), zeros_like(x))


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), lax.add(lax.mul(tx, lax.log1p(y)),
                                   lax.div(lax.mul(ty, x), lax.add(_c(y, 1), y)))


def xlogy(x, y):
    """``x * log(y)``, zero where ``x == 0`` unless ``y`` is NaN (its derivative too, as
    JAX's rule)."""
    x, y = promote_args_inexact("xlogy", x, y)
    return _xlogy(asarray_value(x), asarray_value(y))


def xlog1py(x, y):
    """``x * log1p(y)``, zero where ``x == 0`` unless ``y`` is NaN (its derivative too, as
    JAX's rule)."""
    x, y = promote_args_inexact("xlog1py", x, y)
    return _xlog1py(asarray_value(x), asarray_value(y))


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _xlogx(x), lax.mul(t, lax.add(lax.log(x), _c(x, 1)))


def entr(x):
    """Elementwise entropy ``-x log x`` (0 at 0, -inf for negative x); its derivative is
    ``-(log x + 1)`` (+inf at 0, as JAX)."""
    (x,) = promote_args_inexact("entr", x)
    x = asarray_value(x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("entr does not support complex-valued inputs.")
    return lax.select(lax.lt(x, np.asarray(0, x.dtype)), _c(x, -np.inf), lax.neg(_xlogx(x)))


@custom_jvp
def _logit(x):
    return lax.log(lax.div(x, lax.sub(np.asarray(1, x.dtype), x)))


@_logit.defjvp
def _logit_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _logit(x), lax.div(t, lax.mul(x, lax.sub(_c(x, 1), x)))


def logit(x):
    """``log(x / (1 - x))``, differentiated as ``1 / (x (1 - x))`` (inf at 0 and 1)."""
    (x,) = promote_args_inexact("logit", x)
    return _logit(asarray_value(x))


def _algdiv(a, b):
    """``log(gamma(b) / gamma(a + b))`` for ``a <= b``, ``b >= 8`` (cdflib's algdiv, as
    JAX: Stirling's series with the correction terms ``del(b) - del(a + b)``)."""
    from jaxlite._src.numpy import ufuncs as U
    c0, c1, c2 = 0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03
    c3, c4, c5 = -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02
    h = a / b
    c = h / (1 + h)
    x = h / (1 + h)
    d = b + (a - 0.5)
    # sN = (1 - x**n) / (1 - x)
    x2 = x * x
    s3 = 1.0 + (x + x2)
    s5 = 1.0 + (x + x2 * s3)
    s7 = 1.0 + (x + x2 * s5)
    s9 = 1.0 + (x + x2 * s7)
    s11 = 1.0 + (x + x2 * s9)
    # w = del(b) - del(a + b), ln(gamma(x)) = (x - 0.5) ln(x) - x + ln(2 pi)/2 + del(x)
    t = (1.0 / b) ** 2
    w = ((((c5 * s11 * t + c4 * s9) * t + c3 * s7) * t + c2 * s5) * t + c1 * s3) * t + c0
    w = w * (c / b)
    u = d * lax.log1p(a / b)
    v = a * (lax.log(b) - 1.0)
    return U.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
    """``log(|B(a, b)|)``: ``lgamma(a) + (lgamma(b) - lgamma(a + b))`` for ``max(a, b) <
    8``, else ``lgamma(a) + algdiv(a, b)`` (cdflib's series, accurate for large arguments;
    JAX's algorithm)."""
    from jaxlite._src.numpy import ufuncs as U
    a, b = promote_args_inexact("betaln", a, b)
    a, b = asarray_value(a), asarray_value(b)
    a, b = U.minimum(a, b), U.maximum(a, b)
    small_b = ls.lgamma(a) + (ls.lgamma(b) - ls.lgamma(a + b))
    large_b = ls.lgamma(a) + _algdiv(a, b)
    return U.where(b < 8, small_b, large_b)


def multigammaln(a, d):
    """Log of the multivariate gamma function of dimension ``d``: ``sum_j gammaln(a - j/2) +
    d (d - 1) log(pi) / 4`` (the constant computed in ``a``'s dtype, as JAX)."""
    from jaxlite._src.numpy import reductions as R
    from jaxlite._src.numpy.creation import arange
    from jaxlite._src.numpy.extra_creation import concrete
    from jaxlite._src.numpy.shape_ops import expand_dims
    d = concrete(int, d, "d argument of multigammaln")
    a, d_ = promote_args_inexact("multigammaln", a, d)
    c = np.asarray
    constant = lax.mul(lax.mul(lax.mul(c(0.25, a.dtype), d_), lax.sub(d_, c(1, a.dtype))),
                       lax.log(c(np.pi, a.dtype)))
    b = lax.div(arange(d, dtype=d_.dtype), c(2, a.dtype))
    res = R.sum(gammaln(expand_dims(a, -1) - expand_dims(b, tuple(range(a.ndim)))), axis=-1)
    return res + constant


def sinc(x):
    """``sin(pi x) / (pi x)``."""
    from jaxlite._src.numpy.ufuncs import sinc as _sinc
    return _sinc(x)


def softmax(x, /, *, axis=None):
    """Softmax along ``axis`` (all axes when None), as jax.nn.softmax."""
    return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """Log-softmax along ``axis`` (all axes when None), as jax.nn.log_softmax."""
    return _nn_log_softmax(x, axis=axis)
