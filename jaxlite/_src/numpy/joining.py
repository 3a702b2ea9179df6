"""jax.numpy joining, splitting, tiling and rolling: concatenate, stack (and its row,
column and depth forms), block, split (and its forms), unstack, tile, repeat and roll.

Built on the reshaping and broadcasting of ``shape_ops.py``; as there, array data only flows
through lax operations, with JAX's nested ``jit`` wrappers (``block``, ``_roll_static``, ...).
"""
from __future__ import annotations

import builtins
import operator
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.lax.generic_reduce import broadcast_shapes
from jaxlite._src.numpy.shape_ops import (_arraylike, _arraylike_tuple, _concretization,
                                          _index_tuple, _is_array, atleast_1d, atleast_2d,
                                          atleast_3d, broadcast_to, expand_dims, ravel,
                                          reshape, transpose)
from jaxlite._src.numpy.util import (asarray_value, canonicalize_axis, check_arraylike,
                                     promote_dtypes)

__all__ = ["concatenate", "concat", "stack", "hstack", "vstack", "dstack", "column_stack",
           "block", "split", "array_split", "hsplit", "vsplit", "dsplit", "unstack", "tile",
           "repeat", "roll"]

_bmax = builtins.max


# ----------------------------------------------------------------------------- lax helpers
def _lax_split(x, sizes, axis):
    return list(lax_shape.split(x, sizes, axis=axis))


def _lax_stack(arrays, axis):
    return lax_shape.stack(arrays, axis=axis)


def _lax_unstack(x, axis):
    return tuple(lax_shape.unstack(x, axis=axis))


def _lax_tile(x, reps):
    return lax_shape.tile(x, reps)


# ----------------------------------------------------------------------------- joining
def concatenate(arrays, axis=0, dtype=None):
    """Join a sequence of arrays along an existing ``axis`` (flattening them first when
    ``axis`` is None); dtypes are promoted unless ``dtype`` is given."""
    if _is_array(arrays):
        return _concatenate_array(arrays, axis, dtype)
    arrays = _arraylike_tuple("concatenate", arrays)
    if not len(arrays):
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return concatenate([ravel(a) for a in arrays], axis=0, dtype=dtype)
    if np.ndim(arrays[0]) == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, np.ndim(arrays[0]))
    if dtype is None:
        arrays = promote_dtypes(*arrays)
    else:
        from jaxlite._src.numpy.creation import asarray
        arrays = [asarray(x, dtype=dtype) for x in arrays]
    shapes = [tuple(np.shape(x)) for x in arrays]
    if len({len(s) for s in shapes}) != 1:
        raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                        f"{', '.join(map(str, shapes))}.")
    if builtins.any(builtins.any(p != q for i, (p, q) in enumerate(zip(s, shapes[0]))
                                 if i != axis) for s in shapes[1:]):
        raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                        f"than the one being concatenated: concatenating along dimension "
                        f"{axis} for shapes {', '.join(map(str, shapes))}.")
    if len(arrays) == 1:
        return arrays[0]
    return lax_shape.concatenate(arrays, axis)


def _concatenate_array(arr, axis, dtype=None):
    """concatenate() of the sub-arrays of one array: a reshape (with a transposition)."""
    (arr,) = _arraylike("concatenate", arr)
    if dtype is not None:
        arr = lax.convert_element_type(arr, _user_dtype(dtype, "concatenate"))
    if arr.ndim == 0 or arr.shape[0] == 0:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        return lax_shape.reshape(arr, (arr.size,))
    if arr.ndim == 1:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, arr.ndim - 1)
    shp = arr.shape[1:axis + 1] + (arr.shape[0] * arr.shape[axis + 1],) + arr.shape[axis + 2:]
    dims = [*range(1, axis + 1), 0, *range(axis + 1, arr.ndim)]
    return lax_shape.reshape(arr, shp, dims)


