"""jax.numpy statistics built on the reductions: average, median/quantile/percentile (and
their NaN-ignoring forms), diff, ediff1d, gradient, trapezoid, cov, corrcoef, and the
histogram family (bincount, digitize, histogram*, interp).

Re-exported by reductions.py, so the public jax.numpy module picks these names up from there.
"""
from __future__ import annotations

import builtins
import math
import operator
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.lax import sort as lax_sort
from jaxlite._src.numpy import reductions as R
from jaxlite._src.numpy.reductions import _arraylike, _isnan, _np_const, _optional_axes
from jaxlite._src.numpy.util import (canonicalize_axis, check_arraylike, promote_args_inexact,
                                     promote_dtypes_inexact)

__all__ = ["average", "median", "nanmedian", "quantile", "nanquantile", "percentile",
           "nanpercentile", "diff", "ediff1d", "gradient", "trapezoid", "cov", "corrcoef",
           "bincount", "digitize", "histogram", "histogram_bin_edges", "histogram2d",
           "histogramdd", "interp"]

_bmin, _bmax, _brange = builtins.min, builtins.max, builtins.range


def _where(c, x, y):
    from jaxlite._src.numpy.ufuncs import where
    return where(c, x, y)


def _ufuncs():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _axis_tuple(axis, nd):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(canonicalize_axis(a, nd) for a in axes)


def _concrete_error(x, context):
    from jaxlite._src.core.errors import ConcretizationTypeError
    return ConcretizationTypeError(x, context)


