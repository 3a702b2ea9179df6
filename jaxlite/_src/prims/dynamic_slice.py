"""Slices at traced start indices: ``dynamic_slice`` and ``dynamic_update_slice`` (start
indices clamped into bounds, as XLA does). Each is one class holding its rules."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.ir import Literal
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims import batch_util
from jaxlite._src.prims import numba_exprs as nx
from jaxlite._src.prims import taylor
from jaxlite._src.prims.shape import Linear

__all__ = ["dynamic_slice_p", "dynamic_update_slice_p"]


def _clamped(starts, shape, sizes):
    """The start indices of a dynamic slice/update clamped so the block lies within
    ``shape`` (as XLA clamps them)."""
    return [min(max(int(s), 0), n - k) for s, n, k in zip(starts, shape, sizes)]


def _batched_index(size, starts, dims):
    """Start indices (some batched along ``dims``) as one ``(size, len(starts))`` array of
    index vectors, as JAX's ``_batch_dynamic_slice_indices`` stacks them."""
    from jaxlite._src.prims.conversion import convert_element_type_p
    from jaxlite._src.prims.shape import broadcast_in_dim_p, concatenate_p
    dt = np.result_type(*(u.aval(s).dtype for s in starts))
    cols = []
    for s, d in zip(starts, dims):
        if u.aval(s).dtype != dt:
            s = convert_element_type_p.bind(s, new_dtype=dt, weak_type=False, sharding=None)
        cols.append(broadcast_in_dim_p.bind(
            batch_util.moveaxis(s, d, 0) if d is not None else s, shape=(size, 1),
            broadcast_dimensions=(0,) if d is not None else (), sharding=None))
    return cols[0] if len(cols) == 1 else concatenate_p.bind(*cols, dimension=1)


def _check_sizes(shape, starts, slice_sizes):
    """JAX's TypeErrors for a slice that does not fit the operand."""
    if len(starts) != len(shape) or len(slice_sizes) != len(shape):
        raise TypeError(f"dynamic_slice slice_sizes must have the same length as the shape "
                        f"of the operand, got {tuple(slice_sizes)} for operand shape "
                        f"{tuple(shape)} with {len(starts)} start indices.")
    if any(k < 0 for k in slice_sizes):
        raise TypeError(f"slice slice_sizes must be greater than or equal to zero, got "
                        f"slice_sizes {tuple(slice_sizes)}.")
    if any(k > n for k, n in zip(slice_sizes, shape)):
        raise TypeError(f"slice slice_sizes must be less than or equal to operand shape, got "
                        f"slice_sizes {tuple(slice_sizes)} for operand shape {tuple(shape)}.")


def _check_update(shape, dtype, ushape, udtype, nstarts):
    """JAX's TypeErrors for an update that does not fit the operand."""
    if np.dtype(udtype) != np.dtype(dtype):
        raise TypeError(f"lax.dynamic_update_slice requires arguments to have the same dtypes, "
                        f"got {np.dtype(dtype).name}, {np.dtype(udtype).name}.")
    if len(ushape) != len(shape):
        raise TypeError(f"dynamic_update_slice update must have the same rank as operand, got "
                        f"update shape {tuple(ushape)} for operand shape {tuple(shape)}.")
    if nstarts != len(shape):
        raise TypeError(f"dynamic_update_slice start_indices must have length equal to the "
                        f"number of dimensions of the operand, got indices of length "
                        f"{nstarts} for operand shape {tuple(shape)}.")
    if any(u > n for u, n in zip(ushape, shape)):
        raise TypeError(f"dynamic_update_slice update shape must be smaller than operand "
                        f"shape, got update shape {tuple(ushape)} for operand shape "
                        f"{tuple(shape)}.")


