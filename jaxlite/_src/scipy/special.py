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
    digamma, erf, erfc, erfinv, expit, gammaln, i0e, i1e, ndtr)

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
    """The gamma function (``sign * exp(gammaln(x))``)."""
    from jaxlite._src.numpy import ufuncs as U
    (x,) = promote_args_inexact("gamma", x)
    sign = U.where(U.logical_or(U.greater(x, 0), U.equal(U.floor(x), x)), 1.0,
                   U.where(U.equal(U.remainder(U.floor(x), 2), 0), 1.0, -1.0))
    return U.multiply(sign.astype(x.dtype), lax.exp(ls.lgamma(x)))


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
    return U.where(U.equal(x, 0), _c(x, 0), U.multiply(x, U.log(y)))


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    # written out, so the derivative in y at x == 0 is x / y = 0 (not 0 * inf)
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), lax.add(lax.mul(tx, lax.log(y)), lax.div(lax.mul(ty, x), y))


@custom_jvp
def _xlog1py(x, y):
    from jaxlite._src.numpy import ufuncs as U
    return U.where(U.equal(x, 0), _c(x, 0), U.multiply(x, U.log1p(y)))


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), lax.add(lax.mul(tx, lax.log1p(y)),
                                   lax.div(lax.mul(ty, x), lax.add(_c(y, 1), y)))


def xlogy(x, y):
    """``x * log(y)``, zero where ``x == 0`` (its derivative too, as JAX's rule)."""
    x, y = promote_args_inexact("xlogy", x, y)
    return _xlogy(asarray_value(x), asarray_value(y))


def xlog1py(x, y):
    """``x * log1p(y)``, zero where ``x == 0`` (its derivative too, as JAX's rule)."""
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
    from jaxlite._src.numpy import ufuncs as U
    (x,) = promote_args_inexact("entr", x)
    x = asarray_value(x)
    return U.where(U.less(x, 0), np.asarray(-np.inf, x.dtype), U.negative(_xlogx(x)))


@custom_jvp
def _logit(x):
    from jaxlite._src.numpy import ufuncs as U
    return U.log(U.divide(x, U.subtract(_c(x, 1), x)))


@_logit.defjvp
def _logit_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _logit(x), lax.div(t, lax.mul(x, lax.sub(_c(x, 1), x)))


def logit(x):
    """``log(x / (1 - x))``, differentiated as ``1 / (x (1 - x))`` (inf at 0 and 1)."""
    (x,) = promote_args_inexact("logit", x)
    return _logit(asarray_value(x))


def betaln(a, b):
    """``log(|B(a, b)|)``."""
    a, b = promote_args_inexact("betaln", a, b)
    return lax.sub(lax.add(ls.lgamma(a), ls.lgamma(b)), ls.lgamma(lax.add(a, b)))


def multigammaln(a, d):
    """Log of the multivariate gamma function of dimension ``d``."""
    from jaxlite._src.numpy import reductions as R
    from jaxlite._src.numpy import ufuncs as U
    from jaxlite._src.numpy.creation import arange
    from jaxlite._src.numpy.shape_ops import expand_dims
    (a,) = promote_args_inexact("multigammaln", a)
    d = int(d)
    constant = 0.25 * d * (d - 1) * np.log(np.pi)
    res = R.sum(gammaln(U.subtract(expand_dims(a, -1), arange(d, dtype=a.dtype) / 2)),
                axis=-1)
    return U.add(res, np.asarray(constant, a.dtype))


def ndtri(p):
    """The inverse of the standard normal CDF."""
    (p,) = promote_args_inexact("ndtri", p)
    two = np.asarray(2, p.dtype)
    return lax.mul(np.asarray(np.sqrt(2), p.dtype),
                   ls.erf_inv(lax.sub(lax.mul(two, p), np.asarray(1, p.dtype))))


def log_ndtr(x, series_order=3):
    """``log(ndtr(x))``, accurate in the lower tail: ``log(erfcx(-x/sqrt2) / 2) - x²/2``
    for -5 > x >= far, ``log1p(-ndtr(-x))`` for x > 0, and below ``far`` (-8 in float32, -20 in float64, where erfc
    underflows) the asymptotic expansion ``-x²/2 - log(-x) - log(2 pi)/2 + log(sum_{n <=
    series_order} (-1)^n (2n-1)!! / x^{2n})``."""
    if not isinstance(series_order, int) or series_order < 0 or series_order > 30:
        raise ValueError("series_order must be a non-negative int no larger than 30.")
    from jaxlite._src.numpy import ufuncs as U
    (x,) = promote_args_inexact("log_ndtr", x)
    dt = x.dtype

    def c(v):
        return np.asarray(v, dt)
    far = c(-8.0 if np.finfo(dt).bits <= 32 else -20.0)
    # each branch sees only inputs in its own range (no inf/NaN, also in gradients)
    xm = U.where(U.less(x, far), far, U.where(U.less(x, c(-5.0)), x, c(-5.0)))
    mid = U.subtract(U.log(U.multiply(c(0.5), erfcx(U.multiply(U.negative(xm),
                                                               c(np.sqrt(0.5)))))),
                     U.multiply(xm, xm) / 2)
    xf = U.where(U.less(x, far), x, far)
    x2 = U.multiply(xf, xf)
    total, term = c(1.0), c(1.0)
    for n in range(1, series_order + 1):
        term = U.multiply(term, U.divide(c(-(2 * n - 1)), x2))
        total = U.add(total, term)
    tail = U.add(U.subtract(U.negative(x2 / 2), U.log(U.negative(xf))),
                 U.subtract(U.log(total), c(0.5 * np.log(2 * np.pi))))
    xn = U.where(U.less(x, c(-5.0)), c(-5.0), U.where(U.greater(x, c(0.0)), c(0.0), x))
    xp = U.where(U.greater(x, c(0.0)), x, c(0.0))
    upper = U.log1p(U.negative(ndtr(U.negative(xp))))   # log(1 - ndtr(-x)) for x > 0
    return U.where(U.less(x, far), tail,
                   U.where(U.less(x, c(-5.0)), mid,
                           U.where(U.greater(x, c(0.0)), upper, U.log(ndtr(xn)))))


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
