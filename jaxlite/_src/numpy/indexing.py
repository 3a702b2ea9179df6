"""NumPy-style indexing of jaxlite arrays (``x[idx]``), as JAX does it.

Basic indices (static ints, slices, None, Ellipsis, traced int scalars) lower to
``slice``/``rev``/``dynamic_slice``/``squeeze``/``broadcast_in_dim``. Integer arrays, lists and
concrete boolean masks ("advanced" indices) lower to one ``gather``. ``index_to_gather`` turns
any index into gather dimension numbers; the ``.at[]`` updates (index_update.py) reuse it for
``scatter``.
"""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from jaxlite._src.api.sharding_types import compute_with_out_sharding, type_sharding
from jaxlite._src.config import config
from jaxlite._src.core import errors
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import indexing as lax_idx
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.util import asarray_value, canonicalize_axis
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["take", "take_along_axis"]


def _is_int_scalar(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))


def _is_array_like(i):
    return isinstance(i, (np.ndarray, ArrayImpl, Tracer, list))


# ----------------------------------------------------------------------------- parsing

def _as_index_array(i, pos):
    """A list/array index as a jaxlite value (bool masks stay NumPy-concrete)."""
    if isinstance(i, list):
        if any(e is None or e is Ellipsis or isinstance(e, slice) for e in i):
            raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                            "allowed; use `arr[tuple(seq)]` instead of `arr[seq]`.")
        i = np.asarray(i) if i else np.zeros((0,), np.int32)
    dt = np.dtype(i.dtype)
    if dt != np.bool_ and dt.kind not in "iu":
        raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                        f"{dt.name} at position {pos}, indexer value {i}")
    return i


def _reject_list_index(idx):
    """JAX (unlike NumPy) does not read a bare list as an index array: ``x[[1, 2]]`` must be
    ``x[jnp.array([1, 2])]`` and ``x[[0, slice(None)]]`` must be ``x[tuple(...)]``."""
    unpack = any(e is None or e is Ellipsis or isinstance(e, (slice, list, tuple)) or
                 (isinstance(e, (np.ndarray, ArrayImpl, Tracer)) and np.ndim(e) != 0)
                 for e in idx)
    fix = "arr[tuple(seq)]" if unpack else "arr[array(seq)]"
    raise TypeError("Using a non-tuple sequence for multidimensional indexing is not allowed; "
                    f"use `{fix}` instead of `arr[seq]`. See "
                    "https://github.com/jax-ml/jax/issues/4564 for more information.")