class DynamicSlice(Linear):
    """Slice of ``slice_sizes`` at traced start indices (clamped into bounds)."""
    weak_rule = "first"     # (the operand's weak type, as abstract_eval)
    accepts_extended = True
    name = "dynamic_slice"
    numba_vector_access = nx.read_element    # (tier 2's scalar loops)

    def hlo(self, b, x, *starts, slice_sizes):
        return b.op("dynamic-slice", b.out_avals[0], (x,) + starts,
                    "dynamic_slice_sizes={" + ",".join(map(str, slice_sizes)) + "}")

    def sharding_rule(self, avals, slice_sizes):
        """The output keeps the operand's layout along the dimensions taken whole; the
        sliced ones are computed whole."""
        return [tuple(range(avals[0].ndim))] + [()] * (len(avals) - 1)

    def whole_dims(self, avals, slice_sizes):
        x = avals[0]
        return [tuple(k for k in range(x.ndim) if slice_sizes[k] != x.shape[k])] + \
            [()] * (len(avals) - 1)

    def resplit_dims(self, eqn):
        """A sliced dimension is split again as the operand was only where its start is a
        constant (a static slice, as XLA makes it); at a traced start it stays whole."""
        return {k for k, s in enumerate(eqn.invars[1:]) if type(s) is Literal}

    def local_params(self, params, in_factors, out_factors, out_aval):
        """Per device: a dimension kept split is taken whole from the device's block."""
        return dict(params, slice_sizes=tuple(s // f for s, f in
                                              zip(params["slice_sizes"], out_factors)))

    def explicit_sharding_rule(self, avals, dims, slice_sizes):
        """Over Explicit axes the result keeps the operand's sharding (a split dimension
        must stay divisible)."""
        from jaxlite._src.sharding.types import mesh_of, varying_shape_dims
        return [varying_shape_dims("dynamic_slice", avals[0], dims[0], slice_sizes,
                                   mesh_of(avals))]

    # A copy of the block, as XLA's dynamic-slice makes (not a view of the operand): a
    # reader that kept a view would pin the operand's buffer for as long as the program
    # runs, so that a later ``x.at[i].set`` of it (a loop's checkpoint buffer, read at the
    # index it then writes) could never update it in place (compiler/codegen.py
    # reuse_plan), copying the whole operand on every step.
    fresh_result = True

    def check_operands(self, vals, params):
        shape, sizes = vals[0].shape, params["slice_sizes"]
        if len(vals) - 1 == len(shape) == len(sizes):
            for k, n in zip(sizes, shape):
                if not 0 <= k <= n:
                    break
            else:
                return
        _check_sizes(shape, vals[1:], sizes)

    def impl(self, x, *starts, slice_sizes):
        idx = tuple(slice(b, b + k) for b, k in zip(_clamped(starts, x.shape, slice_sizes),
                                                    slice_sizes))
        return x[idx].copy()

    def abstract_eval(self, x, *starts, slice_sizes):
        _check_sizes(x.shape, starts, slice_sizes)
        return ShapedArray(slice_sizes, x.dtype, x.weak_type)

    def batch(self, size, args, dims, slice_sizes):
        shape = list(np.shape(args[0]))
        if dims[0] is not None:
            del shape[dims[0]]
        _check_sizes(tuple(shape), args[1:], slice_sizes)
        if any(d is not None for d in dims[1:]):
            # batched starts: JAX's rule, a gather (CLIP mode clamps as the slice does)
            # batched by gather's own rule
            from jaxlite._src.prims.gather import (GatherDimensionNumbers,
                                                   GatherScatterMode, gather_p)
            nd = tuple(range(len(slice_sizes)))
            dn = GatherDimensionNumbers(offset_dims=nd, collapsed_slice_dims=(),
                                        start_index_map=nd, operand_batching_dims=(),
                                        start_indices_batching_dims=())
            return gather_p.batch(size, [args[0], _batched_index(size, args[1:], dims[1:])],
                                  [dims[0], 0], dimension_numbers=dn,
                                  slice_sizes=tuple(slice_sizes), indices_are_sorted=True,
                                  unique_indices=True, mode=GatherScatterMode.CLIP,
                                  fill_value=None)
        d = dims[0]
        starts = list(args[1:])
        starts.insert(d, u.const(starts[0], 0) if starts else np.int32(0))
        ss = list(slice_sizes)
        ss.insert(d, size)
        return self.bind(args[0], *starts, slice_sizes=tuple(ss)), d

    def transpose(self, ct, x, *starts, slice_sizes):
        if u.is_zero(ct):
            return [None] * (1 + len(starts))
        z = u.zeros(u.aval(x))
        return [dynamic_update_slice_p.bind(z, ct, *starts)] + [None] * len(starts)

    def numba(self, code, eqn, ins, slice_sizes):
        """Tier 2's loop code (``compiler/numba_bodies.py``): the block at the clamped starts, copied."""
        x = eqn.invars[0].aval
        out = code.new_array(eqn.outvars[0].aval)
        starts = []
        for s, n, k in zip(ins[1:], x.shape, slice_sizes):
            nm = code.fresh("o")
            code.emit(f"{nm} = {code.clamped(s, n - k)}")
            starts.append(nm)
        code.copy_block(out, ["0"] * x.ndim, ins[0], starts, slice_sizes)
        return [out]



