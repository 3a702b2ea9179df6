"""jax.numpy statistics built on the reductions: average, median/quantile/percentile (and
their NaN-ignoring forms), cov and corrcoef.

The differences (diff, gradient, trapezoid, ...) are in ``differences.py``, the histogram
family (bincount, digitize, histogram*, interp) in ``histograms.py``.
"""
from __future__ import annotations

import builtins
import math
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.lax import sort as lax_sort
from jaxlite._src.numpy import reductions as R
from jaxlite._src.numpy.cumulative import cumsum
from jaxlite._src.numpy.reductions import _arraylike, _isnan, _np_const, _optional_axes
from jaxlite._src.numpy.util import (canonicalize_axis, check_arraylike, promote_args_inexact,
                                     promote_dtypes_inexact)

__all__ = ["average", "median", "nanmedian", "quantile", "nanquantile", "percentile",
           "nanpercentile", "cov", "corrcoef"]

_bmin = builtins.min


def _where(c, x, y):
    from jaxlite._src.numpy.ufuncs import where
    return where(c, x, y)


def _ufuncs():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _axis_tuple(axis, nd):
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return tuple(canonicalize_axis(a, nd) for a in axes)


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
    cum = cumsum(clean, axis=axis)
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