# ----------------------------------------------------------------------------- average
def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean over ``axis``.

    ``weights`` has the shape of ``a`` or, with an explicit ``axis``, the shape of the
    reduced axes. With ``returned=True`` also give the sum of the weights (broadcast to the
    result's shape).
    """
    axis = _optional_axes(axis)
    nd = np.ndim(a)
    axes = tuple(range(nd)) if axis is None else _axis_tuple(axis, nd)
    if weights is None:
        (a,) = _arraylike("average", a)
        (a,) = promote_dtypes_inexact(a)
        avg = R.mean(a, axis=axis, keepdims=keepdims)
        n = a.size if axis is None else math.prod(a.shape[d] for d in axes)
        wsum = lax_shape.full((), n, dtype=avg.dtype)
    else:
        a, weights = _arraylike("average", a, weights)
        a, weights = promote_dtypes_inexact(a, weights)
        if a.shape != weights.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if weights.shape != tuple(a.shape[d] for d in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            new_shape = tuple(d if i in axes else 1 for i, d in enumerate(a.shape))
            weights = lax_shape.reshape(weights, new_shape,
                                        dimensions=tuple(int(i) for i in np.argsort(axes)))
        wsum = R.sum(weights, axis=axis, keepdims=keepdims)
        U = _ufuncs()
        avg = U.true_divide(R.sum(U.multiply(a, weights), axis=axis, keepdims=keepdims),
                            wsum)
    if returned:
        if np.shape(avg) != np.shape(wsum):
            from jaxlite._src.numpy.shape_ops import broadcast_to
            wsum = broadcast_to(wsum, np.shape(avg))
        return avg, wsum
    return avg


# ----------------------------------------------------------------------------- quantiles
_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _lax_sort(x, dimension):
    return lax_sort.sort(x, dimension=dimension)


def _lax_sort_key_val(k, v, dimension):
    return lax_sort.sort_key_val(k, v, dimension=dimension)


def _quantile(a, q, axis, method, keepdims, squash_nans, weights=None):
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                         "'nearest' or 'inverted_cdf'")
    if weights is not None:
        if dtypes.issubdtype(weights.dtype, np.complexfloating):
            raise ValueError("Weights cannot be complex types.")
        if method != "inverted_cdf":
            raise NotImplementedError(f"{method} doesn't support weights. Only method "
                                      "'inverted_cdf' supports weights.")
        a, weights = promote_dtypes_inexact(a, weights)
        if weights.shape != a.shape:
            if axis is None:
                raise ValueError("Weights shape must match 'a' shape when axis is None.")
            axes = _axis_tuple(axis, a.ndim)
            if weights.shape != tuple(a.shape[d] for d in axes):
                raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                                 f"{tuple(a.shape[d] for d in axes)}")
            weights = lax_shape.broadcast_in_dim(weights, a.shape, axes)
    else:
        (a,) = promote_dtypes_inexact(a)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError("quantile does not support complex input, as the operation is poorly "
                         "defined.")
    from jaxlite._src.numpy.shape_ops import ravel
    keepdim = []
    if axis is None:
        if keepdims:
            keepdim = [1] * a.ndim
        a = ravel(a)
        if weights is not None:
            weights = ravel(weights)
        axis = 0
    elif isinstance(axis, tuple):
        keepdim = list(a.shape)
        nd = a.ndim
        axis = tuple(canonicalize_axis(ax, nd) for ax in axis)
        if len(set(axis)) != len(axis):
            raise ValueError("repeated axis")
        for ax in axis:
            keepdim[ax] = 1
        keep = sorted(set(range(nd)) - set(axis))
        dims = list(range(nd))
        for i, s in enumerate(keep):
            dims[i], dims[s] = dims[s], dims[i]
        kept_shape = tuple(d for i, d in enumerate(a.shape) if i not in axis)
        red_shape = tuple(d for i, d in enumerate(a.shape) if i in axis)
        a = lax_shape.reshape(a, kept_shape + (math.prod(red_shape),), dims)
        if weights is not None:
            weights = lax_shape.reshape(weights, kept_shape + (math.prod(red_shape),), dims)
        axis = canonicalize_axis(-1, a.ndim)
    else:
        axis = canonicalize_axis(axis, a.ndim)

    q_shape, q_ndim = q.shape, q.ndim
    if q_ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    a_shape = a.shape
    q_orig = q
    one = lambda x: _np_const(x, 1)  # noqa: E731
    if squash_nans:
        a = _where(_isnan(a), np.nan, a)
        if weights is not None:
            a, weights = _lax_sort_key_val(a, weights, axis)
        else:
            a = _lax_sort(a, axis)
        counts = R.sum(lax.bitwise_not(_isnan(a)), axis=axis, dtype=q.dtype,
                       keepdims=keepdims)
        after = counts.shape
        q = lax_shape.expand_dims(q, tuple(range(q_ndim, len(after) + q_ndim)))
        counts = lax_shape.expand_dims(counts, tuple(range(q_ndim)))
        q = lax.mul(q, lax.sub(counts, one(q)))
        low, high = lax.floor(q), lax.ceil(q)
        high_weight = lax.sub(q, low)
        low_weight = lax.sub(one(high_weight), high_weight)
        cm1 = _ufuncs().subtract(counts, 1)
        low = lax.max(_np_const(low, 0), lax.min(low, cm1))
        high = lax.max(_np_const(high, 0), lax.min(high, cm1))
        low = lax.convert_element_type(low, dtypes.default_int_dtype())
        high = lax.convert_element_type(high, dtypes.default_int_dtype())
        out_shape = q_shape + after
        index = [lax_shape.broadcasted_iota(dtypes.default_int_dtype(), out_shape, d + q_ndim)
                 for d in range(len(after))]
        if keepdims:
            index[axis] = low
        else:
            index.insert(axis, low)
        low_value = a[tuple(index)]
        index[axis] = high
        high_value = a[tuple(index)]
    else:
        a = _where(R.any(_isnan(a), axis=axis, keepdims=True), np.nan, a)
        if weights is not None:
            a, weights = _lax_sort_key_val(a, weights, axis)
        else:
            a = _lax_sort(a, axis)
        n = lax.convert_element_type(a_shape[axis], q.dtype)
        nm1 = lax.sub(n, one(n))
        q = lax.mul(q, nm1)
        low, high = lax.floor(q), lax.ceil(q)
        high_weight = lax.sub(q, low)
        low_weight = lax.sub(one(high_weight), high_weight)
        low = lax.clamp(_np_const(low, 0), low, lax.sub(n, one(n)))
        high = lax.clamp(_np_const(high, 0), high, lax.sub(n, one(n)))
        low = lax.convert_element_type(low, dtypes.default_int_dtype())
        high = lax.convert_element_type(high, dtypes.default_int_dtype())
        sizes = list(a_shape)
        sizes[axis] = 1
        try:
            from jaxlite._src.lax.indexing import GatherDimensionNumbers, gather
        except ImportError:  # lax gather not available: slice dynamically per quantile
            low_value = _pick_along(a, low, axis, keepdims, q_shape)
            high_value = _pick_along(a, high, axis, keepdims, q_shape)
        else:
            dnums = GatherDimensionNumbers(
                offset_dims=tuple(range(q_ndim, len(a_shape) + q_ndim if keepdims
                                        else len(a_shape) + q_ndim - 1)),
                collapsed_slice_dims=() if keepdims else (axis,),
                start_index_map=(axis,))
            low_value = gather(a, lax_shape.expand_dims(low, (low.ndim,)),
                               dimension_numbers=dnums, slice_sizes=sizes)
            high_value = gather(a, lax_shape.expand_dims(high, (high.ndim,)),
                                dimension_numbers=dnums, slice_sizes=sizes)
        if q_ndim == 1:
            low_weight = lax_shape.broadcast_in_dim(low_weight, low_value.shape, (0,))
            high_weight = lax_shape.broadcast_in_dim(high_weight, high_value.shape, (0,))

    if method == "linear":
        result = lax.add(lax.mul(lax.convert_element_type(low_value, q.dtype), low_weight),
                         lax.mul(lax.convert_element_type(high_value, q.dtype), high_weight))
    elif method == "lower":
        result = low_value
    elif method == "higher":
        result = high_value
    elif method == "nearest":
        result = lax.select(lax.le(high_weight, _np_const(high_weight, 0.5)), low_value,
                            high_value)
    elif method == "midpoint":
        result = lax.mul(lax.add(low_value, high_value), _np_const(low_value, 0.5))
    else:
        result = _inverted_cdf(a, weights, q_orig, q, axis, keepdims, squash_nans, a_shape)
    if keepdims and keepdim:
        if q_ndim > 0:
            keepdim = [np.shape(q)[0], *keepdim]
        from jaxlite._src.numpy.shape_ops import reshape
        result = reshape(result, keepdim)
    return lax.convert_element_type(result, a.dtype)


def _pick_along(a, idx, axis, keepdims, q_shape):
    """``a`` indexed at the (traced) scalar ``idx`` along ``axis`` — one slice per entry of
    a 1-D ``idx`` — via dynamic slicing."""
    if not q_shape:
        return lax_shape.dynamic_index_in_dim(a, idx, axis, keepdims)
    from jaxlite._src.numpy.joining import stack
    return stack([lax_shape.dynamic_index_in_dim(a, idx[i], axis, keepdims)
                  for i in range(q_shape[0])])


def _inverted_cdf(a, weights, q_orig, q, axis, keepdims, squash_nans, a_shape):
    """The 'inverted_cdf' quantile: the first sorted element whose cumulative weight reaches
    q times the total weight (NaN where weights are negative/NaN, or data is NaN)."""
    q_ndim = q_orig.ndim
    if weights is None:
        weights = lax_shape.full_like(a, 1.0)
    zeros = lax_shape.full_like(weights, 0)
    bad_w = lax.bitwise_or(lax.lt(weights, zeros), _isnan(weights))
    nan_data = _isnan(a)
    clean = lax.select(lax.bitwise_or(bad_w, nan_data), zeros, weights)
    cum = R.cumsum(clean, axis=axis)
    total = lax_shape.index_in_dim(cum, -1, axis, keepdims)
    tw = lax_shape.expand_dims(total, tuple(range(q_ndim)))
    qf = lax_shape.reshape(q_orig, q_orig.shape + (1,) * total.ndim)
    target = lax.mul(qf, tw)
    target = target if keepdims else lax_shape.expand_dims(target, (axis + q_ndim,))
    cw = lax_shape.expand_dims(cum, tuple(range(q_ndim)))
    idx = R.sum(lax.convert_element_type(lax.lt(cw, target), dtypes.default_int_dtype()),
                axis=axis + q_ndim, keepdims=keepdims)
    if squash_nans:
        valid = R.sum(lax.bitwise_not(nan_data), axis=axis, dtype=q.dtype, keepdims=keepdims)
    else:
        valid = lax_shape.full_like(total, a_shape[axis], dtype=q.dtype)
    limit = lax.sub(valid, _np_const(valid, 1))
    max_idx = lax.convert_element_type(limit, dtypes.default_int_dtype())
    max_idx = lax_shape.expand_dims(max_idx, tuple(range(q_ndim)))
    max_idx = lax.convert_element_type(max_idx, idx.dtype)
    idx = lax.max(_np_const(idx, 0), lax.min(idx, max_idx))
    take = lax_shape.squeeze(idx, (q_ndim + axis,)) if keepdims else idx
    from jaxlite._src.numpy.indexing import take_along_axis
    if q_ndim == 0:
        result = take_along_axis(a, lax_shape.expand_dims(take, (axis,)), axis=axis)
        result = lax_shape.squeeze(result, (axis,))
    else:
        perm = [*range(q_ndim, q_ndim + axis), *range(q_ndim),
                *range(q_ndim + axis, take.ndim)]
        result = take_along_axis(a, lax_shape.transpose(take, perm), axis=axis)
        result = lax_shape.transpose(result, [perm.index(i) for i in range(len(perm))])
    if keepdims:
        result = lax_shape.expand_dims(result, (q_ndim + axis,))
    all_nan = lax.eq(valid, lax_shape.full_like(valid, 0))
    any_bad = R.any(bad_w, axis=axis, keepdims=keepdims)
    force = lax.bitwise_or(any_bad, all_nan if squash_nans else
                           R.any(nan_data, axis=axis, keepdims=keepdims))
    force = lax_shape.expand_dims(force, tuple(range(q_ndim)))
    return _where(force, lax_shape.full_like(result, np.nan), result)


def _quantile_args(name, a, q, weights, overwrite_input, out):
    a, q = _arraylike(name, a, q)
    if weights is not None:
        (weights,) = _arraylike(name, weights)
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or "
                         "out != None")
    return a, q, weights


@partial(jit, static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
    """The ``q``-th quantiles (0 <= q <= 1, a scalar or 1-D array) of ``a`` over ``axis``.

    ``method`` is "linear" (interpolate, the default), "lower", "higher", "nearest",
    "midpoint", or "inverted_cdf" (which also accepts ``weights``). A quantile over values
    containing NaN is NaN.
    """
    a, q, weights = _quantile_args("quantile", a, q, weights, overwrite_input, out)
    return _quantile(a, q, axis, method, keepdims, False, weights)


@partial(jit, static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
    """Like :func:`quantile`, ignoring NaN values."""
    a, q, weights = _quantile_args("nanquantile", a, q, weights, overwrite_input, out)
    return _quantile(a, q, axis, method, keepdims, True, weights)


@partial(jit, static_argnames=("axis", "overwrite_input", "keepdims", "method",
                               "out_sharding"))
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, out_sharding=None):
    """The ``q``-th percentiles (0 <= q <= 100) of ``a``; see :func:`quantile`."""
    a, q = _arraylike("percentile", a, q)
    if weights is not None:
        (weights,) = _arraylike("percentile", weights)
    (q,) = promote_dtypes_inexact(q)
    return quantile(a, _ufuncs().true_divide(q, 100), axis=axis, out=out,
                    overwrite_input=overwrite_input, method=method, keepdims=keepdims,
                    weights=weights)


@partial(jit, static_argnames=("axis", "overwrite_input", "keepdims", "method"))
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
    """Like :func:`percentile`, ignoring NaN values."""
    a, q = _arraylike("nanpercentile", a, q)
    if weights is not None:
        (weights,) = _arraylike("nanpercentile", weights)
    (q,) = promote_dtypes_inexact(q)
    q = _ufuncs().true_divide(q, 100)
    return nanquantile(a, q, axis=axis, out=out, overwrite_input=overwrite_input,
                       method=method, weights=weights, keepdims=keepdims)


@partial(jit, static_argnames=("axis", "overwrite_input", "keepdims"))
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median of ``a`` over ``axis`` (an int, a tuple or None for all elements)."""
    (a,) = _arraylike("median", a)
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                    keepdims=keepdims, method="midpoint")


