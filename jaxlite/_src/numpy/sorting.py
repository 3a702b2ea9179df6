"""jax.numpy sorting and searching: sort, argsort, lexsort, partition, argpartition,
sort_complex, searchsorted, nonzero / flatnonzero / argwhere, extract, compress and select.
Set operations (unique, intersect1d, isin ...) live in setops.py and are re-exported here.

Sorting binds lax's ``sort`` primitive (``sort_key_val`` for argsort, ``top_k`` for
partitions). Functions whose output shape depends on the data (nonzero & co) need concrete
input, or a static ``size=`` under tracing, exactly as in JAX.
"""
from __future__ import annotations

import builtins
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.lax import sort as lax_sort
from jaxlite._src.numpy.util import (asarray_value, canonicalize_axis, check_arraylike,
                                     promote_dtypes)
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["sort", "argsort", "lexsort", "partition", "argpartition", "sort_complex",
           "searchsorted"]

_bmax, _bmin, _bsum = builtins.max, builtins.min, builtins.sum


def _arr(name, *args):
    check_arraylike(name, *args)
    return [asarray_value(a) for a in args]


def _U():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _lax_sort(operands, dimension=-1, is_stable=True, num_keys=1):
    return lax_sort.sort(operands, dimension=dimension, is_stable=is_stable,
                         num_keys=num_keys)


def _lax_sort_key_val(keys, values, dimension=-1, is_stable=True):
    return lax_sort.sort_key_val(keys, values, dimension=dimension, is_stable=is_stable)


def _lax_top_k(x, k):
    return lax_sort.top_k(x, k)


def _index_dtype(n):
    """JAX's index dtype for an axis of length ``n``: the default int (int64 under x64)."""
    if n > np.iinfo(np.int32).max:
        return np.dtype(np.int64)
    return dtypes.default_int_dtype()


# ----------------------------------------------------------------------------- sorting
@partial(jit, static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """Sorted copy of ``a`` along ``axis`` (the flattened array when None). NaNs sort to
    the end; ``descending`` reverses the order."""
    (arr,) = _arr("sort", a)
    if kind is not None:
        raise TypeError("'kind' argument to sort is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError("'order' argument to sort is not supported.")
    if axis is None:
        from jaxlite._src.numpy.shape_ops import ravel
        arr = ravel(arr)
        axis = 0
    dim = canonicalize_axis(axis, arr.ndim)
    out = _lax_sort(arr, dimension=dim, is_stable=stable)
    return lax_shape.rev(out, (dim,)) if descending else out


@partial(jit, static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))
def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False,
            dtype=None):
    """Indices that sort ``a`` along ``axis`` (stable by default: equal elements keep
    their order, also with ``descending``)."""
    (arr,) = _arr("argsort", a)
    if kind is not None:
        raise TypeError("'kind' argument to argsort is not supported. Use stable=True or "
                        "stable=False to specify sort stability.")
    if order is not None:
        raise TypeError("'order' argument to argsort is not supported.")
    if axis is None:
        from jaxlite._src.numpy.shape_ops import ravel
        arr = ravel(arr)
        axis = 0
    dim = canonicalize_axis(axis, arr.ndim)
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "argsort")
        idx_dtype = dtypes.canonicalize_dtype(dtype)
    else:
        idx_dtype = _index_dtype(arr.shape[dim])
    iota = lax_shape.broadcasted_iota(idx_dtype, arr.shape, dim)
    if descending and stable:
        arr = lax_shape.rev(arr, (dim,))
        iota = lax_shape.rev(iota, (dim,))
    _, idx = _lax_sort_key_val(arr, iota, dimension=dim, is_stable=stable)
    return lax_shape.rev(idx, (dim,)) if descending else idx


