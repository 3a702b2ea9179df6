"""Gather and scatter primitives with XLA's general dimension numbers (as ``jax.lax``).

``gather`` reads a window of ``slice_sizes`` at each start index; ``scatter`` (and its
``-add/-mul/-min/-max`` combiners) writes update windows back. Out-of-bounds windows follow
``GatherScatterMode``: CLIP and PROMISE_IN_BOUNDS clamp the start, FILL_OR_DROP fills
(gather) or drops the whole window (scatter).
"""
from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode",
           "gather_p", "scatter_p", "scatter_add_p", "scatter_sub_p", "scatter_mul_p",
           "scatter_min_p", "scatter_max_p"]


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
        starts[d] = np.clip(s, 0, max(hi, 0))
    return starts, valid


class Gather(Primitive):
    """XLA gather: one window of ``slice_sizes`` per index vector of ``indices``."""
    name = "gather"

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
        return out if out.flags.c_contiguous else out.copy()

    def pp_params(self, params):
        return [(k, params[k]) for k in sorted(params)]


class Scatter(Primitive):
    """XLA scatter: combine each update window into ``operand`` at its start index.
    ``combine`` is the NumPy ufunc (None: overwrite)."""
    name = "scatter"
    combine = None

    def abstract_eval(self, operand, indices, updates, dimension_numbers, indices_are_sorted,
                      unique_indices, mode, update_jaxpr, update_consts):
        dn = dimension_numbers
        _check_indices(self.name, indices)
        if updates.dtype != operand.dtype:
            raise TypeError(f"{self.name} requires operand and updates to have the same "
                            f"dtype; got {operand.dtype.name} and {updates.dtype.name}.")
        _sorted_unique(self.name, "update_window_dims", dn.update_window_dims, updates.ndim)
        _sorted_unique(self.name, "inserted_window_dims", dn.inserted_window_dims,
                       operand.ndim)
        if indices.shape[-1] != len(dn.scatter_dims_to_operand_dims):
            raise TypeError(f"{self.name} scatter_dims_to_operand_dims must have as many "
                            "entries as the last dimension of indices; got "
                            f"{dn.scatter_dims_to_operand_dims} for indices of shape "
                            f"{indices.shape}.")
        n_window = operand.ndim - len(dn.inserted_window_dims) - len(dn.operand_batching_dims)
        if len(dn.update_window_dims) != n_window:
            raise TypeError(f"{self.name}: updates must have {n_window} window dimensions "
                            f"for an operand of rank {operand.ndim}; got update_window_dims "
                            f"{dn.update_window_dims}.")
        scatter_shape = tuple(n for i, n in enumerate(updates.shape)
                              if i not in dn.update_window_dims)
        if scatter_shape != indices.shape[:-1]:
            raise TypeError(f"{self.name}: the non-window dimensions of updates "
                            f"{scatter_shape} must equal the batch dimensions of indices "
                            f"{indices.shape[:-1]}.")
        return ShapedArray(operand.shape, operand.dtype, operand.weak_type)

    def impl(self, operand, indices, updates, dimension_numbers, indices_are_sorted,
             unique_indices, mode, update_jaxpr, update_consts):
        dn = dimension_numbers
        # XLA skips out-of-bounds update windows unless the indices are clamped (CLIP).
        mode = GatherScatterMode.from_any(mode)
        if mode is not GatherScatterMode.CLIP:
            mode = GatherScatterMode.FILL_OR_DROP
        nd, nu = operand.ndim, updates.ndim
        window_dims = [d for d in range(nd) if d not in dn.inserted_window_dims
                       and d not in dn.operand_batching_dims]
        sizes = [1] * nd
        for d, ud in zip(window_dims, dn.update_window_dims):
            sizes[d] = updates.shape[ud]
        starts, valid = _window_starts(indices, operand.shape, sizes,
                                       dn.scatter_dims_to_operand_dims, mode)
        nb = indices.ndim - 1
        for od, idd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            shp = [1] * nb
            shp[idd] = indices.shape[idd]
            starts[od] = np.broadcast_to(np.arange(indices.shape[idd]).reshape(shp),
                                         indices.shape[:-1])
        scatter_update_dims = [i for i in range(nu) if i not in dn.update_window_dims]
        idx = []
        for d in range(nd):
            shp = [1] * nu
            for i, ud in enumerate(scatter_update_dims):
                shp[ud] = indices.shape[i]
            a = starts[d].reshape(shp)
            if d in window_dims:
                ud = dn.update_window_dims[window_dims.index(d)]
                w = [1] * nu
                w[ud] = updates.shape[ud]
                a = a + np.arange(updates.shape[ud]).reshape(w)
            idx.append(np.broadcast_to(a, updates.shape))
        upd = updates
        if valid is not None and not valid.all():
            shp = [1] * nu
            for i, ud in enumerate(scatter_update_dims):
                shp[ud] = indices.shape[i]
            keep = np.broadcast_to(valid.reshape(shp), updates.shape)
            idx = [a[keep] for a in idx]
            upd = updates[keep]
        out = np.array(operand, copy=True)
        if self.combine is None:
            out[tuple(idx)] = upd
        else:
            self.combine.at(out, tuple(idx), upd)
        return out

    def pp_params(self, params):
        return [(k, params[k]) for k in sorted(params)]


class ScatterAdd(Scatter):
    name, combine = "scatter-add", np.add


class ScatterSub(Scatter):
    name, combine = "scatter-sub", np.subtract


class ScatterMul(Scatter):
    name, combine = "scatter-mul", np.multiply


class ScatterMin(Scatter):
    name, combine = "scatter-min", np.minimum


class ScatterMax(Scatter):
    name, combine = "scatter-max", np.maximum


gather_p = Gather()
scatter_p, scatter_add_p, scatter_sub_p = Scatter(), ScatterAdd(), ScatterSub()
scatter_mul_p, scatter_min_p, scatter_max_p = ScatterMul(), ScatterMin(), ScatterMax()
