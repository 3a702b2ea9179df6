"""jax.numpy searching and selecting: nonzero (and flatnonzero, argwhere), where, extract,
compress and select.

The number of results of nonzero depends on the data, so under a transformation it needs a
static ``size``; ``where``'s one-argument form is nonzero, its three-argument form is
``ufuncs.where``.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.errors import ConcretizationTypeError
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy import ufuncs
from jaxlite._src.numpy.sorting import _arr, _U, argsort
from jaxlite._src.numpy.util import check_arraylike, promote_dtypes
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["nonzero", "flatnonzero", "argwhere", "where", "extract", "compress", "select"]


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """``x`` where ``condition`` else ``y`` (with broadcasting); one-argument form is
    ``nonzero``."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    return ufuncs.where(condition, x, y)


# ----------------------------------------------------------------------------- nonzero
_NONZERO_HINT = ("The size argument of jnp.nonzero must be statically specified to use "
                 "jnp.nonzero within JAX transformations.")


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one int array per dimension.

    The number of results must be known: with a traced input give a static ``size``
    (results are truncated, or padded with ``fill_value`` — a scalar or one per
    dimension — defaulting to 0).
    """
    (arr,) = _arr("nonzero", a)
    if np.ndim(arr) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    if fill_value is not None:
        fvals = fill_value if isinstance(fill_value, tuple) else arr.ndim * (fill_value,)
        if len(fvals) != arr.ndim or builtins.any(np.shape(f) != () for f in fvals):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {arr.ndim}; "
                             f"got {fill_value}")
    idx_dtype = dtypes.default_int_dtype()
    if not isinstance(arr, Tracer):
        # Concrete input: find the indices directly (the result shape depends on them).
        idx = np.nonzero(np.asarray(arr._value))
        n = len(idx[0])
        size_ = n if size is None else operator.index(size)
        out = []
        for d, ix in enumerate(idx):
            ix = ix[:size_].astype(idx_dtype)
            if size_ > n:
                pad = 0 if fill_value is None else fvals[d]
                pad = np.asarray(pad._value if isinstance(pad, ArrayImpl) else pad)
                ix = np.concatenate([ix, np.full(size_ - n, pad, idx_dtype)])
            out.append(ArrayImpl(ix, False))
        return tuple(out)
    if size is None:
        raise ConcretizationTypeError(arr, _NONZERO_HINT)
    size = operator.index(size)
    U = _U()
    from jaxlite._src.numpy.cumulative import cumsum
    from jaxlite._src.numpy.shape_ops import ravel
    mask = arr if arr.dtype == np.bool_ else U.not_equal(arr, 0)
    if arr.size == 0 or size == 0:
        return tuple(lax_shape.full((size,), 0, idx_dtype) for _ in arr.shape)
    flat = _first_true_positions(ravel(mask), size, cumsum)
    strides = [math.prod(arr.shape[i + 1:]) for i in range(arr.ndim)]
    out = tuple(U.remainder(U.floor_divide(flat, np.array(st, flat.dtype)),
                            np.array(dim, flat.dtype))
                for st, dim in zip(strides, arr.shape))
    if fill_value is not None:
        from jaxlite._src.numpy.reductions import sum as jsum
        fill_mask = U.greater_equal(lax_shape.iota(idx_dtype, size), jsum(mask))
        out = tuple(U.where(fill_mask, f, e) for f, e in zip(fvals, out))
    return out


def _first_true_positions(mask, size, cumsum):
    """Flat positions of the first ``size`` true entries of the 1-D ``mask`` (positions
    past the last true entry are clipped to its length)."""
    U = _U()
    csum = cumsum(mask)
    try:
        from jaxlite._src.numpy.histograms import bincount
        return cumsum(bincount(csum, length=size))
    except (ImportError, NotImplementedError):
        # Without scatter: position k is the number of prefixes holding at most k trues.
        from jaxlite._src.numpy.reductions import sum as jsum
        k = lax_shape.iota(csum.dtype, size)
        return jsum(U.less_equal(csum[None, :], k[:, None]), axis=1, dtype=csum.dtype)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements of the flattened array."""
    from jaxlite._src.numpy.shape_ops import ravel
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements as an (N, ndim) array."""
    (a,) = _arr("argwhere", a)
    from jaxlite._src.numpy.shape_ops import atleast_1d, reshape, transpose
    from jaxlite._src.numpy.joining import vstack
    res = transpose(vstack(nonzero(atleast_1d(a), size=size, fill_value=fill_value)))
    if np.ndim(a) == 0:
        return reshape(res[:0], (res.shape[0], 0))
    return reshape(res, (res.shape[0], np.ndim(a)))


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of the flattened ``arr`` where the flattened ``condition`` is true."""
    check_arraylike("extract", condition, arr, fill_value)
    from jaxlite._src.numpy.shape_ops import ravel
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (flattened when None) selected by the 1-D boolean
    ``condition``; with a static ``size`` the result is truncated/padded with
    ``fill_value`` (and may be traced)."""
    cond, arr, fill_value = _arr("compress", condition, a, fill_value)
    cond = lax.convert_element_type(cond, np.bool_)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    from jaxlite._src.numpy.shape_ops import moveaxis, ravel
    if axis is None:
        axis = 0
        arr = ravel(arr)
    else:
        arr = moveaxis(arr, axis, 0)
    cond, extra = cond[:arr.shape[0]], cond[arr.shape[0]:]
    arr = arr[:cond.shape[0]]
    if size is None:
        if isinstance(cond, Tracer):
            raise ConcretizationTypeError(cond, "jnp.compress with a traced condition needs "
                                                "a static size= argument.")
        if np.any(np.asarray(extra._value)):
            raise ValueError("condition contains entries that are out of bounds")
        (keep,) = nonzero(cond)
        result = _take0(arr, keep)
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array "
                         f"axis; got size={size} for a.shape[axis]={arr.shape[0]}")
    else:
        U = _U()
        mask = lax_shape.expand_dims(cond, tuple(range(1, arr.ndim)))
        arr = U.where(mask, arr, lax.convert_element_type(fill_value, arr.dtype))
        order = argsort(cond, stable=True, descending=True)
        result = _take0(arr, order)[:size]
    return moveaxis(result, 0, axis)


def _take0(arr, idx):
    """``arr[idx]`` for an integer index array along axis 0."""
    try:
        return arr[idx]
    except NotImplementedError:
        from jaxlite._src.numpy.joining import stack
        if isinstance(idx, Tracer):
            raise
        rows = [arr[int(i)] for i in np.asarray(idx._value)]
        return stack(rows) if rows else arr[:0]


def select(condlist, choicelist, default=0):
    """Elementwise, the value from the first ``choicelist`` entry whose condition holds
    (``default`` where none does)."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist "
                         f"({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    from jaxlite._src.numpy.creation import asarray
    from jaxlite._src.numpy.reductions import argmax
    from jaxlite._src.numpy.shape_ops import broadcast_arrays
    from jaxlite._src.numpy.joining import stack
    conds = [asarray(c) for c in condlist]
    choices = [asarray(c) for c in choicelist]
    choices = promote_dtypes(asarray(default), *choices)
    conditions = stack(broadcast_arrays(False, *conds))
    idx = argmax(lax.convert_element_type(conditions, np.bool_), axis=0)
    return lax.select_n(*broadcast_arrays(idx, *choices))
