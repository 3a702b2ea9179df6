"""jax.numpy padding, insertion and deletion: pad (every NumPy mode), append, insert,
delete, resize and trim_zeros."""
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
from jaxlite._src.numpy.shape_ops import (_arraylike, _cast, _concretization, _index_tuple,
                                          broadcast_shapes, broadcast_to, flip, moveaxis, ravel,
                                          reshape, squeeze)
from jaxlite._src.numpy.joining import concatenate, repeat, stack, tile
from jaxlite._src.numpy.util import asarray_value, canonicalize_axis, check_arraylike
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["pad", "append", "insert", "delete", "resize", "trim_zeros"]

_bmin = builtins.min


# ----------------------------------------------------------------------------- padding
def _pairs(values, nd, name):
    """Normalise a pad-width-like argument to ``nd`` (before, after) pairs."""
    if isinstance(values, Tracer) or (isinstance(values, (list, tuple)) and builtins.any(
            isinstance(v, Tracer) for v in np.ravel(np.asarray(values, dtype=object)))):
        raise _concretization(values, f"{name} argument of jnp.pad")
    try:
        arr = np.asarray(values)
    except ValueError as e:
        raise TypeError(f"`{name}` entries must be the same shape: {values}") from e
    if arr.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if arr.shape == (nd, 2):
        return tuple((arr[i, 0], arr[i, 1]) for i in range(nd))
    if arr.shape == (1, 2):
        return tuple((arr[0, 0], arr[0, 1]) for _ in range(nd))
    if arr.shape == (2,):
        return tuple((arr[0], arr[1]) for _ in range(nd))
    if arr.shape == (1,):
        return tuple((arr[0], arr[0]) for _ in range(nd))
    if arr.shape == ():
        v = arr.flat[0]
        return tuple((v, v) for _ in range(nd))
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {arr.shape}. Valid "
                     f"shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _no_padding(width, mode):
    if width[0] > 0 or width[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_constant(array, pad_width, constant_values):
    nd = array.ndim
    cv = _cast(constant_values, array.dtype, array.weak_type)
    if np.ndim(cv) == 0:
        return lax_shape.pad(array, cv, [(lo, hi, 0) for lo, hi in pad_width])
    if np.ndim(cv) == 1:
        if cv.shape[-1] == 1:
            return lax_shape.pad(array, squeeze(cv),
                                 [(lo, hi, 0) for lo, hi in pad_width])
        if cv.shape[-1] != 2:
            raise ValueError("jnp.pad: constant_values has unsupported shape "
                             f"{cv.shape}. If the shape is 1D or 2D, the last dimension must "
                             "be of size 1 or 2.")
    cv = broadcast_to(cv, (nd, 2))
    for i in range(nd):
        widths = [(0, 0, 0)] * nd
        if pad_width[i][0] != 0:
            widths[i] = (pad_width[i][0], 0, 0)
            array = lax_shape.pad(array, cv[i, 0], widths)
        if pad_width[i][1] != 0:
            widths[i] = (0, pad_width[i][1], 0)
            array = lax_shape.pad(array, cv[i, 1], widths)
    return array


def _pad_wrap(array, pad_width):
    for i in range(array.ndim):
        n = array.shape[i]
        if n == 0:
            _no_padding(pad_width[i], "wrap")
            continue
        lrep, lrem = divmod(int(pad_width[i][0]), n)
        rrep, rrem = divmod(int(pad_width[i][1]), n)
        parts = []
        if lrem > 0:
            parts.append(lax_shape.slice_in_dim(array, n - lrem, n, 1, i))
        parts += (lrep + rrep + 1) * [array]
        if rrem > 0:
            parts.append(lax_shape.slice_in_dim(array, 0, rrem, 1, i))
        array = lax_shape.concatenate(parts, i)
    return array


def _pad_symmetric_or_reflect(array, pad_width, mode, reflect_type):
    for i in range(array.ndim):
        n = array.shape[i]
        if n == 0:
            _no_padding(pad_width[i], mode)
            continue
        if pad_width[i][0] == 0 and pad_width[i][1] == 0:
            continue
        offset = 1 if (mode == "reflect" and n > 1) else 0

        def grow(array, padding, before):
            edge = lax_shape.slice_in_dim(array, 0, 1, 1, i) if before else \
                lax_shape.slice_in_dim(array, -1, None, 1, i)
            while padding > 0:
                cur = _bmin(padding, n - offset)
                padding -= cur
                if before:
                    start, stop = offset, offset + cur
                else:
                    start = -(cur + offset)
                    stop = None if (mode == "symmetric" or n == 1) else -1
                x = flip(lax_shape.slice_in_dim(array, start, stop, 1, i), axis=i)
                if reflect_type == "odd":
                    from jaxlite._src.numpy.ufuncs import multiply, subtract
                    x = subtract(multiply(2, edge), x)
                    if n > 1:
                        edge = lax_shape.slice_in_dim(x, 0, 1, 1, i) if before else \
                            lax_shape.slice_in_dim(x, -1, None, 1, i)
                array = lax_shape.concatenate([x, array] if before else [array, x], i)
            return array
        array = grow(array, int(pad_width[i][0]), True)
        array = grow(array, int(pad_width[i][1]), False)
    return array


def _pad_edge(array, pad_width):
    for i in range(array.ndim):
        n = array.shape[i]
        if n == 0:
            _no_padding(pad_width[i], "edge")
            continue
        before, after = pad_width[i]
        lo = repeat(lax_shape.slice_in_dim(array, 0, 1, 1, i), before, axis=i)
        hi = repeat(lax_shape.slice_in_dim(array, n - 1, n, 1, i), after, axis=i)
        array = lax_shape.concatenate([lo, array, hi], i)
    return array


def _pad_linear_ramp(array, pad_width, end_values):
    from jaxlite._src.numpy.spacing import linspace
    for ax in range(array.ndim):
        e_lo = lax_shape.slice_in_dim(array, 0, 1, 1, ax)
        e_hi = lax_shape.slice_in_dim(array, -1, None, 1, ax)
        lo = linspace(start=end_values[ax][0], stop=squeeze(e_lo, ax), num=pad_width[ax][0],
                      endpoint=False, dtype=array.dtype, axis=ax)
        lo = _cast(lo, lo.dtype, array.weak_type)
        hi = linspace(start=end_values[ax][1], stop=squeeze(e_hi, ax), num=pad_width[ax][1],
                      endpoint=False, dtype=array.dtype, axis=ax)
        hi = _cast(hi, hi.dtype, array.weak_type)
        hi = flip(hi, ax)
        array = lax_shape.concatenate([lo, array, hi], ax)
    return array


def _pad_stats(array, pad_width, stat_length, stat_func):
    for i in range(array.ndim):
        if stat_length is None:
            s_lo = stat_func(array, axis=i, keepdims=True)
            s_hi = s_lo
        else:
            n = array.shape[i]
            l_lo, l_hi = stat_length[i]
            if l_lo == 0 or l_hi == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            l_lo, l_hi = _bmin(int(l_lo), n), _bmin(int(l_hi), n)
            s_lo = stat_func(lax_shape.slice_in_dim(array, 0, l_lo, 1, i), axis=i,
                             keepdims=True)
            s_hi = stat_func(lax_shape.slice_in_dim(array, -l_hi, None, 1, i), axis=i,
                             keepdims=True)
        if dtypes.issubdtype(array.dtype, np.integer):
            from jaxlite._src.numpy.ufuncs import round as jround
            s_lo, s_hi = jround(s_lo), jround(s_hi)
        s_lo = _cast(s_lo, array.dtype, array.weak_type)
        s_hi = _cast(s_hi, array.dtype, array.weak_type)
        lo = repeat(s_lo, pad_width[i][0], axis=i)
        hi = repeat(s_hi, pad_width[i][1], axis=i)
        array = lax_shape.concatenate([lo, array, hi], i)
    return array


def _pad_empty(array, pad_width):
    for i in range(array.ndim):
        lo_shape = array.shape[:i] + (int(pad_width[i][0]),) + array.shape[i + 1:]
        hi_shape = array.shape[:i] + (int(pad_width[i][1]),) + array.shape[i + 1:]
        lo = lax_shape.full(lo_shape, 0, array.dtype)
        hi = lax_shape.full(hi_shape, 0, array.dtype)
        if array.weak_type:
            lo = _cast(lo, array.dtype, True)
            hi = _cast(hi, array.dtype, True)
        array = lax_shape.concatenate([lo, array, hi], i)
    return array


def _pad_impl(array, pad_width, mode, constant_values, stat_length, end_values,
              reflect_type):
    array = asarray_value(array)
    nd = array.ndim
    if nd == 0:
        return array
    from jaxlite._src.numpy import reductions as R
    stat_funcs = {"maximum": R.amax, "minimum": R.amin, "mean": R.mean}
    pad_width = tuple((int(lo), int(hi)) for lo, hi in _pairs(pad_width, nd, "pad_width"))
    pw = np.array(pad_width)
    if pw.shape != (nd, 2):
        raise ValueError(f"Expected pad_width to have shape {(nd, 2)}; got {pw.shape}.")
    if np.any(pw < 0):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        from jaxlite._src.numpy.creation import asarray
        return _pad_constant(array, pad_width, asarray(constant_values))
    if mode == "wrap":
        return _pad_wrap(array, pad_width)
    if mode in ("symmetric", "reflect"):
        return _pad_symmetric_or_reflect(array, pad_width, str(mode), reflect_type)
    if mode == "edge":
        return _pad_edge(array, pad_width)
    if mode == "linear_ramp":
        return _pad_linear_ramp(array, pad_width, _pairs(end_values, nd, "end_values"))
    if mode == "median":
        from jaxlite._src.numpy.statistics import median
        stat_funcs["median"] = median
    if mode in stat_funcs:
        if stat_length is not None:
            stat_length = _pairs(stat_length, nd, "stat_length")
        return _pad_stats(array, pad_width, stat_length, stat_funcs[str(mode)])
    if mode == "empty":
        return _pad_empty(array, pad_width)
    raise AssertionError(mode)  # pragma: no cover - pad() validated the mode


_pad_impl.__name__ = _pad_impl.__qualname__ = "_pad"
_pad = jit(_pad_impl, static_argnums=(1, 2, 4, 5, 6))

_PAD_KWARGS = {
    "empty": (), "edge": (), "wrap": (), "constant": ("constant_values",),
    "linear_ramp": ("end_values",), "maximum": ("stat_length",), "mean": ("stat_length",),
    "median": ("stat_length",), "minimum": ("stat_length",), "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


def _hashable_pairs(p):
    return tuple((a, b) for a, b in p)


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad ``array`` with ``pad_width`` = (before, after) per axis (or one pair / one int for
    every axis).

    Modes: "constant" (``constant_values``), "edge", "wrap", "reflect" and "symmetric"
    (``reflect_type`` "even"/"odd"), "linear_ramp" (``end_values``), "maximum", "minimum",
    "mean", "median" (``stat_length``), "empty" (zeros), or a callable applied along each
    axis as in NumPy.
    """
    (array,) = _arraylike("pad", array)
    pad_width = _pairs(pad_width, array.ndim, "pad_width")
    if pad_width and not builtins.all(
            isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_))
            for pair in pad_width for p in pair):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        return _pad_func(array, pad_width, mode, **kwargs)
    try:
        allowed = _PAD_KWARGS[mode]
    except (KeyError, TypeError):
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.") from None
    bad = set(kwargs) - set(allowed)
    if bad:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {bad}")
    constant_values = kwargs.get("constant_values", 0)
    stat_length = kwargs.get("stat_length", None)
    end_values = kwargs.get("end_values", 0)
    reflect_type = kwargs.get("reflect_type", "even")
    if stat_length is not None:
        stat_length = _hashable_pairs(_pairs(stat_length, array.ndim, "stat_length"))
    end_values = _hashable_pairs(_pairs(end_values, array.ndim, "end_values"))
    return _pad(array, _hashable_pairs(pad_width), mode, constant_values, stat_length,
                end_values, reflect_type)


def _pad_func(array, pad_width, func, **kwargs):
    """Callable ``mode``: zero-pad, then let ``func(vector, iaxis_pad_width, iaxis, kwargs)``
    rewrite every 1-D slice along each axis (it must return the new vector)."""
    padded = _pad_constant(array, pad_width, asarray_value(0))
    for axis in range(padded.ndim):
        moved = moveaxis(padded, axis, -1)
        lead = moved.shape[:-1]
        flat = reshape(moved, (-1, moved.shape[-1]))
        rows = [asarray_value(func(flat[r], pad_width[axis], axis, kwargs))
                for r in range(flat.shape[0])]
        out = stack(rows, 0) if rows else flat
        padded = moveaxis(reshape(out, lead + (moved.shape[-1],)), -1, axis)
    return padded


# ----------------------------------------------------------------------------- insert/delete
@partial(jit, static_argnames=("axis",))
def append(arr, values, axis=None):
    """``arr`` with ``values`` appended along ``axis`` (both flattened when None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], 0)
    return concatenate([arr, values], axis=axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` (an int, slice, index array or boolean mask)
    along ``axis`` (the flattened array when None).

    Index arrays must be concrete unless ``assume_unique_indices=True``.
    """
    (a,) = _arraylike("delete", arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, a.ndim)
    try:
        idx = operator.index(obj)
    except TypeError:
        pass
    else:
        idx = canonicalize_axis(idx, a.shape[axis])
        lead = (slice(None),) * axis
        return concatenate([a[lead + (slice(0, idx),)], a[lead + (slice(idx + 1, None),)]],
                           axis=axis)
    n = a.shape[axis]
    if isinstance(obj, slice):
        from jaxlite._src.numpy.creation import arange
        obj = arange(n)[obj]
        assume_unique_indices = True
    check_arraylike("delete", a, obj)
    if hasattr(obj, "__jax_array__"):
        obj = obj.__jax_array__()
    if dtypes.issubdtype(dtypes.dtype(obj), np.integer) and assume_unique_indices:
        from jaxlite._src.numpy import ufuncs as U
        from jaxlite._src.numpy.creation import arange
        from jaxlite._src.numpy.reductions import sum as jsum
        from jaxlite._src.numpy.sorting import sort
        o = ravel(asarray_value(obj))
        o = U.clip(U.where(U.less(o, 0), U.add(o, n), o), 0, n)
        o = sort(o)
        o = U.subtract(o, arange(o.size, dtype=o.dtype))
        i = arange(n - o.size, dtype=o.dtype)
        i = U.add(i, jsum(U.greater_equal(i[None, :], o[:, None]), 0, dtype=i.dtype))
        return a[(slice(None),) * axis + (i,)]
    if isinstance(obj, Tracer):
        raise _concretization(obj, "'obj' array argument of jnp.delete()")
    objv = np.asarray(obj)
    if dtypes.issubdtype(objv.dtype, np.integer):
        mask = np.ones(n, dtype=bool)
        mask[objv] = False
    elif objv.dtype == bool:
        if objv.shape != (n,):
            raise ValueError("np.delete(arr, obj): for boolean indices, obj must be "
                             "one-dimensional with length matching specified axis.")
        mask = ~objv
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={objv.dtype}; must be integer "
                         "or bool.")
    return a[(slice(None),) * axis + (mask,)]


def insert(arr, obj, values, axis=None):
    """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis`` (the
    flattened array when None); ``obj`` is an int, a slice or an integer array (which may be
    traced)."""
    a, _, vals = _arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
    from jaxlite._src.numpy import ufuncs as U
    from jaxlite._src.numpy.creation import arange, full, ones, zeros
    from jaxlite._src.numpy.searching import nonzero
    from jaxlite._src.numpy.sorting import argsort
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(operator.index(axis), a.ndim)
    if isinstance(obj, slice):
        indices = arange(*obj.indices(a.shape[axis]))
    else:
        indices = asarray_value(obj)
    if indices.ndim > 1:
        raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                         f"scalar; got {obj}")
    if not dtypes.issubdtype(indices.dtype, np.integer):
        if indices.size == 0 and not isinstance(obj, (ArrayImpl, Tracer)):
            indices = lax.convert_element_type(indices, dtypes.default_int_dtype())
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    vals = lax.convert_element_type(vals, a.dtype) if vals.dtype != a.dtype else vals
    if vals.ndim < a.ndim:
        vals = lax_shape.expand_dims(vals, tuple(range(a.ndim - vals.ndim)))
    if indices.size == 1:
        index = ravel(indices)[0]
        if indices.ndim == 0:
            vals = moveaxis(vals, 0, axis)
        indices = full(vals.shape[axis], index)
    n_in = a.shape[axis]
    n_ins = broadcast_shapes(indices.shape, (vals.shape[axis],))[0]
    out_shape = list(a.shape)
    out_shape[axis] += n_ins
    out = zeros(tuple(out_shape), dtype=a.dtype)
    indices = U.where(U.less(indices, 0), U.add(indices, n_in), indices)
    indices = U.clip(indices, 0, n_in)
    vals_ind = indices.at[argsort(indices)].add(arange(n_ins, dtype=indices.dtype))
    mask = ones(n_in + n_ins, dtype=bool).at[vals_ind].set(False)
    arr_ind = nonzero(mask, size=n_in)[0]
    lead = (slice(None),) * axis
    out = out.at[lead + (vals_ind,)].set(vals)
    return out.at[lead + (arr_ind,)].set(a)


def _resize_impl(a, new_shape):
    arr = ravel(a)
    new_size = math.prod(new_shape)
    if arr.size == 0 or new_size == 0:
        return lax_shape.full(new_shape, 0, arr.dtype)
    reps = -(-new_size // arr.size)
    arr = lax_shape.slice(tile(arr, reps), (0,), (new_size,))
    return reshape(arr, new_shape)


def resize(a, new_shape):
    """Array of shape ``new_shape`` filled by repeating the elements of ``a`` cyclically."""
    check_arraylike("resize", a)
    new_shape = _index_tuple(new_shape)
    if builtins.any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    return _resize(asarray_value(a), new_shape=new_shape)


_resize_impl.__name__ = _resize_impl.__qualname__ = "resize"
_resize = jit(_resize_impl, static_argnames=("new_shape",))


def trim_zeros(filt, trim="fb", axis=None):
    """Drop leading ("f") and/or trailing ("b") all-zero slices along ``axis`` (every axis
    when None). The input must be concrete: the output shape depends on its values."""
    (filt,) = _arraylike("trim_zeros", filt)
    if isinstance(filt, Tracer):
        raise _concretization(filt, "in the `filt` argument of trim_zeros()")
    axes = set(range(filt.ndim)) if axis is None else {
        canonicalize_axis(ax, filt.ndim) for ax in _index_tuple(axis)}
    t = trim.lower()
    if not axes or ("f" not in t and "b" not in t):
        return filt
    v = np.asarray(filt._value)
    idx = []
    for ax in range(filt.ndim):
        if ax not in axes:
            idx.append(slice(None))
            continue
        other = tuple(i for i in range(v.ndim) if i != ax)
        mask = np.any(v != 0, axis=other) if other else v != 0
        if not mask.any():
            idx.append(slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in t else None
        stop = v.shape[ax] - int(mask[::-1].argmax()) if "b" in t else None
        idx.append(slice(start, stop))
    return filt[tuple(idx)]
