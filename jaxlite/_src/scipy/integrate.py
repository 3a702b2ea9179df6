"""jax.scipy.integrate: trapezoid, the composite trapezoidal rule, written with jnp."""
from __future__ import annotations

import functools

from jaxlite._src.api.jit import jit
from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.lax.elementwise import convert_element_type
from jaxlite._src.numpy.util import (canonicalize_axis, check_arraylike,
                                     promote_dtypes_inexact)

__all__ = ["trapezoid"]


@functools.partial(jit, static_argnames=('axis',))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the trapezoidal rule (``scipy.integrate.trapezoid``):
    ``sum(d * (y[1:] + y[:-1]) / 2)`` with spacings ``d = diff(x)`` when sample points ``x``
    are given (1-D along the axis, or an array shaped like ``y``), else the constant ``dx``.
    Integer inputs are promoted to an inexact dtype."""
    if x is None:
        check_arraylike("trapezoid", y)
        (y,) = promote_dtypes_inexact(y)        # dx joins only through the product
        spacing = dx
    else:
        check_arraylike("trapezoid", y, x)
        y, x = promote_dtypes_inexact(y, x)
    given_axis = axis
    axis = canonicalize_axis(axis, jnp.ndim(y))
    y = jnp.moveaxis(y, axis, -1)
    if y.shape[-1] == 0:
        raise IndexError(f"trapezoid: axis {axis} of y (shape {tuple(jnp.shape(y))} after "
                         "moving it last) has no samples; integrate over a non-empty axis.")
    if x is not None:
        if x.ndim == 1:
            spacing = jnp.diff(x)
        else:
            spacing = jnp.diff(jnp.moveaxis(x, given_axis, -1), axis=-1)
    out = 0.5 * jnp.sum(spacing * (y[..., 1:] + y[..., :-1]), axis=-1)
    return convert_element_type(out, out.dtype)