def _user_dtype(dtype, name):
    dtypes.check_user_dtype_supported(dtype, name)
    return dtypes.canonicalize_dtype(dtype)


def concat(arrays, /, *, axis=0):
    """Array-API spelling of :func:`concatenate`."""
    check_arraylike("concat", *arrays)
    return concatenate(arrays, axis=axis)


def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays of equal shape along a new ``axis``."""
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    if _is_array(arrays):
        (arrays,) = _arraylike("stack", arrays)
        axis = canonicalize_axis(axis, arrays.ndim)
        return concatenate(expand_dims(arrays, axis + 1), axis=axis, dtype=dtype)
    arrays = _arraylike_tuple("stack", arrays)
    if dtype is not None:
        from jaxlite._src.numpy.creation import asarray
        arrays = [asarray(x, dtype=dtype) for x in arrays]
    else:
        arrays = promote_dtypes(*arrays)
    shp0 = np.shape(arrays[0])
    if builtins.any(np.shape(x) != shp0 for x in arrays[1:]):
        raise ValueError("All input arrays must have the same shape. Got "
                         f"{', '.join(str(tuple(np.shape(x))) for x in arrays)}.")
    canonicalize_axis(axis, len(shp0) + 1)
    return _lax_stack(list(arrays), axis)


def _stack_like(tup, name, fn):
    if _is_array(tup):
        (tup,) = _arraylike(name, tup)
        return [fn(x) for x in _lax_unstack(tup, 0)] if tup.shape[0] else []
    check_arraylike(name, *tup)
    return [fn(x) for x in tup]


def vstack(tup, dtype=None):
    """Stack arrays row-wise (1-D inputs become rows)."""
    return concatenate(_stack_like(tup, "vstack", atleast_2d), axis=0, dtype=dtype)


def hstack(tup, dtype=None):
    """Stack arrays column-wise (along axis 1, or axis 0 for 1-D inputs)."""
    arrs = _stack_like(tup, "hstack", atleast_1d)
    return concatenate(arrs, axis=0 if arrs and arrs[0].ndim == 1 else 1, dtype=dtype)


def dstack(tup, dtype=None):
    """Stack arrays along a third axis."""
    return concatenate(_stack_like(tup, "dstack", atleast_3d), axis=2, dtype=dtype)


def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array (2-D inputs are kept)."""
    if _is_array(tup):
        (tup,) = _arraylike("column_stack", tup)
        if tup.ndim >= 3:
            return concatenate(tup, axis=1)
    else:
        check_arraylike("column_stack", *tup)
    arrs = [transpose(atleast_2d(x)) if np.ndim(x) < 2 else asarray_value(x)
            for x in (_lax_unstack(tup, 0) if _is_array(tup) else tup)]
    return concatenate(arrs, axis=1)