@partial(jit, static_argnames=("axis", "overwrite_input", "keepdims"))
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """Median over ``axis`` ignoring NaNs (NaN where every element is NaN)."""
    (a,) = _arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input,
                       keepdims=keepdims, method="midpoint")


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


# ----------------------------------------------------------------------------- covariance
@partial(jit, static_argnames=("rowvar", "bias", "ddof", "dtype"))
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the variables in the rows of ``m`` (columns when
    ``rowvar=False``), optionally joined with ``y``. ``ddof`` defaults to 1 (0 with
    ``bias``); ``fweights`` are integer frequency weights and ``aweights`` observation
    weights."""
    from jaxlite._src.numpy.shape_ops import atleast_2d
    from jaxlite._src.numpy.joining import concatenate
    U = _ufuncs()
    if y is not None:
        m, y = promote_args_inexact("cov", m, y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = promote_args_inexact("cov", m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got "
                         f"dtype={dtype}")
    X = atleast_2d(m)
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return lax_shape.full((0, 0), 0, X.dtype)
    if y is not None:
        yy = atleast_2d(y)
        if not rowvar and yy.shape[0] != 1:
            yy = yy.T
        X = concatenate((X, yy), axis=0)
    if X.shape[1] == 0:
        shp = () if X.shape[0] == 1 else (X.shape[0], X.shape[0])
        return lax_shape.full(shp, np.nan, X.dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    if fweights is not None:
        (fweights,) = _arraylike("cov", fweights)
        if np.ndim(fweights) > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if np.shape(fweights)[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dtypes.issubdtype(fweights.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = U.abs(fweights)
    if aweights is not None:
        (aweights,) = _arraylike("cov", aweights)
        if np.ndim(aweights) > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if np.shape(aweights)[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aweights = U.abs(aweights)
        w = aweights if w is None else U.multiply(w, aweights)
    if dtype is not None:
        X = lax.convert_element_type(X, dtype)
        w = lax.convert_element_type(w, dtype) if w is not None else w
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        f = X.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = U.subtract(w_sum, ddof)
    else:
        f = U.subtract(w_sum, U.true_divide(U.multiply(ddof, R.sum(U.multiply(w, aweights))),
                                            w_sum))
    X = U.subtract(X, avg[:, None])
    XT = X.T if w is None else U.multiply(X, lax_shape.broadcast_to_rank(w, X.ndim)).T
    from jaxlite._src.numpy.linalg_ops import dot
    from jaxlite._src.numpy.shape_ops import squeeze
    return squeeze(U.true_divide(dot(X, U.conj(XT)), f))


@partial(jit, static_argnames=("rowvar", "dtype"))
def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients (the covariance normalised by the standard
    deviations), clipped to [-1, 1]."""
    check_arraylike("corrcoef", x)
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got "
                         f"dtype={dtype}")
    U = _ufuncs()
    c = cov(x, y, rowvar, dtype=dtype)
    if len(np.shape(c)) == 0:
        return U.divide(c, c)
    from jaxlite._src.numpy.linalg_ops import diagonal
    d = diagonal(c)
    sd = lax.convert_element_type(U.sqrt(U.real(d)), c.dtype)
    c = U.true_divide(U.true_divide(c, sd[:, None]), sd[None, :])
    re = U.clip(U.real(c), -1, 1)
    if dtypes.issubdtype(c.dtype, np.complexfloating):
        return lax.complex(re, U.clip(U.imag(c), -1, 1))
    return re


