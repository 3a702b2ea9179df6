"""jax.numpy index arithmetic and functional updates: unravel_index, ravel_multi_index, put,
put_along_axis, place, choose, apply_along_axis, apply_over_axes, and the ``ufunc`` class with
``frompyfunc``.

Functions that would need the data to fix their result (``mode='raise'`` checks) require
concrete arguments and raise JAX's ConcretizationTypeError under jit, as JAX does.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.errors import ConcretizationTypeError
from jaxlite._src.core.trace import Tracer
from jaxlite._src.numpy import (array_edit, creation, indexing, joining, reductions, searching,
                                shape_ops, ufuncs, vectorize)
from jaxlite._src.numpy.extra_creation import indices as _indices, named_jit
from jaxlite._src.numpy.util import asarray_value, canonicalize_axis, check_arraylike

__all__ = ["unravel_index", "ravel_multi_index", "put", "put_along_axis", "place", "choose",
           "apply_along_axis", "apply_over_axes", "ufunc", "frompyfunc"]


def _vmap(*a, **k):
    from jaxlite._src.api.vmap import vmap
    return vmap(*a, **k)


def _require_concrete(x, context):
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(x, context)
    return x


def _tile_to_size(arr, size):
    n = arr.shape[0]
    if n < size:
        arr = joining.tile(arr, int(np.ceil(size / n)))
    return arr[:size] if arr.shape[0] > size else arr


def unravel_index(indices, shape):
    """The coordinates in an array of ``shape`` of flat ``indices`` (a tuple of arrays).
    Out-of-range indices are clipped into bounds (JAX's behaviour, NumPy raises)."""
    check_arraylike("unravel_index", indices)
    idx = asarray_value(indices)
    try:
        shape = list(shape)
    except TypeError:
        shape = [shape]
    if any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    out = [0] * len(shape)
    for i, s in reversed(list(enumerate(shape))):
        idx, out[i] = ufuncs.divmod(idx, s)
    oob_pos = idx > 0
    if dtypes.issubdtype(idx.dtype, np.unsignedinteger):
        oob_neg = creation.asarray(False)
    else:
        oob_neg = idx < -1
    return tuple(searching.where(oob_pos, s - 1, searching.where(oob_neg, 0, i))
                 for s, i in zip(shape, out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices into an array of shape ``dims`` from per-axis coordinate arrays.

    ``mode``: 'raise' (needs concrete indices), 'wrap', 'clip' or 'ignore'; ``order`` 'C'
    or 'F'."""
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(operator.index(_require_concrete(
        d, "in `dims` argument of ravel_multi_index().")) for d in dims)
    check_arraylike("ravel_multi_index", *multi_index)
    arrs = [asarray_value(i) for i in multi_index]
    if dtype is None:
        dtype = dtypes.result_type(int, *arrs)
    else:
        dtypes.check_user_dtype_supported(dtype, "ravel_multi_index")
        dtype = dtypes.canonicalize_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype={np.dtype(dtype)} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={np.dtype(dtype)} not large enough to hold "
            f"flattened index for dims={dims}. Use the dtype argument to pass a suitable dtype "
            "(e.g. dtype=np.min_scalar_type(prod(dims))).")
    for index in arrs:
        if mode == "raise":
            _require_concrete(index, "The error occurred because ravel_multi_index was "
                              "jit-compiled with mode='raise'. Use mode='wrap' or mode='clip' "
                              "instead.")
        if not dtypes.issubdtype(index.dtype, np.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        if any(bool(reductions.any((i < 0) | (i >= d))) for i, d in zip(arrs, dims)):
            raise ValueError("invalid entry in coordinates array")
    elif mode == "clip":
        arrs = [ufuncs.clip(i, 0, d - 1) for i, d in zip(arrs, dims)]
    elif mode == "wrap":
        arrs = [i % d for i, d in zip(arrs, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or "
                         "'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    result = creation.array(0, dtype=dtype)
    for i, s in zip(arrs, strides):
        result = result + i.astype(dtype) * int(s)
    return result


def put(a, ind, v, mode=None, *, inplace=True):
    """A copy of ``a`` with the flat positions ``ind`` set to ``v`` (repeated as needed).
    ``mode``: None (drop out-of-range), 'clip' or 'wrap'; ``inplace=False`` is required."""
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    check_arraylike("put", a, ind, v)
    arr = asarray_value(a)
    ind_arr = shape_ops.ravel(ind)
    v_arr = shape_ops.ravel(v)
    if not arr.size or not ind_arr.size or not v_arr.size:
        return arr
    v_arr = _tile_to_size(v_arr, ind_arr.shape[0])
    if mode is None:
        scatter_mode = "drop"
    elif mode == "clip":
        ind_arr = ufuncs.clip(ind_arr, 0, arr.size - 1)
        scatter_mode = "promise_in_bounds"
    elif mode == "wrap":
        ind_arr = ind_arr % arr.size
        scatter_mode = "promise_in_bounds"
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    return arr.at[unravel_index(ind_arr, arr.shape)].set(v_arr, mode=scatter_mode)


@named_jit("put_along_axis", static_argnames=("axis", "mode"))
def _put_along_axis(arr, indices, values, axis, mode):
    shape0 = arr.shape
    if axis is None:
        arr = arr.ravel()
        axis = 0
    if arr.ndim != indices.ndim:
        raise ValueError("put_along_axis arguments 'arr' and 'indices' must have same ndim. "
                         f"Got arr.ndim={arr.ndim} and indices.ndim={indices.ndim}.")
    try:
        values = shape_ops.broadcast_to(values, indices.shape)
    except (ValueError, TypeError):
        raise ValueError("put_along_axis argument 'values' must be broadcastable to "
                         f"'indices'. Got values.shape={values.shape} and "
                         f"indices.shape={indices.shape}.") from None
    axis = canonicalize_axis(axis, arr.ndim)
    idx = list(_indices(arr.shape, sparse=True))
    idx[axis] = indices
    out = arr.at[tuple(idx)].set(values, mode=mode)
    return out.reshape(shape0)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """A copy of ``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse of
    take_along_axis); ``inplace=False`` is required."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
                         "arrays are immutable. Pass inplace=False to instead return an "
                         "updated array.")
    check_arraylike("put_along_axis", arr, indices, values)
    return _put_along_axis(asarray_value(arr), asarray_value(indices), asarray_value(values),
                           axis=axis, mode=mode)


def place(arr, mask, vals, *, inplace=True):
    """A copy of ``arr`` whose elements where ``mask`` is true are replaced, in order, by
    ``vals`` (repeated as needed); ``inplace=False`` is required."""
    check_arraylike("place", arr, mask, vals)
    data, mask_arr = asarray_value(arr), asarray_value(mask)
    vals_arr = shape_ops.ravel(vals)
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays "
                         "are immutable. Pass inplace=False to instead return an updated "
                         "array.")
    if data.size != mask_arr.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals_arr.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    idx = searching.where(mask_arr.ravel(), size=mask_arr.size, fill_value=mask_arr.size)[0]
    vals_arr = _tile_to_size(vals_arr, idx.shape[0])
    return data.ravel().at[idx].set(vals_arr, mode="drop").reshape(data.shape)