def _block(xs):
    if isinstance(xs, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
    if isinstance(xs, list):
        if len(xs) == 0:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        parts, depths = zip(*[_block(x) for x in xs])
        if builtins.any(d != depths[0] for d in depths[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        rank = _bmax(depths[0], _bmax(np.ndim(x) for x in parts))
        parts = [lax_shape.broadcast(x, (1,) * (rank - np.ndim(x))) if np.ndim(x) < rank
                 else x for x in parts]
        return concatenate(parts, axis=-depths[0]), depths[0] + 1
    return asarray_value(xs), 1


@jit
def block(arrays):
    """Assemble an array from nested lists of blocks (the innermost lists are joined along
    the last axis, the next level along the second-to-last, ...)."""
    out, _ = _block(arrays)
    return out


# ----------------------------------------------------------------------------- splitting
def _split(op, ary, indices_or_sections, axis=0):
    (ary,) = _arraylike(op, ary)
    axis = operator.index(axis)
    size = ary.shape[axis]
    if isinstance(indices_or_sections, (tuple, list)) or (
            _is_array(indices_or_sections) and np.ndim(indices_or_sections) > 0):
        if isinstance(indices_or_sections, Tracer):
            raise _concretization(indices_or_sections, f"in jax.numpy.{op} argument 1")
        # as JAX: the indices are not wrapped or clipped, so a negative, decreasing or
        # out-of-range index makes a negative size, which lax.split rejects
        bounds = np.asarray([0] + [operator.index(i) for i in np.asarray(
            indices_or_sections).tolist()] + [size], np.int64)
        sizes = list(np.diff(bounds))
        if any(s < 0 for s in sizes):
            raise ValueError(f"Sizes passed to split must be nonnegative, got {sizes}")
    else:
        if isinstance(indices_or_sections, Tracer):
            raise _concretization(indices_or_sections, f"in jax.numpy.{op} argument 1")
        n = int(indices_or_sections)
        part, r = divmod(size, n)
        if r == 0:
            sizes = [part] * n
        elif op == "array_split":
            sizes = [part + 1] * r + [part] * (n - r)
        else:
            raise ValueError(f"array split does not result in an equal division: rest is {r}")
    sizes = [int(s) for s in sizes]
    return _lax_split(ary, sizes, axis)


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections (an int) or at the given indices (a sequence)."""
    return _split("split", ary, indices_or_sections, axis=axis)


def array_split(ary, indices_or_sections, axis=0):
    """Like :func:`split`, but an int need not divide the axis (the first pieces get one
    extra element)."""
    return _split("array_split", ary, indices_or_sections, axis=axis)


def vsplit(ary, indices_or_sections):
    """Split along axis 0."""
    return _split("vsplit", ary, indices_or_sections, axis=0)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D input)."""
    (a,) = _arraylike("hsplit", ary)
    return _split("hsplit", a, indices_or_sections, axis=0 if a.ndim == 1 else 1)


def dsplit(ary, indices_or_sections):
    """Split along axis 2."""
    return _split("dsplit", ary, indices_or_sections, axis=2)


def unstack(x, /, *, axis=0):
    """The slices of ``x`` along ``axis``, as a tuple."""
    (x,) = _arraylike("unstack", x)
    canonicalize_axis(axis, x.ndim)
    return _lax_unstack(x, axis)


# ----------------------------------------------------------------------------- tiling
def tile(A, reps):
    """Repeat the whole array ``reps`` times along each axis."""
    (A,) = _arraylike("tile", A)
    try:
        reps_t = tuple(iter(reps))
    except TypeError:
        reps_t = (reps,)
    try:
        reps_t = tuple(operator.index(r) for r in reps_t)
    except TypeError:
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, got "
                        f"{reps_t}.") from None
    reps_t = (1,) * (A.ndim - len(reps_t)) + reps_t
    if len(reps_t) > A.ndim:
        A = lax_shape.expand_dims(A, tuple(range(len(reps_t) - A.ndim)))
    return _lax_tile(A, reps_t)


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Repeat each element of ``a`` along ``axis`` (flattened when None).

    ``repeats`` is an int or one count per element; counts must be concrete unless
    ``total_repeat_length`` gives the static output length (extra slots repeat the last
    element, missing ones are cut off).
    """
    if isinstance(repeats, (int, np.integer)):
        check_arraylike("repeat", a)
    else:
        check_arraylike("repeat", a, repeats)
    a = asarray_value(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    return _repeat(repeats, a, axis=axis, total_repeat_length=total_repeat_length)


def _repeat(repeats, arr, *, axis, total_repeat_length=None):
    axis = operator.index(axis)
    if total_repeat_length is None:
        if isinstance(repeats, Tracer):
            from jaxlite._src.core.errors import ConcretizationTypeError
            raise ConcretizationTypeError(
                repeats, "When jit-compiling jnp.repeat, the total number of repeats must be "
                "static. To fix this, either specify a static value for `repeats`, or pass a "
                "static value to `total_repeat_length`.")
        if np.ndim(repeats) == 0 and arr.ndim != 0:
            r = operator.index(np.asarray(repeats).item() if _is_array(repeats) else repeats)
            shp = list(arr.shape)
            axis = canonicalize_axis(axis, len(shp))
            aux = list(shp)
            aux.insert(axis + 1, r)
            b = lax_shape.broadcast_in_dim(arr, aux, [i for i in range(len(aux))
                                                      if i != axis + 1])
            shp[axis] *= r
            return reshape(b, shp)
        repeats = np.ravel(np.asarray(repeats))
        if arr.ndim != 0:
            repeats = np.broadcast_to(repeats, [arr.shape[axis]])
        total_repeat_length = int(np.sum(repeats))
    else:
        repeats = ravel(repeats)
        if arr.ndim != 0:
            repeats = broadcast_to(repeats, [arr.shape[axis]])
    if arr.ndim == 0:
        if np.shape(repeats) == (1,):
            from jaxlite._src.numpy.creation import full
            return full([total_repeat_length], arr)
        raise ValueError("`repeat` with a scalar parameter `a` is only implemented for "
                         "scalar values of the parameter `repeats`.")
    if total_repeat_length == 0:
        shp = list(arr.shape)
        shp[axis] = 0
        return lax_shape.full(shp, 0, arr.dtype)
    if arr.shape[axis] == 0:
        return arr
    from jaxlite._src.numpy.creation import zeros
    from jaxlite._src.numpy.cumulative import cumsum
    excl = roll(repeats, shift=1).at[0].set(0)
    starts = cumsum(excl)
    marks = zeros([total_repeat_length], dtype="int32").at[starts].add(1)
    gather_idx = cumsum(marks) - 1
    return _take(arr, gather_idx, axis)


def _take(arr, idx, axis):
    """``arr`` indexed by the integer array ``idx`` along ``axis``."""
    try:
        from jaxlite._src.numpy.indexing import take
    except ImportError:
        return arr[(slice(None),) * axis + (idx,)]
    return take(arr, idx, axis=axis)


# ----------------------------------------------------------------------------- rolling
@partial(jit, static_argnums=(1, 2))
def _roll_static(a, shift, axis):
    for ax, s in zip(*np.broadcast_arrays(axis, shift)):
        n = a.shape[ax]
        if n == 0:
            continue
        i = int((-s) % n)
        a = lax_shape.concatenate([lax_shape.slice_in_dim(a, i, n, 1, int(ax)),
                                   lax_shape.slice_in_dim(a, 0, i, 1, int(ax))], int(ax))
    return a


@partial(jit, static_argnums=(2,))
def _roll_dynamic(a, shift, axis):
    from jaxlite._src.numpy.ufuncs import remainder
    bshape = broadcast_shapes(np.shape(shift), np.shape(axis))
    if len(bshape) != 1:
        raise ValueError("'shift' and 'axis' arguments to roll must be scalars or 1D arrays")
    for x, i in zip(_lax_unstack(broadcast_to(shift, bshape), 0),
                    np.broadcast_to(axis, bshape)):
        i = int(i)
        n = np.asarray(a.shape[i], np.int32)
        x = remainder(lax.convert_element_type(x, np.int32), lax.max(n, np.int32(1)))
        doubled = lax_shape.concatenate((a, a), i)
        a = lax_shape.dynamic_slice_in_dim(doubled, lax.sub(n, x), a.shape[i], axis=i)
    return a


def roll(a, shift, axis=None):
    """Shift elements cyclically by ``shift`` along ``axis`` (the flattened array when
    None); ``shift`` and ``axis`` may be sequences, and ``shift`` may be traced."""
    (arr,) = _arraylike("roll", a)
    if axis is None:
        return reshape(roll(ravel(arr), shift, 0), arr.shape)
    axis = tuple(canonicalize_axis(ax, arr.ndim) for ax in _index_tuple(axis))
    try:
        shift = _index_tuple(shift)
    except TypeError:
        return _roll_dynamic(arr, asarray_value(shift), axis)
    return _roll_static(arr, shift, axis)