def _expand(idx, shape):
    """Normalise ``idx`` to a list of entries: None, slice, ('int', k), ('dyn', tracer),
    ('arr', array), one per operand axis plus the None/True/False new axes."""
    if isinstance(idx, list):
        _reject_list_index(idx)
    if not isinstance(idx, tuple):
        idx = (idx,)
    out = []
    for pos, i in enumerate(idx):
        if isinstance(i, slice) and any(isinstance(v, Tracer)
                                        for v in (i.start, i.stop, i.step)):
            raise IndexError(
                f"Slice entries must be static integers. Got {i} at position {pos}. Mark the "
                "argument static (jit's static_argnums) or use lax.dynamic_slice / "
                "lax.dynamic_slice_in_dim for a slice whose start depends on traced values.")
        if i is None or i is Ellipsis or isinstance(i, slice):
            out.append(i)
        elif isinstance(i, (bool, np.bool_)):
            out.append(("bool", bool(i)))
        elif _is_int_scalar(i):
            out.append(("int", int(i)))
        elif _is_array_like(i) or hasattr(i, "__jax_array__"):
            if hasattr(i, "__jax_array__") and not _is_array_like(i):
                i = i.__jax_array__()
            i = _as_index_array(i, pos)
            if i.dtype == np.bool_:
                if isinstance(i, Tracer):
                    raise errors.NonConcreteBooleanIndexError(i)
                mask = np.asarray(i)
                out.append(("bool", bool(mask)) if mask.ndim == 0 else ("mask", mask, pos))
                continue
            if i.ndim == 0:
                if isinstance(i, Tracer) or isinstance(i, ArrayImpl):
                    out.append(("dyn", i))
                else:
                    out.append(("int", int(i)))
            else:
                out.append(("arr", asarray_value(i)))
        elif hasattr(i, "__index__") and not isinstance(i, float):
            out.append(("int", operator.index(i)))
        else:
            raise TypeError(f"Indexing mode not yet supported. Got unsupported type "
                            f"'{type(i).__name__}' at position {pos}; use ints, slices, None, "
                            "Ellipsis, or integer/boolean arrays.")
    ndim = len(shape)
    n_ell = sum(1 for e in out if e is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(e[1].ndim if isinstance(e, tuple) and e[0] == "mask" else 1 for e in out
               if e is not None and e is not Ellipsis and
               not (isinstance(e, tuple) and e[0] == "bool"))
    if used > ndim:
        raise IndexError(f"Too many indices: {ndim}-dimensional array indexed with {used} "
                         "regular indices.")
    res = []
    axis = 0
    for e in out:
        if e is Ellipsis:
            res.extend([slice(None)] * (ndim - used))
            axis += ndim - used
        elif isinstance(e, tuple) and e[0] == "mask":
            mask, pos = e[1], e[2]
            want = tuple(shape[axis:axis + mask.ndim])
            if mask.shape != want:
                raise IndexError("boolean index did not match shape of indexed array in index "
                                 f"{pos}: got {mask.shape}, expected {want}")
            res.extend(("arr", asarray_value(nz.astype(np.int32))) for nz in np.nonzero(mask))
            axis += mask.ndim
        else:
            res.append(e)
            axis += not _is_newaxis(e)
    if n_ell == 0:
        res.extend([slice(None)] * (ndim - used))
    return res


def _is_newaxis(e):
    return e is None or (isinstance(e, tuple) and e[0] == "bool")


# ----------------------------------------------------------------------------- basic

def _basic_getitem(x, entries):
    starts, limits, strides, rev_dims, squeeze_dims, dyn = [], [], [], [], [], []
    new_axes, empty_axes = [], []
    axis = out_pos = 0
    for e in entries:
        if _is_newaxis(e):
            new_axes.append(out_pos)
            if e is not None and not e[1]:
                empty_axes.append(out_pos)
            out_pos += 1
            continue
        n = x.shape[axis]
        if isinstance(e, slice):
            a, b, s = e.indices(n)
            # as JAX: a positive step slices [a, b); a negative one slices from its last
            # element up to a (inclusive) with step -s, then reverses
            if s > 0:
                cnt = max(0, -(-(b - a) // s))
                starts.append(a)
                limits.append(max(a, b) if cnt else a)
                strides.append(s)
            else:
                cnt = max(0, -(-(a - b) // -s))
                rev_dims.append(axis)
                starts.append(a + (cnt - 1) * s if cnt else min(b + 1, n))
                limits.append(a + 1 if cnt else min(b + 1, n))
                strides.append(-s)
            out_pos += 1
        elif e[0] == "int" and n == 0:
            raise IndexError(f"index is out of bounds for axis {axis} with size 0")
        elif e[0] == "int" and not -n <= e[1] < n:
            # out of bounds: a dynamic slice, whose start is clamped (JAX's result; only
            # ``.at[...]`` updates drop out-of-bounds writes)
            dyn.append((axis, e[1]))
            starts.append(0)
            limits.append(n)
            strides.append(1)
            squeeze_dims.append(axis)
        elif e[0] == "int":
            k = e[1]
            k = k + n if k < 0 else k
            starts.append(k)
            limits.append(k + 1)
            strides.append(1)
            squeeze_dims.append(axis)
        else:  # ("dyn", tracer)
            dyn.append((axis, e[1]))
            starts.append(0)
            limits.append(n)
            strides.append(1)
            squeeze_dims.append(axis)
        axis += 1
    out = x
    if any(st != 0 or lim != n or sd != 1 for st, lim, sd, n in
           zip(starts, limits, strides, out.shape)):
        out = lax_shape.slice(out, starts, limits,
                              None if all(sd == 1 for sd in strides) else strides)
    if rev_dims:
        out = lax_shape.rev(out, rev_dims)
    for ax, i in dyn:
        i = _normalize_dyn(i, out.shape[ax])
        out = lax_shape.dynamic_slice_in_dim(out, i, 1, ax, allow_negative_indices=False)
    if squeeze_dims:
        out = lax_shape.squeeze(out, squeeze_dims)
    if new_axes:
        out = lax_shape.expand_dims(out, new_axes)
    for ax in empty_axes:
        out = lax_shape.slice_in_dim(out, 0, 0, axis=ax)
    return out


def _index_dtype(arrs):
    if config.jax_enable_x64 and any(np.dtype(a.dtype).itemsize > 4 for a in arrs):
        return np.dtype(np.int64)
    return np.dtype(np.int32)


def _normalize_dyn(i, n, dtype=None):
    """A traced integer index with negative values wrapped (JAX's select_n idiom)."""
    i = asarray_value(i)
    dtype = np.dtype(np.int32) if dtype is None else dtype
    if i.dtype != dtype or i.weak_type:
        i = lax_ew._convert_element_type(i, dtype, False)
    if dtype.kind == "u":
        return i
    zero = ArrayImpl(np.zeros((), dtype), False)
    return lax_ew.select(lax_ew.lt(i, zero),
                         lax_ew.add(i, ArrayImpl(np.asarray(n, dtype), False)), i)


# ----------------------------------------------------------------------------- gather

class GatherIndexer(NamedTuple):
    """An index resolved to one gather: the ``indices`` operand, dimension numbers, slice
    sizes, where the new (None) axes go, and whether the indices are sorted and unique."""
    indices: object
    dnums: lax_idx.GatherDimensionNumbers
    slice_sizes: tuple
    gather_shape: tuple
    newaxis_dims: tuple
    empty_dims: tuple
    sorted_unique: bool


def index_to_gather(shape, entries, normalize=True):
    """Resolve the parsed index ``entries`` over an operand of ``shape`` to a gather."""
    adv_pos = [k for k, e in enumerate(entries) if isinstance(e, tuple) and e[0] == "arr"]
    has_adv = bool(adv_pos)
    if has_adv:  # scalars join the advanced group (NumPy's rule)
        adv_pos = [k for k, e in enumerate(entries)
                   if isinstance(e, tuple) and e[0] in ("arr", "int", "dyn")]
    contiguous = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1)) if has_adv else True
    adv_arrays = [entries[k][1] for k in adv_pos if entries[k][0] == "arr"]
    bshape = tuple(np.broadcast_shapes(*[tuple(a.shape) for a in adv_arrays])) if has_adv \
        else ()
    idx_dtype = _index_dtype(adv_arrays + [e[1] for e in entries
                                           if isinstance(e, tuple) and e[0] == "dyn"])
    # out_desc: the final output dims in order: ("new", keep), ("batch", size),
    # ("offset", size); columns: (operand dim, value, batch-dims it spans, kind)
    out_desc, columns = [], []
    slice_sizes, collapsed = [], []
    adv_group = [("batch", b) for b in bshape]
    if has_adv and not contiguous:
        out_desc.extend(adv_group)
    axis = 0
    for k, e in enumerate(entries):
        if _is_newaxis(e):
            out_desc.append(("new", e is None or e[1]))
            continue
        n = shape[axis]
        if isinstance(e, slice):
            a, b, s = e.indices(n)
            cnt = max(0, -(-(b - a) // s)) if s > 0 else max(0, -(-(a - b) // -s))
            if s == 1:
                if a != 0 or cnt != n:
                    columns.append((axis, a, None, "scalar"))
                slice_sizes.append(cnt)
                out_desc.append(("offset", cnt))
            else:
                columns.append((axis, (a, s, cnt), len(out_desc), "iota"))
                slice_sizes.append(1)
                collapsed.append(axis)
                out_desc.append(("batch", cnt))
        else:
            kind, v = e
            if has_adv and k == adv_pos[0] and contiguous:
                out_desc.extend(adv_group)
            if kind == "int":
                v = v + n if v < 0 and normalize else v
                columns.append((axis, v, None, "scalar"))
            elif kind == "dyn":
                columns.append((axis, _normalize_dyn(v, n, idx_dtype) if normalize else v,
                                None, "dynscalar"))
            else:   # index arrays are all normalized before the gather indices are built
                columns.append((axis, _normalize_dyn(v, n, idx_dtype) if normalize else v,
                                None, "adv"))
            slice_sizes.append(1)
            collapsed.append(axis)
        axis += 1
    gdesc = [d for d in out_desc if d[0] != "new"]
    batch_pos = [i for i, d in enumerate(gdesc) if d[0] == "batch"]
    batch_shape = tuple(gdesc[i][1] for i in batch_pos)
    offset_dims = tuple(i for i, d in enumerate(gdesc) if d[0] == "offset")
    # batch-dim numbers of the advanced group
    if has_adv:
        first = next(i for i, d in enumerate(out_desc) if d is adv_group[0]) if adv_group \
            else 0
        grp_start = sum(1 for d in out_desc[:first] if d[0] == "batch")
    cols = []
    for axis_, v, where, kind in columns:
        target = batch_shape + (1,)
        if kind == "scalar":
            col = lax_shape.broadcast_in_dim(ArrayImpl(np.asarray(v, idx_dtype), False),
                                             target, ())
        elif kind == "dynscalar":
            col = lax_shape.broadcast_in_dim(v, target, ())
        elif kind == "iota":
            a, s, cnt = v
            bdim = sum(1 for d in out_desc[:where] if d[0] == "batch")
            it = lax_shape.iota(idx_dtype, cnt)
            if s != 1:
                it = lax_ew.mul(ArrayImpl(np.asarray(s, idx_dtype), False), it)
            it = lax_ew.add(ArrayImpl(np.asarray(a, idx_dtype), False), it)
            col = lax_shape.broadcast_in_dim(it, target, (bdim,))
        else:
            arr = v
            nd = len(arr.shape)
            dims = tuple(range(grp_start + len(bshape) - nd, grp_start + len(bshape)))
            col = lax_shape.broadcast_in_dim(arr, target, dims) if arr.shape else \
                lax_shape.broadcast_in_dim(arr, target, ())
        cols.append(col)
    if not cols:
        indices = ArrayImpl(np.zeros(batch_shape + (0,), idx_dtype), False)
    elif len(cols) == 1:
        indices = cols[0]
    else:
        indices = lax_shape.concatenate(cols, len(batch_shape))
    dn = lax_idx.GatherDimensionNumbers(
        offset_dims=offset_dims, collapsed_slice_dims=tuple(collapsed),
        start_index_map=tuple(c[0] for c in columns))
    new_dims = tuple(i for i, d in enumerate(out_desc) if d[0] == "new")
    empty = tuple(i for i, d in enumerate(out_desc) if d[0] == "new" and not d[1])
    gshape = tuple(d[1] for d in gdesc)
    return GatherIndexer(indices, dn, tuple(slice_sizes), gshape, new_dims, empty,
                         not has_adv)


def _explicit_partial(x, entries):
    """Whether ``x`` is an array split over Explicit mesh axes that ``entries`` index into
    or slice partially: JAX computes that as a gather, whose sharding rule then decides
    (an indexed split dimension needs ``.at[...].get(out_sharding=)``)."""
    if not isinstance(x, ArrayImpl) or type_sharding(x) is None:
        return False
    axis = 0
    for e in entries:
        if _is_newaxis(e):
            continue
        if not isinstance(e, slice):
            return True
        a, b, s = e.indices(x.shape[axis])
        if abs(s) != 1 or abs(b - a) != x.shape[axis]:
            return True
        axis += 1
    return False


def _finish(out, ix):
    if ix.newaxis_dims:
        out = lax_shape.expand_dims(out, ix.newaxis_dims)
    for ax in ix.empty_dims:
        out = lax_shape.slice_in_dim(out, 0, 0, axis=ax)
    return out


def rewriting_take(x, idx, *, indices_are_sorted=False, unique_indices=False, mode=None,
                   fill_value=None, normalize=True, out_sharding=None):
    """``x[idx]`` with gather options (``x.at[idx].get(...)``); ``normalize=False`` leaves
    negative indices unwrapped (out of bounds); ``out_sharding`` lays out the result (the
    indexing itself then runs with the Explicit mesh axes dropped from types)."""
    x = asarray_value(x)
    if out_sharding is not None:
        return compute_with_out_sharding(
            lambda v: rewriting_take(v, idx, indices_are_sorted=indices_are_sorted,
                                     unique_indices=unique_indices, mode=mode,
                                     fill_value=fill_value, normalize=normalize),
            (x,), out_sharding)
    entries = _expand(idx, x.shape)
    if _check_static[0] and (mode is None or str(mode).lower().endswith(
            "promise_in_bounds")):
        _check_static_indices(entries, x.shape, normalize)
    if mode is None and normalize and not any(isinstance(e, tuple) and e[0] == "arr"
                                              for e in entries) and \
            not _explicit_partial(x, entries):
        return _basic_getitem(x, entries)
    ix = index_to_gather(x.shape, entries, normalize=normalize)
    if 0 in ix.gather_shape:
        # an empty result needs no gather, whose windows may not fit an empty operand
        # (x[idx, :] of x with shape (0, 1): JAX returns zeros of the result's shape)
        return _finish(lax_shape.full_like(x, 0, shape=ix.gather_shape), ix)
    out = lax_idx.gather(x, ix.indices, ix.dnums, ix.slice_sizes,
                         indices_are_sorted=indices_are_sorted or ix.sorted_unique,
                         unique_indices=unique_indices or ix.sorted_unique, mode=mode,
                         fill_value=fill_value)
    return _finish(out, ix)


# jax_check_static_indices, read on every indexing (kept current by a config listener)
_check_static = [config.jax_check_static_indices]


def _on_flag(name):
    if name == "jax_check_static_indices":
        _check_static[0] = config.jax_check_static_indices


config.add_listener(_on_flag)


def _check_static_indices(entries, shape, normalize):
    """jax_check_static_indices: a static integer index out of bounds raises IndexError
    (instead of clamping), as in JAX."""
    axis = 0
    for e in entries:
        if _is_newaxis(e):
            continue
        if isinstance(e, tuple) and e[0] == "int":
            n = shape[axis]
            k = e[1]
            if not (-n <= k < n if normalize else 0 <= k < n):
                raise IndexError(f"index {k} out of bounds for axis {axis} with size {n} "
                                 f"(normalize_indices={normalize})")
        axis += 1


def getitem(x, idx):
    """``x[idx]``: NumPy indexing with JAX's rules (out-of-bounds gathers clamp)."""
    return rewriting_take(x, idx)


# ----------------------------------------------------------------------------- take

def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (the flattened array when None).

    Out-of-bounds indices: ``mode='fill'`` (default) gives ``fill_value`` (NaN for inexact
    types), ``'clip'`` clamps, ``'wrap'`` wraps around. Negative indices count from the end.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    a, indices = asarray_value(a), asarray_value(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError(f"take: indices must be integers, got {indices.dtype.name}")
    if axis is None:
        a = lax_shape.reshape(a, (a.size,))
        axis = 0
    axis = canonicalize_axis(axis, a.ndim)
    n = a.shape[axis]
    if mode is None or mode == "fill":
        gmode = lax_idx.GatherScatterMode.FILL_OR_DROP
        indices = _normalize_dyn(indices, n, _index_dtype([indices]))
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    elif mode == "wrap":
        from jaxlite._src.numpy.ufuncs import remainder
        gmode = lax_idx.GatherScatterMode.PROMISE_IN_BOUNDS
        indices = remainder(indices, n)
    elif mode == "clip":
        gmode = lax_idx.GatherScatterMode.CLIP
    else:
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    if n == 0 and indices.size:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    k = indices.ndim
    slice_sizes = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
    dn = lax_idx.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + k, a.ndim + k - 1)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    return lax_idx.gather(a, lax_shape.expand_dims(indices, (k,)), dn, slice_sizes,
                          mode=gmode, fill_value=fill_value, unique_indices=unique_indices,
                          indices_are_sorted=indices_are_sorted)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """``arr`` indexed by ``indices`` along ``axis``, matching the other dimensions (as
    ``np.take_along_axis``); out-of-bounds indices fill unless ``mode='clip'``. Negative
    indices count from the end unless ``wrap_negative_indices=False`` (default: wrap except
    with ``mode='promise_in_bounds'``)."""
    arr, indices = asarray_value(arr), asarray_value(indices)
    if indices.dtype.kind not in "iu":
        raise TypeError("take_along_axis indices must be of integer type, got "
                        f"{indices.dtype.name}")
    if axis is None:
        if indices.ndim != 1:
            raise ValueError("when axis=None, `indices` must have a single dimension.")
        arr = lax_shape.reshape(arr, (arr.size,))
        axis = 0
    if arr.ndim != indices.ndim:
        raise ValueError("indices and arr must have the same number of dimensions; "
                         f"{indices.ndim} vs. {arr.ndim}")
    axis = canonicalize_axis(axis, arr.ndim)
    idx = []
    for d in range(arr.ndim):
        if d == axis:
            idx.append(indices)
            continue
        a_n, i_n = arr.shape[d], indices.shape[d]
        if a_n != i_n and 1 not in (a_n, i_n):
            raise ValueError(f"take_along_axis: shapes {arr.shape} and {indices.shape} do "
                             "not broadcast outside the indexed axis.")
        shp = [1] * arr.ndim
        shp[d] = a_n
        idx.append(np.arange(a_n, dtype=np.int32).reshape(shp))
    mode = "fill" if mode is None else mode
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    s = type_sharding(arr)
    if s is not None:
        # over Explicit mesh axes the other dimensions keep their splits (JAX gathers with
        # batching dimensions; jaxlite's index arrays would read as indexing into them)
        spec = list(s.spec) + [None] * (arr.ndim - len(s.spec))
        spec = [None if d == axis or arr.shape[d] != indices.shape[d] else e
                for d, e in enumerate(spec)]
        return compute_with_out_sharding(
            lambda a: rewriting_take(a, tuple(idx), mode=mode, fill_value=fill_value,
                                     normalize=wrap_negative_indices),
            (arr,), type(s)(s.mesh, type(s.spec)(*spec)))
    return rewriting_take(arr, tuple(idx), mode=mode, fill_value=fill_value,
                          normalize=wrap_negative_indices)