# ----------------------------------------------------------------------------- histograms
def bincount(x, weights=None, minlength=0, *, length=None, out_sharding=None):
    """Count occurrences of each non-negative integer in ``x`` (summing ``weights``
    instead when given). The output length is ``max(x) + 1`` (at least ``minlength``),
    which needs a concrete ``x`` unless the static ``length`` is given."""
    (x,) = _arraylike("bincount", x)
    if x.dtype == np.bool_:
        x = lax.convert_element_type(x, np.int32)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
    if np.ndim(x) != 1:
        raise ValueError("only 1-dimensional input supported.")
    minlength = operator.index(minlength)
    if length is None:
        if isinstance(x, Tracer):
            raise _concrete_error(
                x, "The error occurred because of argument 'x' of jnp.bincount. To avoid "
                   "this error, pass a static `length` argument.")
        xv = np.asarray(x)
        length = _bmax(minlength, xv.size and int(_bmax(0, xv.max())) + 1)
    else:
        length = operator.index(length)
    if weights is None:
        weights = np.array(1, dtype=dtypes.default_int_dtype())
    elif np.shape(x) != np.shape(weights):
        raise ValueError("type of weights must match type of x.")
    from jaxlite._src.numpy.creation import zeros
    return zeros(length, dtypes.dtype(weights)).at[_ufuncs().clip(x, 0)].add(weights,
                                                                          mode="drop")