def choose(a, choices, out=None, mode="raise"):
    """Elementwise selection: ``choices[a[i]][i]`` (all broadcast together). ``mode``:
    'raise' (needs a concrete ``a``), 'wrap' or 'clip'."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    check_arraylike("choose", a, *choices)
    a = asarray_value(a)
    choices = [asarray_value(c) for c in choices]
    if not dtypes.issubdtype(a.dtype, np.integer):
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        arr = _require_concrete(a, "The error occurred because jnp.choose was jit-compiled "
                                "with mode='raise'. Use mode='wrap' or mode='clip' instead.")
        if bool(reductions.any((arr < 0) | (arr >= n))):
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        arr = a % n
    elif mode == "clip":
        arr = ufuncs.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arr, *choices = shape_ops.broadcast_arrays(arr, *choices)
    return creation.array(choices)[(arr,) + _indices(arr.shape, sparse=True)]


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis`` (via vmap); the
    slices' results replace that axis."""
    check_arraylike("apply_along_axis", arr)
    num_dims = np.ndim(arr)
    axis = canonicalize_axis(axis, num_dims)

    def func(x):
        return func1d(x, *args, **kwargs)
    for i in range(1, num_dims - axis):
        func = _vmap(func, in_axes=i, out_axes=-1)
    for _ in range(axis):
        func = _vmap(func, in_axes=0, out_axes=0)
    return func(asarray_value(arr))


