"""lax's structural operators: broadcasting, reshapes, transposes, slicing, concatenation,
padding, iota and constant fills."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.prims import shape as sp
from jaxlite._src.prims import dynamic_slice as ds
from jaxlite._src.api.sharding_types import place_as
from jaxlite._src.sharding.types import resolve_out_sharding

__all__ = ["broadcast_in_dim", "broadcast", "broadcast_to_rank", "expand_dims", "reshape",
           "transpose", "squeeze", "rev", "slice", "slice_in_dim", "index_in_dim",
           "concatenate", "iota", "broadcasted_iota", "full", "full_like", "pad",
           "dynamic_slice", "dynamic_update_slice", "dynamic_slice_in_dim",
           "dynamic_index_in_dim", "dynamic_update_slice_in_dim",
           "dynamic_update_index_in_dim", "collapse", "split",
           "stack", "unstack", "tile"]


def _shape(x):
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """Broadcast ``operand`` to ``shape``, mapping its dimensions to ``broadcast_dimensions``."""
    shape = tuple(int(d) for d in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    if _shape(operand) == shape and broadcast_dimensions == tuple(range(len(shape))) and \
            hasattr(operand, "aval") and out_sharding is None:
        return operand
    s = resolve_out_sharding(out_sharding)
    out = sp.broadcast_in_dim_p.bind(operand, shape=shape,
                                     broadcast_dimensions=broadcast_dimensions, sharding=s)
    return out if s is None else place_as(out, s)


def broadcast(operand, sizes, *, out_sharding=None):
    """Add leading dimensions of ``sizes`` to ``operand``."""
    shp = _shape(operand)
    n = len(sizes)
    return broadcast_in_dim(operand, tuple(sizes) + shp, tuple(range(n, n + len(shp))),
                            out_sharding=out_sharding)


def broadcast_to_rank(x, rank):
    """Prepend unit dimensions to ``x`` until it has ``rank`` dimensions."""
    shp = _shape(x)
    nd = len(shp)
    if nd == rank:
        return x
    return broadcast_in_dim(x, (1,) * (rank - nd) + shp, tuple(range(rank - nd, rank)))


def expand_dims(array, dimensions):
    """Insert unit dimensions at the positions ``dimensions``."""
    shp = list(_shape(array))
    nd = len(shp) + len(dimensions)
    dims = sorted(d % nd if d < 0 else d for d in dimensions)
    for d in dims:
        shp.insert(d, 1)
    kept = [i for i in range(nd) if i not in dims]
    return broadcast_in_dim(array, tuple(shp), tuple(kept))


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """Reshape ``operand`` to ``new_sizes`` (after transposing by ``dimensions`` if given)."""
    new_sizes = tuple(int(d) for d in new_sizes)
    if dimensions is None and _shape(operand) == new_sizes and hasattr(operand, "aval") and \
            out_sharding is None:
        return operand
    dims = None if dimensions is None or tuple(dimensions) == tuple(
        range(len(_shape(operand)))) else tuple(dimensions)
    s = resolve_out_sharding(out_sharding)
    out = sp.reshape_p.bind(operand, new_sizes=new_sizes, dimensions=dims, sharding=s)
    return out if s is None else place_as(out, s)


def transpose(operand, permutation):
    """Permute the dimensions of ``operand``."""
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))) and hasattr(operand, "aval") and \
            len(permutation) == len(_shape(operand)):
        return operand
    return sp.transpose_p.bind(operand, permutation=permutation)


def squeeze(array, dimensions):
    """Remove the unit dimensions ``dimensions``."""
    nd = len(_shape(array))
    dims = tuple(sorted(int(d) % nd if nd else int(d) for d in dimensions))
    if not dims and hasattr(array, "aval"):
        return array
    return sp.squeeze_p.bind(array, dimensions=dims)


def rev(operand, dimensions):
    """Reverse ``operand`` along ``dimensions``."""
    return sp.rev_p.bind(operand, dimensions=tuple(int(d) for d in dimensions))


def slice(operand, start_indices, limit_indices, strides=None):
    """Static slice ``operand[start:limit:strides]``."""
    return sp.slice_p.bind(operand, start_indices=tuple(int(i) for i in start_indices),
                           limit_indices=tuple(int(i) for i in limit_indices),
                           strides=None if strides is None else tuple(int(s) for s in strides))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """Slice along one axis."""
    shp = _shape(operand)
    axis = axis % len(shp)
    n = shp[axis]
    start = 0 if start_index is None else (start_index + n if start_index < 0 else start_index)
    limit = n if limit_index is None else (limit_index + n if limit_index < 0 else limit_index)
    starts = [0] * len(shp)
    limits = list(shp)
    strides = [1] * len(shp)
    starts[axis], limits[axis], strides[axis] = start, limit, stride
    return slice(operand, starts, limits, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    """The ``index``-th slice along ``axis`` (with or without the axis)."""
    n = _shape(operand)[axis]
    index = index + n if index < 0 else index
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


def concatenate(operands, dimension):
    """Join ``operands`` along ``dimension``."""
    operands = list(operands)
    if len(operands) == 1 and hasattr(operands[0], "aval"):
        return operands[0]
    return sp.concatenate_p.bind(*operands, dimension=int(dimension))


def iota(dtype, size):
    """``[0, 1, ..., size-1]`` of ``dtype``."""
    return sp.iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=(int(size),),
                          dimension=0, sharding=None)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    """An iota along ``dimension`` of an array of ``shape``."""
    s = resolve_out_sharding(out_sharding)
    out = sp.iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=tuple(shape),
                         dimension=int(dimension), sharding=s)
    return out if s is None else place_as(out, s)


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of ``shape`` filled with ``fill_value``."""
    from jaxlite._src.lax.elementwise import _convert_element_type
    shape = tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    weak = dtype is None and dtypes.is_weakly_typed(fill_value)
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.dtype(fill_value))
    v = _convert_element_type(fill_value, dt, weak)
    return broadcast_in_dim(v, shape, (), out_sharding=sharding)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like ``x`` (shape, dtype, and weak type when ``dtype`` is not given) filled
    with ``fill_value``."""
    from jaxlite._src.lax.elementwise import _convert_element_type
    weak = dtype is None and dtypes.is_weakly_typed(x)
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.dtype(x))
    shape = _shape(x) if shape is None else shape
    shape = tuple(int(d) for d in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    return broadcast_in_dim(_convert_element_type(fill_value, dt, weak), shape, (),
                            out_sharding=sharding)


def pad(operand, padding_value, padding_config):
    """Pad ``operand``; ``padding_config`` lists (low, high, interior) per dimension."""
    return sp.pad_p.bind(operand, padding_value,
                         padding_config=tuple(tuple(c) for c in padding_config))


def _dynamic_slice_indices(operand, start_indices, allow_negative_indices):
    """JAX's normalization of dynamic start indices: one per dimension, negative ones count
    from the end (``i + d`` where ``i < 0``) unless ``allow_negative_indices`` is False."""
    from jaxlite._src.lax import elementwise as ew
    shp = _shape(operand)
    if len(start_indices) != len(shp):
        raise ValueError("Length of slice indices must match number of operand dimensions "
                         f"({len(start_indices)} vs {shp})")
    if not isinstance(start_indices, (list, tuple)):
        if np.ndim(start_indices) != 1:
            raise ValueError(f"Slice indices must be a 1D sequence, got "
                             f"{np.shape(start_indices)}")
        start_indices = list(start_indices)
    if isinstance(allow_negative_indices, bool):
        allow_negative_indices = [allow_negative_indices] * len(start_indices)
    result = []
    for i, d, allow in zip(start_indices, shp, allow_negative_indices):
        if isinstance(i, (int, np.integer)) and not isinstance(i, bool):
            if i < 0 and not allow:
                raise ValueError(f"Index {i} is out of bounds for dimension {d} if "
                                 "allow_negative_indices=False")
            result.append(i + d if i < 0 else i)
            continue
        dt = dtypes.dtype(i)
        if allow and not dtypes.issubdtype(dt, np.unsignedinteger):
            zero, size = np.zeros((), dt), np.asarray(d, dt)
            i = ew.select(ew.lt(i, zero), ew.add(i, size), i)
        result.append(i)
    return result


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """Slice of ``slice_sizes`` at (possibly traced) ``start_indices``, clamped into bounds;
    negative start indices count from the end (unless ``allow_negative_indices=False``)."""
    starts = _dynamic_slice_indices(operand, start_indices, allow_negative_indices)
    return ds.dynamic_slice_p.bind(operand, *starts,
                                   slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """Write ``update`` into ``operand`` at (possibly traced) ``start_indices`` (negative ones
    count from the end unless ``allow_negative_indices=False``)."""
    starts = _dynamic_slice_indices(operand, start_indices, allow_negative_indices)
    return ds.dynamic_update_slice_p.bind(operand, update, *starts)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    """dynamic_slice along a single axis."""
    shp = _shape(operand)
    starts = [0] * len(shp)
    sizes = list(shp)
    starts[axis], sizes[axis] = start_index, slice_size
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
    """The slice at (possibly traced) ``index`` along ``axis``."""
    out = dynamic_slice_in_dim(operand, index, 1, axis,
                               allow_negative_indices=allow_negative_indices)
    return out if keepdims else squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    """dynamic_update_slice along a single axis."""
    starts = [0] * len(_shape(operand))
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


def dynamic_update_index_in_dim(operand, update, index, axis, *,
                                allow_negative_indices=True):
    """Write ``update`` (without or with the unit ``axis``) at ``index`` along ``axis``."""
    axis = int(axis)
    if len(_shape(update)) != len(_shape(operand)):
        update = expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis,
                                       allow_negative_indices=allow_negative_indices)


def collapse(operand, start_dimension, stop_dimension=None):
    """Merge dimensions ``start_dimension:stop_dimension`` into one."""
    shp = _shape(operand)
    stop = len(shp) if stop_dimension is None else stop_dimension
    size = int(np.prod(shp[start_dimension:stop], dtype=np.int64))
    return reshape(operand, shp[:start_dimension] + (size,) + shp[stop:])


def split(operand, sizes, axis=0):
    """Pieces of ``operand`` of the given ``sizes`` along ``axis``."""
    from jaxlite._src.prims.joins import split_p
    nd = len(_shape(operand))
    return split_p.bind(operand, sizes=tuple(sizes), axis=int(axis) % nd if nd else 0)


def stack(operands, axis=0):
    """Operands of equal shape joined along a new dimension ``axis``."""
    from jaxlite._src.prims.joins import stack_p
    nd = len(_shape(operands[0])) + 1
    return stack_p.bind(*operands, axis=int(axis) % nd)


def unstack(x, axis=0):
    """The slices of ``x`` along ``axis``."""
    from jaxlite._src.prims.joins import unstack_p
    nd = len(_shape(x))
    return unstack_p.bind(x, axis=int(axis) % nd)


def tile(operand, reps):
    """``operand`` repeated ``reps[i]`` times along each dimension."""
    from jaxlite._src.prims.joins import tile_p
    return tile_p.bind(operand, reps=tuple(int(r) for r in reps))
