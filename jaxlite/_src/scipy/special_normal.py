"""The standard normal distribution's special functions: ``ndtr``, ``ndtri`` and
``log_ndtr``, composed of the same lax primitives in the same order with the same constants
as JAX's (so that they give JAX's float32 numbers once the primitives do): ``ndtr`` from
erf near 0 and erfc in the tails, ``ndtri`` from Cephes' piecewise rational approximations
(evaluated with ``jnp.polyval``), ``log_ndtr`` from ``ndtr`` between its segments and an
asymptotic series below them."""
from __future__ import annotations

import functools

import numpy as np

from jaxlite._src.api.custom_derivatives import custom_jvp
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as ls
from jaxlite._src.numpy.util import asarray_value

__all__ = ["ndtr", "ndtri", "log_ndtr"]


def _float_arg(name, x):
    # JAX's ndtr/ndtri/log_ndtr take float32/float64 only (no promotion of integers)
    x = asarray_value(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                        "types.")
    return x


def ndtr(x):
    """The standard normal CDF: ``(1 + erf(x / sqrt2)) / 2`` for ``|x| < 1``, else from
    ``erfc(|x| / sqrt2)`` (float32 and float64 only, as JAX)."""
    return _ndtr(_float_arg("ndtr", x))


def _ndtr(x):
    dtype = x.dtype.type
    half_sqrt_2 = dtype(0.5) * np.sqrt(2., dtype=dtype)
    w = lax.mul(x, half_sqrt_2)
    z = lax.abs(w)
    y = lax.select(lax.lt(z, half_sqrt_2),
                   lax.add(dtype(1.), ls.erf(w)),
                   lax.select(lax.gt(w, dtype(0.)),
                              lax.sub(dtype(2.), ls.erfc(z)),
                              ls.erfc(z)))
    return lax.mul(dtype(0.5), y)


# Cephes' (ndtri.c) coefficients, highest power first
_P0 = [-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
       1.39312609387279679503E1, -1.23916583867381258016E0]
_Q0 = [1.0, 1.95448858338141759834E0, 4.67627912898881538453E0, 8.63602421390890590575E1,
       -2.25462687854119370527E2, 2.00260212380060660359E2, -8.20372256168333339912E1,
       1.59056225126211695515E1, -1.18331621121330003142E0]
_P1 = [4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
       4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
       -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4]
_Q1 = [1.0, 1.57799883256466749731E1, 4.53907635128879210584E1, 4.13172038254672030440E1,
       1.50425385692907503408E1, 2.50464946208309415979E0, -1.42182922854787788574E-1,
       -3.80806407691578277194E-2, -9.33259480895457427372E-4]
_P2 = [3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
       1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
       3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9]
_Q2 = [1.0, 6.02427039364742014255E0, 3.67983563856160859403E0, 1.37702099489081330271E0,
       2.16236993594496635890E-1, 1.34204006088543189037E-2, 3.28014464682127739104E-4,
       2.89247864745380683936E-6, 6.79019408009981274425E-9]


def ndtri(p):
    """The inverse of the standard normal CDF (Cephes' piecewise rational approximation:
    ``w + w^3 P0/Q0`` around the middle, ``z - log(z)/z - P(1/z)/Q(1/z)/z`` with ``z =
    sqrt(-2 log p)`` in the tails; -inf at 0, inf at 1; float32 and float64 only)."""
    from jaxlite._src.lax.shape import full
    from jaxlite._src.numpy import ufuncs as U
    from jaxlite._src.numpy.polynomial import polyval
    p = _float_arg("ndtri", p)
    dtype = p.dtype.type
    shape = np.shape(p)

    def coef(c):
        return np.array(c, dtype=dtype)
    mcp = U.where(lax.gt(p, dtype(-np.expm1(-2.))), lax.sub(dtype(1.), p), p)
    # 0 would give NaNs below (in branches not taken): an arbitrary 0.5 in its place
    mcp = U.where(lax.eq(mcp, dtype(0.)), full(shape, dtype(0.5)), mcp)
    w = lax.sub(mcp, dtype(0.5))
    ww = lax.square(w)
    x_big = lax.add(w, lax.mul(lax.mul(w, ww),
                               lax.div(polyval(coef(_P0), ww), polyval(coef(_Q0), ww))))
    x_big = lax.mul(x_big, -dtype(np.sqrt(2. * np.pi)))
    z = lax.sqrt(lax.mul(dtype(-2.), lax.log(mcp)))
    first = lax.sub(z, lax.div(lax.log(z), z))
    second_small = lax.div(lax.div(polyval(coef(_P2), lax.div(dtype(1), z)),
                                   polyval(coef(_Q2), lax.div(dtype(1), z))), z)
    second_other = lax.div(lax.div(polyval(coef(_P1), lax.div(dtype(1), z)),
                                   polyval(coef(_Q1), lax.div(dtype(1), z))), z)
    x_small = lax.sub(first, second_small)
    x_other = lax.sub(first, second_other)
    x = U.where(lax.gt(mcp, dtype(np.exp(-2.))), x_big,
                U.where(lax.ge(z, dtype(8.0)), x_small, x_other))
    x = U.where(lax.gt(p, dtype(1. - np.exp(-2.))), x, lax.neg(x))
    inf = full(shape, dtype(np.inf))
    return U.where(lax.eq(p, dtype(0.0)), lax.neg(inf),
                   U.where(lax.eq(p, dtype(1.0)), inf, x))