class DynamicUpdateSlice(Primitive):
    """Overwrite a block of ``operand`` at traced start indices (clamped into bounds)."""
    weak_rule = "first"     # (the operand's weak type, as abstract_eval)
    accepts_extended = True
    name = "dynamic_update_slice"
    numba_vector_access = nx.write_element   # (tier 2's scalar loops)

    def hlo(self, b, x, update, *starts):
        return b.op("dynamic-update-slice", b.out_avals[0], (x, update) + starts)

    fresh_result = True       # (a copy of the operand, or the operand updated in place)
    updates_operand = True

    def impl(self, x, update, *starts):
        return self.impl_into(np.array(x, copy=True), update, *starts)

    def impl_into(self, x, update, *starts):
        """``impl`` writing into ``x``'s buffer (which it returns)."""
        idx = tuple(slice(b, b + k) for b, k in zip(_clamped(starts, x.shape, update.shape),
                                                    update.shape))
        x[idx] = update
        return x

    def sharding_rule(self, avals):
        """The result keeps the operand's layout; the update is laid out alike."""
        n = avals[0].ndim
        return [tuple(range(n)), tuple(range(n))] + [()] * (len(avals) - 2)

    def whole_dims(self, avals):
        """The dimensions the update does not cover whole are computed whole (then split
        again as the operand was)."""
        x, upd = avals[0], avals[1]
        ks = tuple(k for k in range(x.ndim) if upd.shape[k] != x.shape[k])
        return [ks, ks] + [()] * (len(avals) - 2)

    def explicit_sharding_rule(self, avals, dims):
        """Over Explicit axes the update must be sharded as the operand, whose sharding the
        result keeps."""
        from jaxlite._src.sharding.types import ShardingTypeError, with_axis_types
        if dims[0] != dims[1]:
            raise ShardingTypeError(
                f"dynamic_update_slice operand sharding must be equal to update sharding, got "
                f"operand sharding {with_axis_types(avals[0])} and update sharding "
                f"{with_axis_types(avals[1])}. Reshard the update to the operand's sharding "
                f"(jax.sharding.reshard).")
        return [dims[0]]

    def check_operands(self, vals, params):
        x, upd = vals[0], vals[1]
        if x.dtype == upd.dtype and len(x.shape) == len(upd.shape) == len(vals) - 2:
            for u, n in zip(upd.shape, x.shape):
                if u > n:
                    break
            else:
                return
        _check_update(x.shape, x.dtype, upd.shape, upd.dtype, len(vals) - 2)

    def abstract_eval(self, x, update, *starts):
        _check_update(x.shape, x.dtype, update.shape, update.dtype, len(starts))
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def jvp(self, primals, tangents):
        x, upd, *starts = primals
        tx, tu = tangents[:2]
        out = self.bind(x, upd, *starts)
        if u.is_zero(tx) and u.is_zero(tu):
            return out, u.Zero(u.aval(out))
        tx = u.zeros(tx.aval) if u.is_zero(tx) else tx
        tu = u.zeros(tu.aval) if u.is_zero(tu) else tu
        return out, self.bind(tx, tu, *starts)

    def batch(self, size, args, dims):
        if any(d is not None for d in dims[2:]):
            return self._batch_as_scatter(size, args, dims)
        b = batch_util
        x, upd = b.bdim_at_front(args[0], dims[0], size), b.bdim_at_front(args[1], dims[1],
                                                                            size)
        starts = list(args[2:])
        return self.bind(x, upd, u.const(starts[0], 0) if starts else np.int32(0),
                         *starts), 0

    def _batch_as_scatter(self, size, args, dims):
        """Batched start indices: JAX's rule, one scatter (CLIP mode clamps each window
        into bounds as the update would) with the batch paired up as operand/indices
        batching dimensions, the starts stacked into index vectors."""
        from jaxlite._src.prims.gather import GatherScatterMode
        from jaxlite._src.prims.scatter import ScatterDimensionNumbers, scatter_p
        b = batch_util
        idx = _batched_index(size, args[2:], dims[2:])
        x = b.bdim_at_front(args[0], dims[0], size)
        upd = b.bdim_at_front(args[1], dims[1], size)
        nd = tuple(range(1, len(args) - 1))
        dn = ScatterDimensionNumbers(update_window_dims=nd, inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=nd,
                                     operand_batching_dims=(0,),
                                     scatter_indices_batching_dims=(0,))
        return scatter_p.bind(x, idx, upd, dimension_numbers=dn, indices_are_sorted=True,
                              unique_indices=True, mode=GatherScatterMode.CLIP,
                              update_jaxpr=None, update_consts=()), 0

    def transpose(self, ct, x, upd, *starts):
        if u.is_zero(ct):
            return [None] * (2 + len(starts))
        ua = u.aval(upd)
        cx = self.bind(ct, u.zeros(ua), *starts) if u.is_undefined(x) else None
        cu = dynamic_slice_p.bind(ct, *starts, slice_sizes=tuple(ua.shape)) \
            if u.is_undefined(upd) else None
        return [cx, cu] + [None] * len(starts)

    def numba(self, code, eqn, ins):
        """Tier 2's loop code (``compiler/numba_bodies.py``): a copy of the operand (or the
        operand itself where the loop owns it and it dies here), the update written at the
        clamped starts."""
        x, upd = eqn.invars[0].aval, eqn.invars[1].aval
        out = code.fresh("a")
        code.emit(f"{out} = {ins[0]}" if code.may_update(eqn) else f"{out} = {ins[0]}.copy()")
        code.own(eqn.outvars[0])
        starts = []
        for s, n, k in zip(ins[2:], x.shape, upd.shape):
            nm = code.fresh("o")
            code.emit(f"{nm} = {code.clamped(s, n - k)}")
            starts.append(nm)
        code.copy_block(out, starts, ins[1], ["0"] * x.ndim, upd.shape)
        return [out]



dynamic_slice_p, dynamic_update_slice_p = DynamicSlice(), DynamicUpdateSlice()

# Taylor mode (jax.experimental.jet): linear in their inexact operands
for _p in (dynamic_slice_p, dynamic_update_slice_p):
    _p.jet = taylor.linear(_p)
