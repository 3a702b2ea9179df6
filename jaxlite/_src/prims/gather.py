"""The gather primitive with XLA's general dimension numbers (as ``jax.lax``), and the
dimension-number types and out-of-bounds modes it shares with scatter (``scatter.py``).

``gather`` reads a window of ``slice_sizes`` at each start index. Out-of-bounds windows
follow ``GatherScatterMode``: CLIP and PROMISE_IN_BOUNDS clamp the start, FILL_OR_DROP fills
(gather) or drops the whole window (scatter).
"""
from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import moveaxis
from jaxlite._src.prims import taylor

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
           "gather_p"]


class GatherDimensionNumbers(NamedTuple):
    """How the dimensions of ``gather``'s operand, indices and output correspond.

    offset_dims: output dims holding the (uncollapsed) slice dims, in operand order.
    collapsed_slice_dims: operand dims with slice size 1 that the output drops.
    start_index_map: the operand dim each column of the last indices axis indexes.
    operand_batching_dims / start_indices_batching_dims: paired batch dims.
    """
    offset_dims: tuple
    collapsed_slice_dims: tuple
    start_index_map: tuple
    operand_batching_dims: tuple = ()
    start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
    """How the dimensions of ``scatter``'s operand, indices and updates correspond.

    update_window_dims: updates dims that are window dims (in operand order).
    inserted_window_dims: operand dims of window size 1 absent from the updates.
    scatter_dims_to_operand_dims: the operand dim each column of the last indices axis indexes.
    operand_batching_dims / scatter_indices_batching_dims: paired batch dims.
    """
    update_window_dims: tuple
    inserted_window_dims: tuple
    scatter_dims_to_operand_dims: tuple
    operand_batching_dims: tuple = ()
    scatter_indices_batching_dims: tuple = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds index handling: CLIP clamps, FILL_OR_DROP fills gathers with
    ``fill_value`` and drops scattered updates, PROMISE_IN_BOUNDS lets the implementation
    choose (here: clamp)."""
    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    def __repr__(self):
        return f"GatherScatterMode.{self.name}"

    __str__ = __repr__

    @staticmethod
    def from_any(s):
        """The mode for a ``GatherScatterMode``, one of 'clip'/'fill'/'drop'/
        'promise_in_bounds', or None (the caller's default)."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f"Unknown gather mode \"{s}\"")


def _sorted_unique(name, what, dims, ndim):
    dims = tuple(dims)
    if tuple(sorted(dims)) != dims:
        raise TypeError(f"{name} {what} in dimension_numbers must be sorted; got {dims}.")
    if len(set(dims)) != len(dims):
        raise TypeError(f"{name} {what} in dimension_numbers must not repeat; got {dims}.")
    for d in dims:
        if not 0 <= d < ndim:
            raise TypeError(f"{name} {what} in dimension_numbers must be in [0, {ndim}); "
                            f"got {dims}.")


def _check_indices(name, indices):
    if indices.dtype.kind not in "iu":
        raise TypeError(f"{name} indices must be an integer type; got {indices.dtype.name}.")
    if indices.ndim == 0:
        raise TypeError(f"{name} indices must have at least one dimension (the index vector "
                        "is the last one).")


def _default_fill(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "fc" or dtype.name in ("bfloat16",) or dtype.kind == "V":
        return np.nan
    if dtype == np.bool_:
        return True
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    return np.nan


def _window_starts(indices, operand_shape, window_sizes, index_map, mode):
    """Per-operand-dim start arrays (shape = indices batch shape), and a validity mask for
    FILL_OR_DROP (None when every window is kept)."""
    batch_shape = indices.shape[:-1]
    starts = [np.zeros(batch_shape, np.int64) for _ in operand_shape]
    valid = None
    for k, d in enumerate(index_map):
        s = indices[..., k].astype(np.int64)
        hi = operand_shape[d] - window_sizes[d]
        if mode is GatherScatterMode.FILL_OR_DROP:
            ok = (s >= 0) & (s <= hi)
            valid = ok if valid is None else valid & ok
        starts[d] = np.minimum(np.maximum(s, 0), max(hi, 0))
    return starts, valid


class Gather(Primitive):
    """XLA gather: one window of ``slice_sizes`` per index vector of ``indices``."""
    weak_rule = "first"     # (the operand's weak type, as abstract_eval)
    accepts_extended = True
    name = "gather"
    fresh_result = True       # (a new array, never a view of the operand: see ``impl``)

    def sharding_rule(self, avals, dimension_numbers, slice_sizes, **params):
        """Operand dimensions taken whole by every window (not indexed, full slice size)
        keep their split in the output's offset dimensions; the batch dimensions of the
        indices become the output's other dimensions; indexed dimensions are whole."""
        dn = dimension_numbers
        operand, indices = avals
        out_nd = len(dn.offset_dims) + indices.ndim - 1
        batch_out = [d for d in range(out_nd) if d not in dn.offset_dims]
        kept = [k for k in range(operand.ndim)
                if k not in dn.collapsed_slice_dims and k not in dn.operand_batching_dims]
        op_map = [None] * operand.ndim
        for k, od in zip(kept, dn.offset_dims):
            if k not in dn.start_index_map and slice_sizes[k] == operand.shape[k]:
                op_map[k] = od
        idx_map = tuple(batch_out) + (None,)
        for ob, ib in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            op_map[ob] = batch_out[ib]
        return [tuple(op_map), idx_map]

    def local_params(self, params, in_factors, out_factors, out_aval):
        """Per-device parameters in a partitioned program: windows of the operand's
        blocks."""
        return dict(params, slice_sizes=tuple(
            s // f for s, f in zip(params["slice_sizes"], in_factors[0])))

    def explicit_sharding_rule(self, avals, dims, dimension_numbers, slice_sizes, **params):
        """Over Explicit axes (JAX's rule): operand dimensions taken whole keep their split
        in the output, the indices' batch dimensions keep theirs; a dimension that is
        indexed into must not be split (``.at[...].get(out_sharding=)`` resolves it)."""
        from jaxlite._src.sharding.types import ShardingTypeError
        dn = dimension_numbers
        op, idx = avals
        od, idd = dims
        out_nd = len(dn.offset_dims) + idx.ndim - 1
        out = [()] * out_nd
        ok = not idd[-1] if idx.ndim else True
        for k in dn.start_index_map:
            if od[k] and slice_sizes[k] != op.shape[k]:
                ok = False
        for ob, ib in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            if od[ob] and idd[ib] and od[ob] != idd[ib]:
                ok = False
        if not ok:
            raise ShardingTypeError(
                "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the "
                "gather indexing as out sharding could not be resolved unambiguously (or "
                f"would require collectives on inputs). Got operand={op!r}, indices={idx!r}")
        skipped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
        window = [k for k in range(op.ndim) if k not in skipped]
        for pos, k in zip(dn.offset_dims, window):
            out[pos] = od[k]
        batch_pos = [p for p in range(out_nd) if p not in dn.offset_dims]
        pairs = dict(zip(dn.start_indices_batching_dims, dn.operand_batching_dims))
        for pos, k in zip(batch_pos, [k for k in range(idx.ndim - 1)]):
            out[pos] = idd[k] or (od[pairs[k]] if k in pairs else ())
        return [tuple(out)]

    def abstract_eval(self, operand, indices, dimension_numbers, slice_sizes,
                      indices_are_sorted, unique_indices, mode, fill_value):
        dn = dimension_numbers
        _check_indices("gather", indices)
        if len(slice_sizes) != operand.ndim:
            raise TypeError("gather slice_sizes must have the same length as operand.shape; "
                            f"got slice_sizes {tuple(slice_sizes)} for shape {operand.shape}.")
        for n, k in zip(operand.shape, slice_sizes):
            if not 0 <= k <= n:
                raise TypeError(f"gather slice_sizes {tuple(slice_sizes)} must be in bounds "
                                f"of operand shape {operand.shape}.")
        _sorted_unique("gather", "collapsed_slice_dims", dn.collapsed_slice_dims, operand.ndim)
        for d in dn.collapsed_slice_dims + dn.operand_batching_dims:
            if slice_sizes[d] > 1:
                raise TypeError("gather slice_sizes of collapsed or batching dims must be at "
                                f"most 1; got {tuple(slice_sizes)}.")
        if indices.shape[-1] != len(dn.start_index_map):
            raise TypeError("gather start_index_map must have as many entries as the last "
                            f"dimension of indices; got {dn.start_index_map} for indices of "
                            f"shape {indices.shape}.")
        batch_shape = indices.shape[:-1]
        kept = [k for d, k in enumerate(slice_sizes)
                if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
        rank = len(batch_shape) + len(kept)
        if len(dn.offset_dims) != len(kept):
            raise TypeError(f"gather offset_dims {dn.offset_dims} must name one output "
                            f"dimension per uncollapsed slice dimension ({len(kept)}).")
        _sorted_unique("gather", "offset_dims", dn.offset_dims, rank)
        shape, b, o = [], iter(batch_shape), iter(kept)
        for i in range(rank):
            shape.append(next(o) if i in dn.offset_dims else next(b))
        return ShapedArray(tuple(shape), operand.dtype, operand.weak_type)

    def impl(self, operand, indices, dimension_numbers, slice_sizes, indices_are_sorted,
             unique_indices, mode, fill_value):
        dn = dimension_numbers
        mode = GatherScatterMode.from_any(mode)
        starts, valid = _window_starts(indices, operand.shape, slice_sizes, dn.start_index_map,
                                       mode)
        nb = indices.ndim - 1
        for od, idd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            shp = [1] * nb
            shp[idd] = indices.shape[idd]
            starts[od] = np.broadcast_to(np.arange(indices.shape[idd]).reshape(shp),
                                         indices.shape[:-1])
        drop = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
        if all(slice_sizes[d] == operand.shape[d] for d in range(operand.ndim)
               if d not in drop) and not dn.operand_batching_dims:
            # Full windows: advanced indexing over the indexed dims only.
            moved = [d for d in range(operand.ndim) if d in drop]
            rest = [d for d in range(operand.ndim) if d not in drop]
            x = np.transpose(operand, moved + rest)
            offs = x[tuple(starts[d] for d in moved)] if moved else \
                np.broadcast_to(x, indices.shape[:-1] + x.shape)
        else:
            idx = []
            nd = operand.ndim
            for d in range(nd):
                shp = [1] * nd
                shp[d] = slice_sizes[d]
                s = starts[d].reshape(starts[d].shape + (1,) * nd)
                idx.append(s + np.arange(slice_sizes[d]).reshape(shp))
            full = operand[tuple(idx)]  # batch dims + slice_sizes
            offs = full.reshape(full.shape[:nb] + tuple(
                slice_sizes[d] for d in range(nd) if d not in drop))
        if valid is not None and not valid.all():
            fill = _default_fill(operand.dtype) if fill_value is None else fill_value
            mask = valid.reshape(valid.shape + (1,) * (offs.ndim - nb))
            offs = np.where(mask, offs, np.asarray(fill).astype(operand.dtype))
        # place batch dims and offset dims as dimension_numbers say
        rank = offs.ndim
        perm, b, o = [], iter(range(nb)), iter(range(nb, rank))
        for i in range(rank):
            perm.append(next(o) if i in dn.offset_dims else next(b))
        out = np.transpose(offs, perm) if perm != list(range(rank)) else offs
        out = np.asarray(out)
        # (a new buffer, as XLA's gather makes: full windows may come out as a view)
        return out if out.flags.c_contiguous and not np.may_share_memory(out, operand) \
            else out.copy()

    def pp_params(self, params):
        return [(k, params[k]) for k in sorted(params)]

    def jvp(self, primals, tangents, dimension_numbers, slice_sizes, indices_are_sorted,
            unique_indices, mode, fill_value):
        # linear in the operand: gather the tangent (out-of-bounds windows read 0)
        operand, indices = primals
        params = dict(dimension_numbers=dimension_numbers, slice_sizes=slice_sizes,
                      indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                      mode=mode)
        out = self.bind(operand, indices, fill_value=fill_value, **params)
        t = tangents[0]
        if u.is_zero(t):
            return out, u.Zero.like(out)
        return out, self.bind(t, indices, fill_value=_tangent_fill(mode), **params)

    def transpose(self, ct, operand, indices, dimension_numbers, slice_sizes,
                  indices_are_sorted, unique_indices, mode, fill_value):
        # scatter-add the cotangent windows into zeros
        if u.is_zero(ct) or not u.is_undefined(operand):
            return [None, None]
        dn = dimension_numbers
        zeros = u.zeros(ShapedArray(u.aval(operand).shape, u.aval(ct).dtype))
        sdn = ScatterDimensionNumbers(
            update_window_dims=dn.offset_dims, inserted_window_dims=dn.collapsed_slice_dims,
            scatter_dims_to_operand_dims=dn.start_index_map,
            operand_batching_dims=dn.operand_batching_dims,
            scatter_indices_batching_dims=dn.start_indices_batching_dims)
        from jaxlite._src.prims.scatter import bind_scatter, scatter_add_p
        out = bind_scatter(scatter_add_p, zeros, indices, ct, sdn,
                           indices_are_sorted=indices_are_sorted,
                           unique_indices=unique_indices, mode=mode)
        return [out, None]

    def batch(self, size, args, dims, dimension_numbers, slice_sizes, indices_are_sorted,
              unique_indices, mode, fill_value):
        # batch dims become operand/indices batching dims (or an extra offset dim), as JAX
        (operand, indices), (od, idd) = args, dims
        dn = dimension_numbers
        p = dict(mode=mode, fill_value=fill_value)
        if idd is None:
            operand = moveaxis(operand, od, 0)
            new = GatherDimensionNumbers(
                offset_dims=(0,) + _plus1(dn.offset_dims),
                collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
                start_index_map=_plus1(dn.start_index_map),
                operand_batching_dims=_plus1(dn.operand_batching_dims),
                start_indices_batching_dims=dn.start_indices_batching_dims)
            return self.bind(operand, indices, dimension_numbers=new,
                             slice_sizes=(size,) + tuple(slice_sizes),
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, **p), 0
        indices = moveaxis(indices, idd, 0)
        if od is None:
            new = GatherDimensionNumbers(
                offset_dims=tuple(1 + d for d in dn.offset_dims),
                collapsed_slice_dims=dn.collapsed_slice_dims,
                start_index_map=dn.start_index_map,
                operand_batching_dims=dn.operand_batching_dims,
                start_indices_batching_dims=_plus1(dn.start_indices_batching_dims))
            # batched indices into one array may no longer be sorted or unique
            return self.bind(operand, indices, dimension_numbers=new, slice_sizes=slice_sizes,
                             indices_are_sorted=False, unique_indices=False, **p), 0
        operand = moveaxis(operand, od, 0)
        new = GatherDimensionNumbers(
            offset_dims=_plus1(dn.offset_dims),
            collapsed_slice_dims=_plus1(dn.collapsed_slice_dims),
            start_index_map=_plus1(dn.start_index_map),
            operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
            start_indices_batching_dims=(0,) + _plus1(dn.start_indices_batching_dims))
        return self.bind(operand, indices, dimension_numbers=new,
                         slice_sizes=(0 if size == 0 else 1,) + tuple(slice_sizes),
                         indices_are_sorted=indices_are_sorted,
                         unique_indices=unique_indices, **p), 0


def _plus1(dims):
    """Dimension numbers shifted past a new leading batch dimension (Python ints)."""
    return tuple(1 + int(d) for d in dims)


def _tangent_fill(mode):
    return 0 if GatherScatterMode.from_any(mode) is GatherScatterMode.FILL_OR_DROP else None



gather_p = Gather()


# ----------------------------------------------------------------------------- binding
# What ``lax.gather`` binds (it converts its operands to arrays, then calls this); the rules
# use it directly.

def _dims(t):
    return tuple(int(d) for d in t)


def bind_gather(operand, start_indices, dimension_numbers, slice_sizes, *,
                unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None):
    """Bind ``gather_p`` with lax's defaults: ``mode`` None is PROMISE_IN_BOUNDS; FILL_OR_DROP
    without ``fill_value`` fills with ``_default_fill`` of the dtype."""
    if not isinstance(dimension_numbers, GatherDimensionNumbers):
        raise TypeError("gather dimension_numbers must be a GatherDimensionNumbers; got "
                        f"{type(dimension_numbers).__name__}.")
    parsed = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                        else mode)
    if parsed is GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = _default_fill(operand.dtype)
    else:
        fill_value = None
    return gather_p.bind(operand, start_indices,
                         dimension_numbers=GatherDimensionNumbers(
                             *(_dims(t) for t in dimension_numbers)),
                         slice_sizes=_dims(slice_sizes),
                         indices_are_sorted=bool(indices_are_sorted),
                         unique_indices=bool(unique_indices), mode=parsed,
                         fill_value=fill_value)


gather_p.jet = taylor.linear(gather_p)   # Taylor mode (jax.experimental.jet)
