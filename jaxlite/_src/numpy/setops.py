"""jax.numpy set operations: unique (+ the array-API unique_* forms), union1d, intersect1d,
setdiff1d, setxor1d and isin.

Their output sizes depend on the data, so (as in JAX) they need concrete input unless a
static ``size=`` is given. Concrete inputs are computed directly; under tracing with
``size=`` the results are built from sort/compare/cumsum operations and padded with
``fill_value`` (defaults as in JAX). ``isin`` is always traceable.
"""
from __future__ import annotations

import operator
from functools import partial
from typing import NamedTuple

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.errors import ConcretizationTypeError
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.util import (asarray_value, canonicalize_axis, check_arraylike,
                                     promote_dtypes)
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["unique", "unique_all", "unique_counts", "unique_inverse", "unique_values",
           "union1d", "intersect1d", "setdiff1d", "setxor1d", "isin"]

_UNIQUE_HINT = ("When jit-compiling jnp.unique, the size argument must be specified in "
                "order to guarantee a statically-known output shape.")


class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _arr(name, *args):
    check_arraylike(name, *args)
    return [asarray_value(a) for a in args]


def _U():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _np(x):
    return np.asarray(x._value) if isinstance(x, ArrayImpl) else np.asarray(x)


def _wrap(v, dt=None):
    v = np.asarray(v)
    if dt is not None:
        v = v.astype(dt)
    return ArrayImpl(v, False)


def _is_traced(*xs):
    return any(isinstance(x, Tracer) for x in xs)


def _int():
    return dtypes.default_int_dtype()


def _pad(v, size, fill):
    """``v`` (along axis 0) truncated or padded to ``size`` entries with ``fill``."""
    n = v.shape[0]
    if size <= n:
        return v[:size]
    pad = np.broadcast_to(np.asarray(fill, dtype=v.dtype), (size - n,) + v.shape[1:])
    return np.concatenate([v, pad], axis=0)


def _fill_value(fill_value, dt):
    if isinstance(fill_value, Tracer):
        raise ConcretizationTypeError(fill_value, "fill_value must be concrete here.")
    return np.asarray(_np(fill_value)).astype(dt)