@partial(jit, static_argnames=("right", "method"))
def digitize(x, bins, right=False, *, method=None):
    """Index of the bin each value of ``x`` falls in (``bins`` monotonic, increasing or
    decreasing)."""
    from jaxlite._src.numpy.sorting import searchsorted
    x, bins_arr = _arraylike("digitize", x, bins)
    right = bool(right)
    if bins_arr.ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if bins_arr.shape[0] == 0:
        return lax_shape.full(np.shape(x), 0, np.int32)
    side = "right" if not right else "left"
    kw = {} if method is None else {"method": method}
    U = _ufuncs()
    return _where(U.greater_equal(bins_arr[-1], bins_arr[0]),
                  searchsorted(bins_arr, x, side=side, **kw),
                  U.subtract(bins_arr.shape[0],
                             searchsorted(bins_arr[::-1], x, side=side, **kw)))


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The edges of the bins :func:`histogram` would use (``bins`` equal-width bins over
    ``range`` or the data's extent, or the given edges)."""
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    check_arraylike("histogram_bin_edges", a, bins)
    from jaxlite._src.numpy.creation import asarray
    from jaxlite._src.numpy.spacing import linspace
    arr = asarray(a)
    dt = R._to_inexact(arr.dtype)
    if np.ndim(bins) == 1:
        return asarray(bins, dtype=dt)
    nb = operator.index(bins)
    if range is None:
        range = [R.min(arr), R.max(arr)]
    rng = asarray(range, dtype=dt)
    if np.shape(rng) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
    U = _ufuncs()
    same = U.equal(R.ptp(rng), 0)
    lo = _where(same, U.subtract(rng[0], 0.5), rng[0])
    hi = _where(same, U.add(rng[1], 0.5), rng[1])
    return linspace(lo, hi, nb + 1, dtype=dt)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """Counts (or summed ``weights``) of ``a`` in each bin, and the bin edges. With
    ``density`` the counts are normalised to a probability density."""
    from jaxlite._src.numpy.creation import ones_like, zeros
    from jaxlite._src.numpy.sorting import searchsorted
    U = _ufuncs()
    if weights is None:
        a, _ = _arraylike("histogram", a, bins)
        (a,) = promote_dtypes_inexact(a)
        weights = ones_like(a)
    else:
        a, _, weights = _arraylike("histogram", a, bins, weights)
        if np.shape(a) != np.shape(weights):
            raise ValueError("weights should have the same shape as a.")
        a, weights = promote_dtypes_inexact(a, weights)
    edges = histogram_bin_edges(a, bins, range, weights)
    idx = searchsorted(edges, a, side="right")
    idx = _where(U.equal(a, edges[-1]), len(edges) - 1, idx)
    counts = zeros(len(edges), weights.dtype).at[idx].add(weights)[1:]
    if density:
        counts = U.true_divide(U.true_divide(counts, diff(edges)), R.sum(counts))
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """Two-dimensional histogram of the points (x, y): counts and the edges per axis."""
    from jaxlite._src.numpy.creation import asarray
    from jaxlite._src.numpy.joining import stack
    x, y = _arraylike("histogram2d", x, y)
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n != 1 and n != 2:
        e = asarray(bins)
        bins = [e, e]
    hist, edges = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return hist, edges[0], edges[1]


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """Histogram of N points in D dimensions (``sample`` has shape (N, D)): the counts array
    and the list of bin edges per dimension."""
    from jaxlite._src.numpy.sorting import searchsorted
    from jaxlite._src.numpy.shape_ops import reshape
    U = _ufuncs()
    if weights is None:
        (sample,) = _arraylike("histogramdd", sample)
        (sample,) = promote_dtypes_inexact(sample)
    else:
        sample, weights = _arraylike("histogramdd", sample, weights)
        if np.shape(weights) != np.shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        sample, weights = promote_dtypes_inexact(sample, weights)
    N, D = np.shape(sample)
    if range is not None and (len(range) != D or builtins.any(
            r is not None and np.shape(r)[0] != 2 for r in range)):
        raise ValueError(f"For sample.shape={(N, D)}, range must be a sequence of {D} pairs "
                         f"or Nones; got range={range}")
    try:
        per_dim = list(bins)
    except TypeError:
        per_dim = D * [bins]
    else:
        if len(per_dim) != D:
            raise ValueError("should be a bin for each dimension.")
    idx_by_dim, edges_by_dim = [], []
    for i in _brange(D):
        col = sample[:, i]
        edges = histogram_bin_edges(col, per_dim[i], None if range is None else range[i],
                                    weights)
        idx = searchsorted(edges, col, side="right")
        idx = _where(U.equal(col, edges[-1]), U.subtract(idx, 1), idx)
        idx_by_dim.append(idx)
        edges_by_dim.append(edges)
    nbins = tuple(len(e) + 1 for e in edges_by_dim)
    flat = None
    stride = 1
    for idx, nb in reversed(list(zip(idx_by_dim, nbins))):
        term = U.multiply(U.clip(idx, 0, nb - 1), stride)
        flat = term if flat is None else U.add(flat, term)
        stride *= nb
    hist = reshape(bincount(flat, weights, length=math.prod(nbins)), nbins)
    hist = hist[D * (slice(1, -1),)]
    if density:
        hist = lax.convert_element_type(hist, sample.dtype)
        hist = U.true_divide(hist, R.sum(hist))
        for k, e in enumerate(edges_by_dim):
            shp = [1] * D
            shp[k] = len(e) - 1
            hist = U.true_divide(hist, reshape(diff(e), shp))
    return hist, edges_by_dim


def _interp_impl(x, xp, fp, left=None, right=None, period=None):
    from jaxlite._src.numpy.joining import concatenate
    from jaxlite._src.numpy.sorting import searchsorted
    U = _ufuncs()
    x, xp, fp = _arraylike("interp", x, xp, fp)
    if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x_arr, xp_arr = promote_dtypes_inexact(x, xp)
    (fp_arr,) = promote_dtypes_inexact(fp)
    ext = {}
    for name, v in (("left", left), ("right", right)):
        if isinstance(v, str):
            if v != "extrapolate":
                raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', "
                                 f"but got: {v!r}")
            ext[name] = True
        else:
            ext[name] = False
    if dtypes.issubdtype(x_arr.dtype, np.complexfloating):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = U.abs(period)
        x_arr = U.remainder(x_arr, period)
        xp_arr = U.remainder(xp_arr, period)
        xp_arr, fp_arr = _lax_sort_key_val(xp_arr, fp_arr, -1)
        xp_arr = concatenate([U.subtract(xp_arr[-1:], period), xp_arr,
                              U.add(xp_arr[:1], period)])
        fp_arr = concatenate([fp_arr[-1:], fp_arr, fp_arr[:1]])
    i = U.clip(searchsorted(xp_arr, x_arr, side="right"), 1, len(xp_arr) - 1)
    im1 = U.subtract(i, 1)
    df = U.subtract(fp_arr[i], fp_arr[im1])
    dx = U.subtract(xp_arr[i], xp_arr[im1])
    delta = U.subtract(x_arr, xp_arr[im1])
    eps = np.spacing(np.finfo(xp_arr.dtype).eps)
    dx0 = U.less_equal(lax.abs(dx), eps)
    f = _where(dx0, fp_arr[im1], U.add(fp_arr[im1], U.multiply(
        U.true_divide(delta, _where(dx0, 1, dx)), df)))
    if not ext["left"] and period is None:
        f = _where(U.less(x_arr, xp_arr[0]), fp_arr[0] if left is None else left, f)
    if not ext["right"] and period is None:
        f = _where(U.greater(x_arr, xp_arr[-1]), fp_arr[-1] if right is None else right, f)
    return f


_interp_impl.__name__ = _interp_impl.__qualname__ = "_interp"
_interp_jits: dict = {}


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (``xp``, ``fp``) at ``x``.

    Outside ``[xp[0], xp[-1]]`` the result is ``left``/``right`` (default: the end values),
    or the linear extrapolation when they are "extrapolate"; ``period`` makes ``xp``
    periodic.
    """
    static = []
    if isinstance(left, str) or left is None:
        static.append("left")
    if isinstance(right, str) or right is None:
        static.append("right")
    if period is None:
        static.append("period")
    key = tuple(static)
    fn = _interp_jits.get(key)
    if fn is None:
        fn = _interp_jits[key] = jit(_interp_impl, static_argnames=static)
    return fn(x, xp, fp, left, right, period)