def apply_over_axes(func, a, axes):
    """Apply ``func(a, axis)`` for each axis in turn, keeping the rank (a reduced axis is
    re-inserted with size 1)."""
    check_arraylike("apply_over_axes", a)
    a_arr = asarray_value(a)
    for axis in axes:
        b = func(a_arr, axis)
        if b.ndim == a_arr.ndim:
            a_arr = b
        elif b.ndim == a_arr.ndim - 1:
            a_arr = shape_ops.expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a_arr


def _one(x):
    x = asarray_value(x)
    return creation.ones((), dtype=x.dtype)


def _out_dtype(func, *args):
    from jaxlite._src.api.make_jaxpr import eval_shape
    return eval_shape(func, *[_one(a) for a in args]).dtype


_AT_INPLACE = ("jax.numpy.ufunc.at cannot modify arrays in-place, because JAX arrays are "
               "immutable. Pass inplace=False to instead return an updated array.")


class ufunc:
    """A universal function built from a scalar function (JAX's ``jnp.ufunc``): calling it
    broadcasts elementwise (vectorize), and binary ufuncs have ``reduce``, ``accumulate``,
    ``reduceat``, ``outer`` and ``at``, implemented with loops (``fori_loop``/``scan``)
    unless faster implementations are given."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
                 call=None, reduce=None, accumulate=None, at=None, reduceat=None):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._props = {"func": func, "nin": operator.index(nin), "nout": operator.index(nout),
                       "nargs": operator.index(nargs or nin), "identity": identity,
                       "call": call, "reduce": reduce, "accumulate": accumulate, "at": at,
                       "reduceat": reduceat}

    _func = property(lambda self: self._props["func"])
    nin = property(lambda self: self._props["nin"])
    nout = property(lambda self: self._props["nout"])
    nargs = property(lambda self: self._props["nargs"])
    identity = property(lambda self: self._props["identity"])

    def _key(self):
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        call = self._props["call"]
        if call is not None and out is None and where is None:
            return call(*args)   # fast path: the given implementation checks its arguments
        check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        call = self._props["call"] or self._call_vectorized
        return call(*args)

    def _call_vectorized(self, *args):
        return jit(vectorize.vectorize(self._func))(*args)

    def _binary_only(self, what):
        if self.nin != 2:
            raise ValueError(f"{what} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{what} only supported for functions returning a single value")

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """Reduce ``a`` along ``axis`` (None: all axes) by repeated application."""
        check_arraylike(f"{self.__name__}.reduce", a)
        self._binary_only("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if initial is not None:
            check_arraylike(f"{self.__name__}.reduce", initial)
        if where is not None:
            check_arraylike(f"{self.__name__}.reduce", where)
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 "identity, so to use a where mask one has to specify "
                                 "'initial'.")
            if dtypes.dtype(where) != np.bool_:
                raise ValueError(f"where argument must have dtype=bool; got "
                                 f"dtype={dtypes.dtype(where)}")
        reduce = self._props["reduce"] or self._reduce_via_loop
        return reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                      where=where)

    def _reduce_via_loop(self, arr, axis=0, dtype=None, keepdims=False, initial=None,
                         where=None):
        from jaxlite._src.lax.control_flow import fori_loop
        arr = asarray_value(arr)
        if initial is None:
            initial = self.identity
        if dtype is None:
            dtype = _out_dtype(self._func, arr, arr)
        if where is not None:
            where = shape_ops.broadcast_to(where, arr.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError("tuple of axes")
        if axis is None:
            final_shape = (1,) * arr.ndim if keepdims else ()
            arr = arr.ravel()
            where = None if where is None else where.ravel()
            axis = 0
        else:
            axis = canonicalize_axis(axis, arr.ndim)
            final_shape = (arr.shape[:axis] + (1,) + arr.shape[axis + 1:] if keepdims
                           else arr.shape[:axis] + arr.shape[axis + 1:])
        if axis != 0:
            arr = shape_ops.moveaxis(arr, axis, 0)
            where = None if where is None else shape_ops.moveaxis(where, axis, 0)
        if arr.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return creation.full(final_shape, initial, dtype)

        def body(i, val):
            new = self(val, arr[i].astype(dtype))
            return new if where is None else searching.where(where[i], new, val)
        if initial is None:
            start, init = 1, arr[0]
        else:
            start, init = 0, initial
        init = shape_ops.broadcast_to(creation.asarray(init).astype(dtype), arr.shape[1:])
        result = fori_loop(start, arr.shape[0], body, init)
        return result.reshape(final_shape) if keepdims else result

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """Running reduction along ``axis`` (the first element is kept)."""
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        acc = self._props["accumulate"] or self._accumulate_via_scan
        return acc(a, axis=axis, dtype=dtype)

    def _accumulate_via_scan(self, arr, axis=0, dtype=None):
        from jaxlite._src.lax.control_flow import scan
        check_arraylike(f"{self.__name__}.accumulate", arr)
        arr = asarray_value(arr)
        if dtype is None:
            dtype = _out_dtype(self._func, arr, arr)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = canonicalize_axis(axis, np.ndim(arr))
        if arr.size == 0:
            return creation.full(arr.shape, 0, dtype)
        arr = shape_ops.moveaxis(arr, axis, 0)

        def step(carry, _):
            i, x = carry
            y = searching.where(i == 0, arr[0].astype(dtype), self(x.astype(dtype),
                                                                   arr[i].astype(dtype)))
            return (i + 1, y), y
        _, result = scan(step, (0, arr[0].astype(dtype)), None, length=arr.shape[0])
        return shape_ops.moveaxis(result, 0, axis)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """A copy of ``a`` with ``a[indices] = ufunc(a[indices], b)`` applied once per index
        (repeated indices accumulate); ``inplace=False`` is required."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE)
        at = self._props["at"] or self._at_via_scan
        return at(a, indices) if b is None else at(a, indices, b)

    def _at_via_scan(self, a, indices, *args):
        from jaxlite._src.lax.control_flow import scan
        check_arraylike(f"{self.__name__}.at", a, *args)
        dtype = _out_dtype(self._func, a, *args)
        a = asarray_value(a).astype(dtype)
        args = tuple(asarray_value(x).astype(dtype) for x in args)
        if not isinstance(indices, tuple):
            indices = (indices,)
        if not indices:
            return a
        shapes = [np.shape(i) for i in indices if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        if args:
            arg = shape_ops.broadcast_to(args[0], (*shape, *args[0].shape[len(shape):]))
            args = (arg.reshape(math.prod(shape), *args[0].shape[len(shape):]),)
        indices = [i if isinstance(i, slice) else shape_ops.broadcast_to(i, shape).ravel()
                   for i in indices]

        def step(carry, x):
            i, arr = carry
            idx = tuple(ind if isinstance(ind, slice) else ind[i] for ind in indices)
            arr = arr.at[idx].set(self(arr.at[idx].get(), *(g[i] for g in args)))
            return (i + 1, arr), x
        n = [i for i in indices if not isinstance(i, slice)][0].shape[0]
        carry, _ = scan(step, (0, a), None, n)
        return carry[1]

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions over the slices ``a[indices[i]:indices[i+1]]`` along ``axis``."""
        from jaxlite._src.lax.control_flow import fori_loop
        self._binary_only("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        if self._props["reduceat"] is not None:
            return self._props["reduceat"](a, indices, axis=axis, dtype=dtype)
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        a, indices = asarray_value(a), asarray_value(indices)
        if a.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={a.shape}")
        if indices.ndim != 1:
            raise ValueError("reduceat: indices must be one-dimensional, got "
                             f"indices.shape={indices.shape}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = canonicalize_axis(axis, a.ndim)
        res = indexing.take(a, indices, axis=axis)
        other = tuple(d for d in range(res.ndim) if d != axis)
        ind = shape_ops.expand_dims(array_edit.append(indices, a.shape[axis]), other)
        ind_start = indexing.take(ind, creation.arange(ind.shape[axis] - 1), axis=axis)
        ind_end = indexing.take(ind, creation.arange(1, ind.shape[axis]), axis=axis)

        def body(i, acc):
            taken = indexing.take(a, shape_ops.expand_dims(i, 0), axis=axis)
            return searching.where((i > ind_start) & (i < ind_end), self(acc, taken), acc)
        return fori_loop(0, a.shape[axis], body, res)

    def outer(self, A, B, /):
        """``ufunc(a, b)`` for every pair of elements of ``A`` and ``B`` (shape
        A.shape + B.shape)."""
        self._binary_only("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        fa, fb = shape_ops.ravel(A), shape_ops.ravel(B)
        result = _vmap(_vmap(self, (None, 0)), (0, None))(fa, fb)
        return result.reshape(*np.shape(A), *np.shape(B))


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A ``jnp.ufunc`` from a function of ``nin`` scalar (jax-traceable) arguments."""
    return ufunc(func, nin, nout, identity=identity)