# ----------------------------------------------------------------------------- isin
@partial(jit, static_argnames=("assume_unique", "invert", "method"))
def _in1d(ar1, ar2, invert, method="auto", assume_unique=False):
    U = _U()
    from jaxlite._src.numpy.reductions import all as jall, any as jany
    from jaxlite._src.numpy.shape_ops import ravel
    a1, a2 = promote_dtypes(ar1, ar2)
    a1, a2 = ravel(a1), ravel(a2)
    if a1.size == 0 or a2.size == 0:
        return lax_shape.full(a1.shape, bool(invert), np.bool_)
    if invert:
        return jall(U.not_equal(a1[:, None], a2[None, :]), -1)
    return jany(U.equal(a1[:, None], a2[None, :]), -1)


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
    """Elementwise: whether each element of ``element`` occurs in ``test_elements``
    (negated with ``invert``). Traceable; ``method`` only affects performance."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise ValueError(f"method={method!r} is not implemented; options are 'compare_all', "
                         "'binary_search', 'sort', and 'auto'")
    element, test_elements = _arr("isin", element, test_elements)
    from jaxlite._src.numpy.shape_ops import reshape
    return reshape(_in1d(element, test_elements, invert=invert, method=method,
                         assume_unique=assume_unique), np.shape(element))


# ----------------------------------------------------------------------------- unique
def _unique_np(v, axis, return_index, return_inverse, return_counts, equal_nan):
    """NumPy's unique on concrete data, with JAX's index dtype."""
    res = np.unique(v, return_index=True, return_inverse=True, return_counts=True,
                    axis=axis, equal_nan=equal_nan)
    vals, idx, inv, cnt = res
    return vals, idx.astype(_int()), inv.astype(_int()).reshape(-1), cnt.astype(_int())


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
    """The sorted unique elements of ``ar`` (or unique slices along ``axis``).

    Optionally also the index of each value's first occurrence, the inverse indices that
    rebuild ``ar``, and the counts. A static ``size`` pads/truncates the results (values
    padded with ``fill_value``, default the smallest value; counts with 0) and allows
    traced input. NaNs are considered equal unless ``equal_nan=False``.
    """
    (arr,) = _arr("unique", ar)
    if size is not None:
        size = operator.index(size)
    elif isinstance(arr, Tracer):
        raise ConcretizationTypeError(
            arr, "The error arose for the first argument of jnp.unique(). " + _UNIQUE_HINT)
    shape = arr.shape
    if axis is None:
        from jaxlite._src.numpy.shape_ops import ravel
        arr = ravel(arr)
        ax = 0
    else:
        ax = canonicalize_axis(axis, arr.ndim)
    if arr.shape[ax] == 0 and size and fill_value is None:
        raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, "
                         "fill_value must be specified")
    if isinstance(arr, Tracer) or _is_traced(fill_value):
        out = _unique_traced(arr, ax, return_index, return_inverse, return_counts, equal_nan,
                             size, fill_value)
    else:
        out = _unique_concrete(arr, ax, return_index, return_inverse, return_counts,
                               equal_nan, size, fill_value)
    if return_inverse and axis is None:
        i = 2 if return_index else 1
        from jaxlite._src.numpy.shape_ops import reshape
        out = out[:i] + (reshape(out[i], shape),) + out[i + 1:]
    return out[0] if len(out) == 1 else out


def _unique_concrete(arr, ax, return_index, return_inverse, return_counts, equal_nan, size,
                     fill_value):
    v = _np(arr)
    n = v.shape[ax]
    if n == 0 or (v.size == 0):
        vals = np.moveaxis(np.moveaxis(v, ax, 0)[:0], 0, ax) if n == 0 else \
            np.moveaxis(np.moveaxis(v, ax, 0)[:1], 0, ax)
        idx = np.zeros(0 if n == 0 else 1, _int())
        inv = np.zeros(n, _int())
        cnt = np.zeros(0, _int()) if n == 0 else np.full(1, n, _int())
    else:
        vals, idx, inv, cnt = _unique_np(v, None if v.ndim == 1 else ax, True, True, True,
                                         equal_nan)
    if size is not None:
        moved = np.moveaxis(vals, ax, 0)
        fv = moved[:1] if fill_value is None else _fill_value(fill_value, v.dtype)
        if moved.shape[0] == 0 and fill_value is None:
            fv = np.zeros((), v.dtype)
        vals = np.moveaxis(_pad(moved, size, fv[0] if np.ndim(fv) and fill_value is None
                                else fv), 0, ax)
        idx = _pad(idx, size, idx[0] if len(idx) else 0)
        cnt = _pad(cnt, size, 0)
    out = (_wrap(vals, v.dtype),)
    if return_index:
        out += (_wrap(idx),)
    if return_inverse:
        out += (_wrap(inv),)
    if return_counts:
        out += (_wrap(cnt),)
    return out


def _unique_traced(arr, ax, return_index, return_inverse, return_counts, equal_nan, size,
                   fill_value):
    """unique with a static size, from traceable operations (JAX's sort-and-mask)."""
    U = _U()
    from jaxlite._src.numpy.creation import zeros
    from jaxlite._src.numpy.reductions import any as jany, sum as jsum
    from jaxlite._src.numpy.cumulative import cumsum
    from jaxlite._src.numpy.shape_ops import moveaxis, reshape
    from jaxlite._src.numpy.joining import concatenate
    from jaxlite._src.numpy.searching import nonzero
    from jaxlite._src.numpy.sorting import lexsort
    aux = moveaxis(arr, ax, 0)
    if dtypes.issubdtype(aux.dtype, np.complexfloating):
        aux = U.where(U.isnan(aux), np.array(np.nan, aux.dtype), aux)
    n = aux.shape[0]
    rest = int(np.prod(aux.shape[1:], dtype=np.int64))
    if rest == 0:
        n_eff = 1
        perm = lax_shape.full((1,), 0, _int())
    else:
        n_eff = n
        perm = lexsort(reshape(aux, (n, rest)).T[::-1])
    aux = aux[perm]
    if aux.size:
        a1, a0 = aux[1:], aux[:-1]
        neq = U.not_equal(a1, a0)
        if dtypes.issubdtype(aux.dtype, np.inexact) and equal_nan:
            neq = U.logical_and(neq, U.logical_not(U.logical_and(U.isnan(a1), U.isnan(a0))))
        if aux.ndim > 1:
            neq = jany(neq, tuple(range(1, aux.ndim)))
        mask = concatenate([lax_shape.full((1,), True, np.bool_), neq])
    else:
        mask = lax_shape.full((n_eff,), False, np.bool_)
    ind = nonzero(mask, size=size)[0]
    result = aux[ind] if aux.size else aux
    if fill_value is not None:
        fv = lax.convert_element_type(asarray_value(fill_value), result.dtype)
        if result.shape[0]:
            valid = lax_shape.expand_dims(U.less(lax_shape.iota(_int(), size), jsum(mask)),
                                          tuple(range(1, result.ndim)))
            result = U.where(valid, result, fv)
        else:
            result = lax_shape.full((size,) + result.shape[1:], 0, result.dtype)
            result = U.where(True, fv, result)
    result = moveaxis(result, 0, ax)
    out = (result,)
    if return_index:
        out += (perm[ind] if aux.size else perm,)
    if return_inverse:
        if aux.size:
            imask = U.subtract(cumsum(mask), 1)
            inv = zeros(mask.shape, dtype=_int()).at[perm].set(imask)
        else:
            inv = zeros(arr.shape[ax], dtype=_int())
        out += (inv,)
    if return_counts:
        if aux.size:
            idx = nonzero(mask, size=size + 1)[0]
            tail = U.where(idx[1:], idx[1:], mask.size)
            idx = concatenate([idx[:1], tail])
            from jaxlite._src.numpy.differences import diff
            out += (diff(idx),)
        elif arr.shape[ax]:
            out += (lax_shape.full((1,), arr.shape[ax], _int()),)
        else:
            out += (lax_shape.full((0,), 0, _int()),)
    return out


def unique_all(x, /, *, size=None, fill_value=None):
    """Unique values with first indices, inverse indices and counts (NaNs distinct)."""
    (x,) = _arr("unique_all", x)
    v, i, inv, c = unique(x, return_index=True, return_inverse=True, return_counts=True,
                          equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueAllResult(values=v, indices=i, inverse_indices=inv, counts=c)


def unique_counts(x, /, *, size=None, fill_value=None):
    """Unique values and their counts (NaNs distinct)."""
    (x,) = _arr("unique_counts", x)
    v, c = unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return _UniqueCountsResult(values=v, counts=c)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """Unique values and the inverse indices rebuilding ``x`` (NaNs distinct)."""
    (x,) = _arr("unique_inverse", x)
    v, inv = unique(x, return_inverse=True, equal_nan=False, size=size,
                    fill_value=fill_value)
    return _UniqueInverseResult(values=v, inverse_indices=inv)


def unique_values(x, /, *, size=None, fill_value=None):
    """The sorted unique values (NaNs distinct)."""
    (x,) = _arr("unique_values", x)
    return unique(x, equal_nan=False, size=size, fill_value=fill_value)


# ----------------------------------------------------------------------------- set algebra
def _concrete_or_error(x, fname):
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(x, f"The error arose in {fname}()")


def _compact(values, keep, size, fill):
    """The entries of 1-D ``values`` where ``keep`` holds, padded to ``size`` with
    ``fill`` (traceable)."""
    U = _U()
    from jaxlite._src.numpy.reductions import sum as jsum
    from jaxlite._src.numpy.searching import nonzero
    idx = nonzero(keep, size=size, fill_value=0)[0]
    picked = values[idx]
    return U.where(U.less(lax_shape.iota(_int(), size), jsum(keep)), picked, fill)


def _min_fill(vals, count):
    """JAX's default padding for intersect1d/setxor1d: the smallest result (0 when
    empty)."""
    return vals.min() if count else np.zeros((), vals.dtype)


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted unique values present in either input (flattened)."""
    ar1, ar2 = _arr("union1d", ar1, ar2)
    if size is None:
        _concrete_or_error(ar1, "union1d")
        _concrete_or_error(ar2, "union1d")
    else:
        size = operator.index(size)
    from jaxlite._src.numpy.joining import concatenate
    return unique(concatenate((ar1, ar2), axis=None), size=size, fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of ``ar1`` not in ``ar2`` (padded with ``fill_value``, default
    0, to a static ``size``)."""
    a1, a2 = _arr("setdiff1d", ar1, ar2)
    from jaxlite._src.numpy.shape_ops import ravel
    a1, a2 = ravel(a1), ravel(a2)
    if size is None:
        _concrete_or_error(a1, "setdiff1d")
    else:
        size = operator.index(size)
    if not _is_traced(a1, a2, fill_value):
        v1, v2 = _np(a1), _np(a2)
        r = v1 if assume_unique else np.unique(v1)
        if not assume_unique:
            r = np.unique(v1)
        r = r[~np.isin(r, v2)] if v2.size else r
        if size is not None:
            r = _pad(r, size, _fill_value(0 if fill_value is None else fill_value, v1.dtype))
        return _wrap(r, v1.dtype)
    fill = lax.convert_element_type(asarray_value(0 if fill_value is None else fill_value),
                                    a1.dtype)
    if a1.size == 0:
        return lax_shape.full((size or 0,), 0, a1.dtype) if fill_value is None else \
            _U().where(True, fill, lax_shape.full((size or 0,), 0, a1.dtype))
    if assume_unique:
        u, valid = a1, lax_shape.full(a1.shape, True, np.bool_)
    else:
        u, cnt = unique(a1, size=a1.size, return_counts=True)
        valid = _U().greater(cnt, 0)
    keep = _U().logical_and(valid, _in1d(u, a2, invert=True))
    return _compact(u, keep, size, fill)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """Sorted unique values present in both inputs; optionally with the indices of their
    first occurrences in each (padded past the result with the input sizes)."""
    a1, a2 = _arr("intersect1d", ar1, ar2)
    a1, a2 = promote_dtypes(a1, a2)
    from jaxlite._src.numpy.shape_ops import ravel
    a1, a2 = ravel(a1), ravel(a2)
    if size is not None:
        size = operator.index(size)
    elif _is_traced(a1, a2):
        t = a1 if isinstance(a1, Tracer) else a2
        raise ConcretizationTypeError(t, "The error arose in intersect1d(). " + _UNIQUE_HINT)
    if not _is_traced(a1, a2, fill_value):
        v1, v2 = _np(a1), _np(a2)
        r, i1, i2 = np.intersect1d(v1, v2, assume_unique=assume_unique, return_indices=True)
        if size is not None:
            fv = _min_fill(r, len(r)) if fill_value is None else \
                _fill_value(fill_value, v1.dtype)
            r = _pad(r, size, fv)
            i1 = _pad(i1, size, v1.size)
            i2 = _pad(i2, size, v2.size)
        r = _wrap(r, v1.dtype)
        if return_indices:
            return r, _wrap(i1, _int()), _wrap(i2, _int())
        return r
    U = _U()
    from jaxlite._src.numpy.reductions import argmax, sum as jsum
    u, first, cnt = unique(a1, size=a1.size, return_index=True, return_counts=True)
    keep = U.logical_and(U.greater(cnt, 0), _in1d(u, a2, invert=False))
    count = jsum(keep)
    live = U.less(lax_shape.iota(_int(), size), count)
    vals = _compact(u, keep, size, lax_shape.full((), 0, u.dtype))
    if fill_value is None:
        vals = U.where(live, vals, vals.max())
        vals = U.where(live, vals, vals.min())
    else:
        vals = U.where(live, vals, lax.convert_element_type(asarray_value(fill_value),
                                                             vals.dtype))
    if not return_indices:
        return vals
    i1 = U.where(live, _compact(first, keep, size, 0), a1.size)
    i2 = argmax(U.equal(a2[None, :], vals[:, None]), axis=1)
    i2 = U.where(live, i2, a2.size)
    return vals, i1, i2


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values in exactly one of the inputs."""
    a1, a2 = _arr("setxor1d", ar1, ar2)
    from jaxlite._src.numpy.shape_ops import ravel
    from jaxlite._src.numpy.joining import concatenate
    a1, a2 = promote_dtypes(ravel(a1), ravel(a2))
    if size is not None:
        size = operator.index(size)
    elif _is_traced(a1, a2):
        t = a1 if isinstance(a1, Tracer) else a2
        raise ConcretizationTypeError(t, "The error arose in setxor1d(). " + _UNIQUE_HINT)
    if not _is_traced(a1, a2, fill_value):
        v1, v2 = _np(a1), _np(a2)
        r = np.setxor1d(v1, v2, assume_unique=assume_unique)
        if size is not None:
            fv = _min_fill(r, len(r)) if fill_value is None else \
                _fill_value(fill_value, v1.dtype)
            r = _pad(r, size, fv)
        return _wrap(r, v1.dtype)
    U = _U()
    from jaxlite._src.numpy.reductions import sum as jsum
    both = concatenate([a1, a2])
    u, cnt = unique(both, size=both.size, return_counts=True)
    keep = U.logical_and(U.greater(cnt, 0), U.logical_xor(_in1d(u, a1, invert=False),
                                                          _in1d(u, a2, invert=False)))
    live = U.less(lax_shape.iota(_int(), size), jsum(keep))
    vals = _compact(u, keep, size, lax_shape.full((), 0, u.dtype))
    if fill_value is None:
        vals = U.where(live, vals, vals.max())
        return U.where(live, vals, vals.min())
    return U.where(live, vals, lax.convert_element_type(asarray_value(fill_value),
                                                         vals.dtype))