@partial(jit, static_argnames=("axis",))
def lexsort(keys, axis=-1):
    """Indices sorting by several keys: the last key is the primary one."""
    keys = tuple(keys) if not isinstance(keys, (ArrayImpl, Tracer, np.ndarray)) else \
        tuple(keys[i] for i in range(len(keys)))
    arrs = _arr("lexsort", *keys)
    if len(arrs) == 0:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({np.shape(k) for k in arrs}) > 1:
        raise ValueError("all keys need to be the same shape")
    if np.ndim(arrs[0]) == 0:
        return lax_shape.full((), 0, dtypes.default_int_dtype())
    dim = canonicalize_axis(axis, np.ndim(arrs[0]))
    iota = lax_shape.broadcasted_iota(_index_dtype(arrs[0].shape[dim]), np.shape(arrs[0]),
                                      dim)
    return _lax_sort((*arrs[::-1], iota), dimension=dim, num_keys=len(arrs))[-1]


@jit
def sort_complex(a):
    """Sort along the last axis (real part first, then imaginary) and return a complex
    array."""
    (a,) = _arr("sort_complex", a)
    a = _lax_sort(a)
    dt = a.dtype
    if not dtypes.issubdtype(dt, np.complexfloating):
        dt = np.dtype(np.complex128) if dt == np.float64 else np.dtype(np.complex64)
    return lax.convert_element_type(a, dt)


@partial(jit, static_argnames=("kth", "axis"))
def partition(a, kth, axis=-1):
    """Partially sorted copy: the ``kth`` element is in its sorted place, smaller ones
    before it and larger ones after (each side in some order)."""
    (arr,) = _arr("partition", a)
    if dtypes.issubdtype(arr.dtype, np.complexfloating):
        raise NotImplementedError("jnp.partition for complex dtype is not implemented.")
    axis = canonicalize_axis(axis, arr.ndim)
    kth = canonicalize_axis(kth, arr.shape[axis])
    from jaxlite._src.numpy.shape_ops import swapaxes
    U = _U()
    arr = swapaxes(arr, axis, -1)
    if dtypes.issubdtype(arr.dtype, np.unsignedinteger):
        bottom = U.subtract(U.negative(_lax_top_k(U.negative(U.add(arr, 1)), kth + 1)[0]), 1)
    else:
        bottom = U.negative(_lax_top_k(U.negative(arr), kth + 1)[0])
    top = _lax_top_k(arr, arr.shape[-1] - kth - 1)[0]
    out = lax_shape.concatenate([bottom, top], arr.ndim - 1)
    return swapaxes(out, -1, axis)


@partial(jit, static_argnames=("kth", "axis"))
def argpartition(a, kth, axis=-1):
    """Indices that would partition ``a`` (see :func:`partition`)."""
    (arr,) = _arr("partition", a)
    if dtypes.issubdtype(arr.dtype, np.complexfloating):
        raise NotImplementedError("jnp.argpartition for complex dtype is not implemented.")
    axis = canonicalize_axis(axis, arr.ndim)
    kth = canonicalize_axis(kth, arr.shape[axis])
    from jaxlite._src.numpy.shape_ops import swapaxes
    U = _U()
    arr = swapaxes(arr, axis, -1)
    if dtypes.issubdtype(arr.dtype, np.unsignedinteger):
        bottom_ind = _lax_top_k(U.negative(U.add(arr, 1)), kth + 1)[1]
    else:
        bottom_ind = _lax_top_k(U.negative(arr), kth + 1)[1]
    # The indices not among the k+1 smallest, found through a 0/1 proxy (duplicates safe).
    n = arr.shape[-1]
    hit = U.equal(bottom_ind[..., :, None], lax_shape.iota(bottom_ind.dtype, n))
    from jaxlite._src.numpy.reductions import any as jany
    proxy = lax.select(jany(hit, axis=-2), lax_shape.full(arr.shape, 0.0, np.float32),
                       lax_shape.full(arr.shape, 1.0, np.float32))
    top_ind = _lax_top_k(proxy, n - kth - 1)[1]
    out = lax_shape.concatenate([bottom_ind, top_ind], arr.ndim - 1)
    return swapaxes(out, -1, axis)


# ----------------------------------------------------------------------------- searching
def _canonical_for_order(x):
    """Make -0.0 equal 0.0 and every NaN the same NaN, for total-order comparisons."""
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return x
    U = _U()
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(_canonical_for_order(lax.real(x)), _canonical_for_order(lax.imag(x)))
    x = U.where(U.equal(x, 0), np.array(0, x.dtype), x)
    return U.where(U.isnan(x), np.array(np.nan, x.dtype), x)


