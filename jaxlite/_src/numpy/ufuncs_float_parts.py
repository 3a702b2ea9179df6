"""jax.numpy's functions on a float's parts: ``frexp`` (mantissa and exponent read from
the bits), ``ldexp``, ``modf``, ``nextafter`` and ``spacing``."""
from __future__ import annotations

import numpy as np

from jaxlite._src.api.custom_derivatives import custom_jvp
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.numpy.ufuncs import _one, _zero, add, copysign, isfinite
from jaxlite._src.numpy.util import asarray_value, check_arraylike, promote_args_inexact
from jaxlite._src.numpy.where_op import where

__all__ = ["frexp", "ldexp", "modf", "nextafter", "spacing"]


@jit
def ldexp(x1, x2, /):
    """``x1 * 2 ** x2`` (``x2`` integer), scaled in two steps from ``frexp``'s mantissa so
    that a small ``x1`` times a big power of two does not overflow on the way (as JAX)."""
    check_arraylike("ldexp", x1, x2)
    x1, x2 = asarray_value(x1), asarray_value(x2)
    if dtypes.issubdtype(x1.dtype, np.complexfloating) or \
            dtypes.issubdtype(x2.dtype, np.inexact):
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    (x1,) = promote_args_inexact("ldexp", x1)
    x2 = lax.convert_element_type(x2, x1.dtype)
    m, e = frexp(x1)
    e = lax.convert_element_type(
        add(lax.convert_element_type(e, x2.dtype), x2), x1.dtype)
    big = lax.gt(e, _zero(e))
    m = where(big, lax.mul(m, asarray_value(np.asarray(2, m.dtype))), m)
    e = where(big, lax.sub(e, _one(e)), e)
    x = lax.mul(m, lax.pow(asarray_value(np.asarray(2, m.dtype)), e))
    return where(lax.bitwise_or(lax.eq(lax.abs(x1), asarray_value(np.asarray(np.inf, x1.dtype))),
                                lax.eq(x1, _zero(x1))), x1, x)


@jit
def frexp(x, /):
    """Mantissa and exponent: ``x = m * 2 ** e`` with ``0.5 <= |m| < 1``, read from the
    bits (exact for subnormals); zeros, infinities and NaN give ``(x, 0)``."""
    (x,) = promote_args_inexact("frexp", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise TypeError("frexp does not support complex-valued inputs")
    return _frexp(x)


@custom_jvp
def _frexp(x):
    from jaxlite._src.numpy.creation import _bitcast
    info = dtypes.finfo(x.dtype)
    ity = np.dtype(f"i{x.dtype.itemsize}")
    nmant, emask, bias = int(info.nmant), (1 << int(info.nexp)) - 1, 1 - int(info.minexp)

    def c(v, dt=ity):
        return asarray_value(np.asarray(v, dt))
    # subnormals are scaled up by 2**nmant first, and the exponent takes nmant back
    sub = lax.lt(lax.abs(x), c(info.tiny, x.dtype))
    bits = _bitcast(where(sub, lax.mul(x, c(2.0 ** nmant, x.dtype)), x), ity)
    e = where(sub, c(-nmant), c(0))
    e = lax.add(e, lax.add(lax.bitwise_and(lax.shift_right_logical(bits, c(nmant)),
                                           c(emask)), c(1 - bias)))
    bits = lax.bitwise_or(lax.bitwise_and(bits, c(~(emask << nmant))),
                          c((bias - 1) << nmant))
    special = lax.bitwise_or(lax.bitwise_not(isfinite(x)), lax.eq(x, _zero(x)))
    return (where(special, x, _bitcast(bits, x.dtype)),
            lax.convert_element_type(where(special, _zero(e), e), np.int32))


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    """The mantissa moves with ``x`` scaled by ``2 ** -e``; the exponent is piecewise
    constant (a float0 tangent)."""
    (x,), (t,) = primals, tangents
    m, e = _frexp(x)
    scale = lax.exp2(lax.neg(lax.convert_element_type(e, t.dtype)))
    return (m, e), (lax.mul(t, scale), np.zeros(np.shape(e), dtypes.float0))


@jit
def modf(x, /, out=None):
    """Fractional and integral parts (the integral part is ``floor`` for ``x >= 0``, else
    ``ceil``, as JAX)."""
    check_arraylike("modf", x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    (x,) = promote_args_inexact("modf", x)
    whole = where(lax.ge(x, _zero(x)), lax.floor(x), lax.ceil(x))
    return lax.sub(x, whole), whole


def nextafter(x, y, /):
    """The next representable value after ``x`` toward ``y``."""
    x, y = promote_args_inexact("nextafter", x, y)
    return lax.nextafter(x, y)


def spacing(x, /):
    """Distance to the next representable value away from zero (float16: toward +inf, as
    JAX)."""
    (x,) = promote_args_inexact("spacing", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    inf = asarray_value(np.asarray(np.inf, x.dtype))
    if x.dtype == np.float16:
        return lax.sub(lax.nextafter(x, inf), x)
    result = lax.sub(lax.nextafter(x, copysign(inf, x)), x)
    # a zero step (subnormals flushed to zero) gives the smallest subnormal, signed as x
    tiny = asarray_value(np.asarray(dtypes.finfo(x.dtype).smallest_subnormal, x.dtype))
    return where(lax.eq(result, _zero(result)), copysign(tiny, x), result)
