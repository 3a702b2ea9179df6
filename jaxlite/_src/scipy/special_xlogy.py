"""jax.scipy.special's ``x log y`` family (xlogy, xlog1py, entr and the ``x log x`` they
share), logit and betaln, with JAX's derivative rules."""
from __future__ import annotations

import numpy as np

from jaxlite._src.api.custom_derivatives import custom_jvp
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as ls
from jaxlite._src.numpy.util import asarray_value, promote_args_inexact

__all__ = ["xlogy", "xlog1py", "entr", "logit", "betaln"]


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