def _lt_total(x, y, or_equal=False):
    """``x < y`` (or ``<=``) in the total order that sorts NaN last, as lax.sort does."""
    U = _U()
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        xr, xi, yr, yi = lax.real(x), lax.imag(x), lax.real(y), lax.imag(y)
        return U.logical_or(_lt_total(xr, yr), U.logical_and(
            _eq_total(xr, yr), _lt_total(xi, yi, or_equal)))
    if dtypes.issubdtype(x.dtype, np.floating):
        xn, yn = U.isnan(x), U.isnan(y)
        base = U.less_equal(x, y) if or_equal else U.less(x, y)
        if or_equal:
            return U.where(yn, True, U.logical_and(U.logical_not(xn), base))
        return U.where(yn, U.logical_not(xn), base)
    return U.less_equal(x, y) if or_equal else U.less(x, y)


def _eq_total(x, y):
    U = _U()
    if dtypes.issubdtype(x.dtype, np.floating):
        return U.logical_or(U.equal(x, y), U.logical_and(U.isnan(x), U.isnan(y)))
    return U.equal(x, y)


def _searchsorted_compare_all(a, v, side, dtype):
    from jaxlite._src.numpy.reductions import sum as jsum
    a, v = _canonical_for_order(a), _canonical_for_order(v)
    vv = lax_shape.broadcast_in_dim(v, (1,) + v.shape, tuple(range(1, v.ndim + 1)))
    aa = lax_shape.broadcast_in_dim(a, a.shape + (1,) * v.ndim, (0,))
    cmp = _lt_total(aa, vv, or_equal=(side == "right"))
    return jsum(cmp, axis=0, dtype=dtype)


def _searchsorted_binary(a, v, side, dtype):
    """Branch-free binary search, unrolled over the ceil(log2(n + 1)) steps."""
    U = _U()
    n = a.shape[0]
    a_c, v_c = _canonical_for_order(a), _canonical_for_order(v)
    lo = lax_shape.full(v.shape, 0, np.uint32)
    hi = lax_shape.full(v.shape, n, np.uint32)
    for _ in range(int(np.ceil(np.log2(n + 1)))):
        mid = U.add(lo, U.floor_divide(U.subtract(hi, lo), 2))
        from jaxlite._src.numpy.indexing import take
        am = take(a_c, mid, mode="clip")
        go_left = _lt_total(v_c, am, or_equal=(side == "left"))
        lo, hi = U.where(go_left, lo, mid), U.where(go_left, mid, hi)
    return lax.convert_element_type(hi, dtype)


@partial(jit, static_argnames=("side", "method"))
def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Insertion indices of ``v`` into the sorted 1-D ``a`` keeping it sorted: the first
    suitable position (``side="left"``) or the last (``"right"``). ``sorter`` gives the
    indices that sort ``a``. ``method`` ("scan", "scan_unrolled", "sort",
    "compare_all") only affects performance."""
    if sorter is None:
        a, v = _arr("searchsorted", a, v)
    else:
        a, v, sorter = _arr("searchsorted", a, v, sorter)
    if side not in ("left", "right"):
        raise ValueError(f"{side!r} is an invalid value for keyword 'side'. Expected one of "
                         "['left', 'right'].")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(f"method={method!r} not recognized; expected one of 'scan', "
                         "'scan_unrolled', 'sort', or 'compare_all'.")
    if a.ndim != 1:
        raise ValueError("a should be 1-dimensional")
    a, v = promote_dtypes(a, v)
    if sorter is not None:
        a = a[sorter]
    dtype = np.dtype(np.int32) if a.shape[0] <= np.iinfo(np.int32).max else \
        np.dtype(np.int64)
    if a.shape[0] == 0:
        return lax_shape.full(v.shape, 0, dtype)
    if method in ("scan", "scan_unrolled"):
        try:
            return _searchsorted_binary(a, v, side, dtype)
        except (ImportError, NotImplementedError):
            pass
    return _searchsorted_compare_all(a, v, side, dtype)
