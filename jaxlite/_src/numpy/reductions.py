"""jax.numpy reductions and statistics: sum, prod, max, min, mean, var, std, argmax, ..."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.util import asarray_value, canonicalize_axis, check_arraylike

__all__ = ["sum", "prod", "max", "min", "amax", "amin", "all", "any", "mean", "var", "std",
           "argmax", "argmin", "cumsum", "cumprod", "cumulative_sum", "cumulative_prod",
           "ptp", "count_nonzero", "average", "nansum", "nanmax", "nanmin", "nanmean"]


def _axes(a, axis):
    if axis is None:
        return tuple(range(a.ndim))
    axis = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(canonicalize_axis(x, a.ndim) for x in axis)


def _keep(out, a, axes, keepdims):
    if not keepdims:
        return out
    shape = tuple(1 if i in axes else s for i, s in enumerate(a.shape))
    kept = tuple(i for i in range(a.ndim) if i not in axes)
    return lax_shape.broadcast_in_dim(out, shape, kept)


def _prep(name, a, dtype, where, initial_ok=True):
    check_arraylike(name, a)
    a = asarray_value(a)
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, name)
        a = lax._convert_element_type(a, dtype, False)
    return a


def _int_sum_dtype(a):
    if a.dtype == np.bool_ or (dtypes.issubdtype(a.dtype, np.integer)
                               and a.dtype.itemsize < dtypes.default_int_dtype().itemsize):
        return (dtypes.default_uint_dtype() if dtypes.issubdtype(a.dtype, np.unsignedinteger)
                else dtypes.default_int_dtype())
    return None


def _where_fill(a, where, value):
    if where is None:
        return a
    from jaxlite._src.numpy.ufuncs import where as _w
    return _w(where, a, asarray_value(np.asarray(value, a.dtype)))


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    """Sum over ``axis`` (small ints and bools accumulate in the default int type)."""
    _no_out(out, "sum")
    a = _prep("sum", a, dtype, where)
    if dtype is None and promote_integers:
        d = _int_sum_dtype(a)
        if d is not None:
            a = lax._convert_element_type(a, d, a.weak_type)
    a = _where_fill(a, where, 0)
    axes = _axes(a, axis)
    r = lax_red.reduce_sum(a, axes)
    if initial is not None:
        r = lax.add(r, asarray_value(np.asarray(initial, r.dtype)))
    return _keep(r, a, axes, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    """Product over ``axis``."""
    _no_out(out, "prod")
    a = _prep("prod", a, dtype, where)
    if dtype is None and promote_integers:
        d = _int_sum_dtype(a)
        if d is not None:
            a = lax._convert_element_type(a, d, a.weak_type)
    a = _where_fill(a, where, 1)
    axes = _axes(a, axis)
    r = lax_red.reduce_prod(a, axes)
    if initial is not None:
        r = lax.mul(r, asarray_value(np.asarray(initial, r.dtype)))
    return _keep(r, a, axes, keepdims)


def _minmax(name, red, op, a, axis, out, keepdims, initial, where):
    _no_out(out, name)
    a = _prep(name, a, None, where)
    axes = _axes(a, axis)
    if where is not None:
        if initial is None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to "
                             "use a where mask one has to specify 'initial'")
        a = _where_fill(a, where, initial)
    for ax in axes:
        if a.shape[ax] == 0 and initial is None:
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
    r = red(a, axes)
    if initial is not None:
        r = op(r, asarray_value(np.asarray(initial, r.dtype)))
    return _keep(r, a, axes, keepdims)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum over ``axis``."""
    return _minmax("max", lax_red.reduce_max, lax.max, a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum over ``axis``."""
    return _minmax("min", lax_red.reduce_min, lax.min, a, axis, out, keepdims, initial, where)


amax, amin = max, min


def _to_bool(a):
    a = asarray_value(a)
    if a.dtype == np.bool_:
        return a
    return lax.ne(a, asarray_value(np.zeros((), a.dtype)))


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    """True if all elements (along ``axis``) are true."""
    _no_out(out, "all")
    a = _to_bool(a)
    if where is not None:
        a = _where_fill(a, where, True)
    axes = _axes(a, axis)
    return _keep(lax_red.reduce_and(a, axes), a, axes, keepdims)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    """True if any element (along ``axis``) is true."""
    _no_out(out, "any")
    a = _to_bool(a)
    if where is not None:
        a = _where_fill(a, where, False)
    axes = _axes(a, axis)
    return _keep(lax_red.reduce_or(a, axes), a, axes, keepdims)


def _count(a, axes, where):
    n = 1
    for ax in axes:
        n *= a.shape[ax]
    if where is None:
        return n
    return sum(asarray_value(where), axis=axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis`` (integers average in the default float type)."""
    _no_out(out, "mean")
    a = asarray_value(a)
    if dtype is None:
        dt = a.dtype if dtypes.issubdtype(a.dtype, np.inexact) else \
            dtypes.default_float_dtype()
    else:
        dt = dtypes.canonicalize_dtype(dtype)
    a = lax._convert_element_type(a, dt, a.weak_type) if a.dtype != dt else a
    axes = _axes(a, axis)
    s = sum(a, axis=axes, keepdims=keepdims, where=where)
    n = _count(a, axes, where)
    if isinstance(n, int):
        return lax.div(s, _weak_scalar(n, s.dtype))
    return lax.div(s, lax._convert_element_type(n, s.dtype, False))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Variance over ``axis`` (``ddof``/``correction`` subtracted from the count)."""
    _no_out(out, "var")
    if correction is not None:
        ddof = correction
    a = asarray_value(a)
    dt = a.dtype if dtypes.issubdtype(a.dtype, np.inexact) else dtypes.default_float_dtype()
    a = lax._convert_element_type(a, dt, a.weak_type) if a.dtype != dt else a
    axes = _axes(a, axis)
    m = mean(a, axis=axes, keepdims=True, where=where)
    c = lax.sub(a, m)
    sq = lax.real(lax.mul(c, lax.conj(c))) if dtypes.issubdtype(c.dtype, np.complexfloating) \
        else lax.mul(c, c)
    s = sum(sq, axis=axes, keepdims=keepdims, where=where)
    n = _count(a, axes, where)
    if isinstance(n, int):
        return lax.div(s, asarray_value(np.asarray(n - ddof, s.dtype)))
    return lax.div(s, lax.sub(lax._convert_element_type(n, s.dtype, False),
                              asarray_value(np.asarray(ddof, s.dtype))))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
    """Standard deviation over ``axis``."""
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where,
                        correction=correction))


def _arg(name, red, a, axis, out, keepdims):
    _no_out(out, name)
    a = asarray_value(a)
    if axis is None:
        from jaxlite._src.numpy.shape_ops import ravel
        flat = ravel(a)
        r = red(flat, 0, dtypes.default_int_dtype())
        if keepdims:
            r = lax_shape.broadcast_in_dim(r, (1,) * a.ndim, ())
        return r
    axis = canonicalize_axis(axis, a.ndim)
    if a.shape[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    return _keep(red(a, axis, dtypes.default_int_dtype()), a, (axis,), keepdims)


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the maximum (first occurrence)."""
    return _arg("argmax", lax_red.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the minimum (first occurrence)."""
    return _arg("argmin", lax_red.argmin, a, axis, out, keepdims)


def _cumulative(name, red, a, axis, dtype):
    a = asarray_value(a)
    if axis is None:
        from jaxlite._src.numpy.shape_ops import ravel
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, a.ndim)
    if dtype is not None:
        a = lax._convert_element_type(a, dtype, False)
    else:
        d = _int_sum_dtype(a)
        if d is not None:
            a = lax._convert_element_type(a, d, a.weak_type)
    return red(a, axis)


def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (flattened when None)."""
    return _cumulative("cumsum", lax_red.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (flattened when None)."""
    return _cumulative("cumprod", lax_red.cumprod, a, axis, dtype)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative sum (array-API form)."""
    return cumsum(x, axis, dtype)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product (array-API form)."""
    return cumprod(x, axis, dtype)


def ptp(a, axis=None, out=None, keepdims=False):
    """Range (max - min) along ``axis``."""
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    """Number of nonzero elements along ``axis``."""
    return sum(_to_bool(a), axis=axis, keepdims=keepdims, dtype=dtypes.default_int_dtype())


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted average along ``axis``."""
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        n = asarray_value(np.asarray(np.size(a) / np.size(avg), avg.dtype))
        return (avg, n) if returned else avg
    from jaxlite._src.numpy.ufuncs import multiply
    w = asarray_value(weights)
    s = sum(multiply(a, w), axis=axis, keepdims=keepdims)
    ws = sum(w, axis=axis, keepdims=keepdims)
    from jaxlite._src.numpy.ufuncs import true_divide
    avg = true_divide(s, ws)
    return (avg, ws) if returned else avg


def _nan_fill(a, value):
    from jaxlite._src.numpy.ufuncs import isnan, where
    a = asarray_value(a)
    return where(isnan(a), asarray_value(np.asarray(value, a.dtype)), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaNs as zero."""
    return sum(_nan_fill(a, 0), axis, dtype, out, keepdims, initial, where)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Maximum ignoring NaNs."""
    return max(_nan_fill(a, -np.inf), axis, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """Minimum ignoring NaNs."""
    return min(_nan_fill(a, np.inf), axis, out, keepdims, initial, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean ignoring NaNs."""
    from jaxlite._src.numpy.ufuncs import isnan, logical_not
    a = asarray_value(a)
    valid = logical_not(isnan(a))
    return lax.div(nansum(a, axis, dtype, keepdims=keepdims),
                   lax._convert_element_type(sum(valid, axis, keepdims=keepdims), a.dtype))


def _weak_scalar(v, dt):
    from jaxlite._src.runtime.array import ArrayImpl
    return ArrayImpl(np.asarray(v, dt), True)


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