_LOGNDTR_SEGMENTS = {np.dtype(np.float32): (-10.0, 5.0), np.dtype(np.float64): (-20.0, 8.0)}


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _log_ndtr(x, series_order):
    from jaxlite._src.numpy import ufuncs as U
    lo, hi = (np.array(v, x.dtype) for v in _LOGNDTR_SEGMENTS[x.dtype])
    above = lax.gt(x, hi)
    # one ndtr for both segments; the max/min keep the unchosen branches finite (their
    # gradients through the select would be NaN otherwise)
    ndtr_res = _ndtr(U.where(above, lax.neg(x), lax.max(x, lo)))
    return U.where(above, lax.neg(ndtr_res),      # log(1 - y) ~= -y for small y
                   U.where(lax.gt(x, lo), lax.log(ndtr_res),
                           _log_ndtr_lower(lax.min(x, lo), series_order)))


def _log_ndtr_lower(x, series_order):
    # log(scale) + log(1 + sum), scale = exp(-x^2/2) / (-x sqrt(2 pi))
    dtype = x.dtype.type
    x_2 = lax.square(x)
    log_scale = lax.sub(lax.sub(lax.mul(-dtype(0.5), x_2), lax.log(lax.neg(x))),
                        dtype(0.5 * np.log(2. * np.pi)))
    return lax.add(log_scale, lax.log(_log_ndtr_series(x, series_order)))


def _log_ndtr_series(x, series_order):
    # 1 + sum_{n=1}^N (-1)^n (2n-1)!! / x^(2n), its even and odd terms summed apart
    from jaxlite._src.numpy.creation import zeros_like
    dtype = x.dtype.type
    if series_order <= 0:
        return np.array(1, dtype)
    x_2 = lax.square(x)
    even_sum, odd_sum = zeros_like(x), zeros_like(x)
    x_2n = x_2
    for n in range(1, series_order + 1):
        y = lax.div(np.array(np.prod(np.arange(2 * n - 1, 1, -2)), dtype), x_2n)
        if n % 2:
            odd_sum = lax.add(odd_sum, y)
        else:
            even_sum = lax.add(even_sum, y)
        x_2n = lax.mul(x_2n, x_2)
    return lax.sub(lax.add(dtype(1.), even_sum), odd_sum)


@_log_ndtr.defjvp
def _log_ndtr_jvp(series_order, primals, tangents):
    """``d log_ndtr = t * exp(norm.logpdf(x) - log_ndtr(x))`` (JAX's rule)."""
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    logpdf = lax.sub(lax.mul(np.array(-0.5, x.dtype), lax.square(x)),
                     np.array(np.log(np.sqrt(2 * np.pi)), x.dtype))
    return ans, lax.mul(t, lax.exp(lax.sub(logpdf, ans)))


def log_ndtr(x, series_order=3):
    """``log(ndtr(x))``: ``-ndtr(-x)`` above 5 (8 in float64), ``log(ndtr(x))`` down to -10
    (-20), and below that the asymptotic series ``-x²/2 - log(-x) - log(2 pi)/2 + log(1 +
    sum_{n <= series_order} (-1)^n (2n-1)!! / x^{2n})`` (JAX's segments and series)."""
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = asarray_value(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported.")
    return _log_ndtr(x, series_order)
