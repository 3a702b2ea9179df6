"""jax.numpy differences: diff, ediff1d, gradient and trapezoid (NumPy's "sums, products,
differences" that are not reductions)."""
from __future__ import annotations

import builtins
import operator
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy import reductions as R
from jaxlite._src.numpy.reductions import _arraylike
from jaxlite._src.numpy.util import canonicalize_axis, promote_dtypes_inexact

__all__ = ["diff", "ediff1d", "gradient", "trapezoid"]

_bmin = builtins.min


def _ufuncs():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _axis_tuple(axis, nd):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(canonicalize_axis(a, nd) for a in axes)


# ----------------------------------------------------------------------------- differences
@partial(jit, static_argnames=("n", "axis"))
def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (``out[i] = a[i+1] - a[i]``, applied
    ``n`` times; booleans use ``!=``). ``prepend``/``append`` are joined to ``a`` first."""
    (arr,) = _arraylike("diff", a)
    n = operator.index(n)
    axis = operator.index(axis)
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    nd = arr.ndim
    axis = canonicalize_axis(axis, nd)
    from jaxlite._src.numpy.shape_ops import broadcast_to
    from jaxlite._src.numpy.joining import concatenate
    parts = []
    for extra, first in ((prepend, True), (append, False)):
        if extra is None:
            continue
        (extra,) = _arraylike("diff", extra)
        if not np.ndim(extra):
            shp = list(arr.shape)
            shp[axis] = 1
            extra = broadcast_to(extra, tuple(shp))
        parts.append((first, extra))
    combined = [e for f, e in parts if f] + [arr] + [e for f, e in parts if not f]
    if len(combined) > 1:
        arr = concatenate(combined, axis)
    hi = tuple(slice(1, None) if i == axis else slice(None) for i in range(nd))
    lo = tuple(slice(None, -1) if i == axis else slice(None) for i in range(nd))
    U = _ufuncs()
    op = U.not_equal if arr.dtype == np.bool_ else U.subtract
    for _ in range(n):
        arr = op(arr[hi], arr[lo])
    return arr


@jit
def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened array, with optional values
    joined before (``to_begin``) and after (``to_end``)."""
    from jaxlite._src.numpy.shape_ops import ravel
    from jaxlite._src.numpy.joining import concatenate
    (arr,) = _arraylike("ediff1d", ary)
    arr = ravel(arr)
    result = lax.sub(arr[1:], arr[:-1])
    if to_begin is not None:
        (to_begin,) = _arraylike("ediff1d", to_begin)
        result = concatenate((ravel(lax.convert_element_type(to_begin, arr.dtype)), result))
    if to_end is not None:
        (to_end,) = _arraylike("ediff1d", to_end)
        result = concatenate((result, ravel(lax.convert_element_type(to_end, arr.dtype))))
    return result


def _slice_in_dim(a, start, stop, axis):
    return lax_shape.slice_in_dim(a, start, stop, 1, axis)


@partial(jit, static_argnames=("axis", "edge_order"))
def gradient(f, *varargs, axis=None, edge_order=None):
    """Numerical gradient by central differences inside and one-sided differences at the
    edges. ``varargs`` gives the spacing (one scalar, or one scalar/1-D coordinate array
    per axis). Returns one array, or a list when several axes are differentiated."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    a, *spacing = promote_dtypes_inexact(f, *varargs)
    U = _ufuncs()

    def along(a, h, ax):
        s = partial(_slice_in_dim, a, axis=ax)
        upper = U.subtract(s(1, 2), s(0, 1))
        lower = U.subtract(s(-1, None), s(-2, -1))
        if np.ndim(h) == 0:
            inner = U.true_divide(U.multiply(U.subtract(s(2, None), s(None, -2)), 0.5), h)
            lower = U.true_divide(lower, h)
            upper = U.true_divide(upper, h)
        elif np.ndim(h) == 1:
            if len(h) != a.shape[ax]:
                raise ValueError("Spacing arrays must have the same length as the dimension "
                                 "along which the gradient is calculated.")
            hs = [1] * a.ndim
            hs[ax] = len(h)
            from jaxlite._src.numpy.shape_ops import reshape
            h = reshape(h, hs)
            sx = partial(_slice_in_dim, h, axis=ax)
            upper = U.true_divide(upper, U.subtract(sx(1, 2), sx(0, 1)))
            lower = U.true_divide(lower, U.subtract(sx(-1, None), sx(-2, -1)))
            dx1 = U.subtract(sx(1, -1), sx(0, -2))
            dx2 = U.subtract(sx(2, None), sx(1, -1))
            ca = U.true_divide(U.negative(dx2), U.multiply(dx1, U.add(dx1, dx2)))
            cb = U.true_divide(U.subtract(dx2, dx1), U.multiply(dx1, dx2))
            cc = U.true_divide(dx1, U.multiply(dx2, U.add(dx1, dx2)))
            inner = U.add(U.add(U.multiply(ca, s(0, -2)), U.multiply(cb, s(1, -1))),
                          U.multiply(cc, s(2, None)))
        else:
            raise ValueError("Spacing arrays must be 1D arrays or scalars.")
        from jaxlite._src.numpy.joining import concatenate
        return concatenate((upper, inner, lower), axis=ax)

    if axis is None:
        axes = tuple(range(a.ndim))
    else:
        axes = _axis_tuple(axis, a.ndim)
    if len(axes) == 0:
        return []
    if _bmin(s for i, s in enumerate(a.shape) if i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                         "least 2 elements are required.")
    if len(spacing) == 0:
        dx = [1.0] * len(axes)
    elif len(spacing) == 1:
        dx = list(spacing) * len(axes)
    elif len(spacing) == len(axes):
        dx = list(spacing)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    grads = [along(a, h, ax) for ax, h in zip(axes, dx)]
    return grads[0] if len(axes) == 1 else grads


@partial(jit, static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the trapezoidal rule, with sample points ``x``
    or uniform spacing ``dx``."""
    from jaxlite._src.numpy.creation import asarray
    from jaxlite._src.numpy.shape_ops import moveaxis
    U = _ufuncs()
    if x is None:
        (y,) = _arraylike("trapezoid", y)
        (y_arr,) = promote_dtypes_inexact(y)
        dx_arr = asarray(dx)
        if dx_arr.ndim > 0:
            dx_arr = lax_shape.expand_dims(dx_arr, tuple(range(y_arr.ndim - dx_arr.ndim)))
            dx_arr = moveaxis(dx_arr, axis, -1)
    else:
        y, x = _arraylike("trapezoid", y, x)
        y_arr, x_arr = promote_dtypes_inexact(y, x)
        dx_arr = diff(x_arr) if x_arr.ndim == 1 else moveaxis(diff(x_arr, axis=axis), axis,
                                                               -1)
    y_arr = moveaxis(y_arr, axis, -1)
    if dx_arr.ndim == 0 or dx_arr.shape[-1] == 1:
        dxr = dx_arr if dx_arr.ndim == 0 else dx_arr[..., 0]
        return U.multiply(dxr, U.subtract(R.sum(y_arr, -1), U.multiply(
            0.5, U.add(y_arr[..., 0], y_arr[..., -1]))))
    return U.multiply(0.5, R.sum(U.multiply(dx_arr, U.add(y_arr[..., 1:], y_arr[..., :-1])),
                                 -1))
