"""Scatter primitives with XLA's general dimension numbers (as ``jax.lax``): ``scatter``
and its ``-add/-sub/-mul/-min/-max`` combiners write update windows into an operand at
start indices; FILL_OR_DROP (their default mode) drops a window that is out of bounds,
the other modes clamp its start. The dimension-number types and modes are gather's
(``gather.py``): a scatter's windows are read back by a gather, and gather's transpose is
scatter-add."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.ir import Eqn, Jaxpr, Literal, Var
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.core.source_info import user_frame
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import bdim_at_front
from jaxlite._src.prims.gather import (GatherDimensionNumbers, GatherScatterMode,
                                       ScatterDimensionNumbers, _check_indices,
                                       _dims, _plus1, _sorted_unique,
                                       _window_starts, bind_gather)

__all__ = ["scatter_p", "scatter_add_p", "scatter_sub_p", "scatter_mul_p", "scatter_min_p",
           "scatter_max_p"]


def _inverse_gather(dn, operand_ndim, updates_shape):
    """(GatherDimensionNumbers, slice_sizes) of the gather reading back the windows a
    scatter with dimension numbers ``dn`` writes."""
    gdn = GatherDimensionNumbers(
        offset_dims=dn.update_window_dims, collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims)
    sizes, pos = [], 0
    for i in range(operand_ndim):
        if i in dn.inserted_window_dims or i in dn.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(updates_shape[dn.update_window_dims[pos]])
            pos += 1
    return gdn, tuple(sizes)


def _gather_back(x, indices, dn, updates_shape, mode=None, fill_value=None):
    """The update windows of ``x`` at ``indices`` (the gather inverse to the scatter)."""
    gdn, sizes = _inverse_gather(dn, u.aval(x).ndim, updates_shape)
    return bind_gather(x, indices, gdn, sizes, mode=mode, fill_value=fill_value)


def _bind_scatter(prim, operand, indices, updates, dn, indices_are_sorted, unique_indices,
                  mode):
    return bind_scatter(prim, operand, indices, updates, dn,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode)


class Scatter(Primitive):
    """XLA scatter: combine each update window into ``operand`` at its start index.
    ``combine`` is the NumPy ufunc (None: overwrite)."""
    weak_rule = "first"     # (the operand's weak type, as abstract_eval)
    accepts_extended = True
    name = "scatter"
    combine = None

    def sharding_rule(self, avals, dimension_numbers, **params):
        """The output is laid out as the operand; a dimension the indices address is whole,
        and the others keep their split together with the update windows covering them
        whole."""
        dn = dimension_numbers
        operand, indices, updates = avals
        window = [k for k in range(operand.ndim)
                  if k not in dn.inserted_window_dims and k not in dn.operand_batching_dims]
        up_map = [None] * updates.ndim
        for k, ud in zip(window, dn.update_window_dims):
            if k not in dn.scatter_dims_to_operand_dims and \
                    updates.shape[ud] == operand.shape[k]:
                up_map[ud] = k
        return [tuple(range(operand.ndim)), (None,) * indices.ndim, tuple(up_map)]

    def whole_dims(self, avals, dimension_numbers, **params):
        """The dimensions the indices address are computed whole; the result is then split
        as the operand was (as XLA keeps a scatter's operand layout)."""
        return [tuple(dimension_numbers.scatter_dims_to_operand_dims), (), ()]

    def explicit_sharding_rule(self, avals, dims, dimension_numbers, **params):
        """Over Explicit axes (JAX's rule, as gather's in reverse): the result keeps the
        operand's sharding; the dimensions updated in part (indexed or sub-window ones) and
        the indices' vector dimension must not be split, nor the updates' query
        dimensions (``.at[...].set(..., out_sharding=)`` resolves it)."""
        from jaxlite._src.sharding.types import ShardingTypeError
        dn = dimension_numbers
        op, idx, upd = avals
        od, idd, ud = dims
        skipped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
        window = [k for k in range(op.ndim) if k not in skipped]
        ok = not any(od[k] for k in dn.inserted_window_dims)
        ok = ok and (not idx.ndim or not idd[-1])
        out = list(od)
        for u, k in zip(dn.update_window_dims, window):
            if upd.shape[u] != op.shape[k] and (od[k] or ud[u]):
                ok = False
            elif not out[k]:
                out[k] = ud[u]
        batch_u = [u for u in range(upd.ndim) if u not in dn.update_window_dims]
        ok = ok and not any(ud[u] for u in batch_u[len(dn.operand_batching_dims):]) and \
            not any(idd[i] for i in range(idx.ndim - 1)
                    if i not in dn.scatter_indices_batching_dims)
        if not ok:
            raise ShardingTypeError(
                "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec "
                "for the scatter update as out sharding could not be resolved unambiguously (or "
                f"would require collectives on inputs). Got operand={op!r}, indices={idx!r}, "
                f"updates={upd!r}")
        return [tuple(out)]

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

    fresh_result = True       # (a copy of the operand, or the operand updated in place)
    updates_operand = True

    def impl(self, operand, indices, updates, dimension_numbers, indices_are_sorted,
             unique_indices, mode, update_jaxpr, update_consts, into=False):
        dn = dimension_numbers
        # XLA skips out-of-bounds update windows unless the indices are clamped (CLIP).
        mode = GatherScatterMode.from_any(mode)
        if mode is not GatherScatterMode.CLIP:
            mode = GatherScatterMode.FILL_OR_DROP
        if indices.ndim == 1 and not dn.operand_batching_dims:
            return self._one_window(operand, indices, updates, dn, mode, into)
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
        out = operand if into else np.array(operand, copy=True)
        if self.combine is None:
            out[tuple(idx)] = upd
        else:
            self.combine.at(out, tuple(idx), upd)
        return out

    def impl_into(self, operand, indices, updates, **params):
        """``impl`` writing into ``operand``'s buffer (which it returns)."""
        return self.impl(operand, indices, updates, into=True, **params)

    def _one_window(self, operand, indices, updates, dn, mode, into):
        """``impl`` for one index vector (``x.at[i].set(v)``, ``x.at[i, :2].add(u)``): one
        window, written through a basic index instead of index arrays. The update windows'
        dimensions are the operand's window dimensions in order (no scatter dimensions)."""
        nd = operand.ndim
        inserted = dn.inserted_window_dims
        sizes = [1] * nd
        for d, ud in zip([d for d in range(nd) if d not in inserted], dn.update_window_dims):
            sizes[d] = updates.shape[ud]
        start = [0] * nd
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            s, hi = int(indices[k]), operand.shape[d] - sizes[d]
            if mode is not GatherScatterMode.CLIP and not 0 <= s <= hi:
                # (FILL_OR_DROP: a window out of bounds is dropped)
                return operand if into else np.array(operand, copy=True)
            start[d] = min(max(s, 0), max(hi, 0))
        idx = tuple(start[d] if d in inserted else slice(start[d], start[d] + sizes[d])
                    for d in range(nd))
        out = operand if into else np.array(operand, copy=True)
        if self.combine is None:
            out[idx] = updates
        else:       # one window: each element combined once, as .at would
            out[idx] = self.combine(out[idx], updates)
        return out

    def pp_params(self, params):
        return [(k, params[k]) for k in sorted(params)]

    def batch(self, size, args, dims, dimension_numbers, indices_are_sorted, unique_indices,
              mode, update_jaxpr, update_consts):
        # operand and updates get the batch dim in front; batched indices pair it up as
        # operand/scatter-indices batching dims, as JAX does
        (operand, indices, updates), (od, idd, ud) = args, dims
        dn = dimension_numbers
        operand = bdim_at_front(operand, od, size)
        updates = bdim_at_front(updates, ud, size)
        if idd is None:
            new = ScatterDimensionNumbers(
                update_window_dims=(0,) + _plus1(dn.update_window_dims),
                inserted_window_dims=_plus1(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_plus1(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=_plus1(dn.operand_batching_dims),
                scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
        else:
            indices = bdim_at_front(indices, idd, size)
            new = ScatterDimensionNumbers(
                update_window_dims=_plus1(dn.update_window_dims),
                inserted_window_dims=_plus1(dn.inserted_window_dims),
                scatter_dims_to_operand_dims=_plus1(dn.scatter_dims_to_operand_dims),
                operand_batching_dims=(0,) + _plus1(dn.operand_batching_dims),
                scatter_indices_batching_dims=(0,) + _plus1(dn.scatter_indices_batching_dims))
        return self.bind(operand, indices, updates, dimension_numbers=new,
                         indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                         mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts), 0

    def jvp(self, primals, tangents, dimension_numbers, indices_are_sorted, unique_indices,
            mode, update_jaxpr, update_consts):
        # JAX's rule: with unique indices scatter the tangents alike; otherwise tag each
        # update with an id, scatter the ids to see which update won each position, and
        # scatter-add the winners' primals and tangents (masking the overwritten operand).
        operand, indices, updates = primals
        g_op, _, g_up = tangents
        dn = dimension_numbers
        params = dict(dimension_numbers=dn, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=mode, update_jaxpr=update_jaxpr,
                      update_consts=update_consts)
        if u.is_zero(g_op) and u.is_zero(g_up):
            out = self.bind(operand, indices, updates, **params)
            return out, u.Zero.like(out)
        g_op, g_up = u.instantiate(g_op), u.instantiate(g_up)
        if unique_indices:
            return (self.bind(operand, indices, updates, **params),
                    self.bind(g_op, indices, g_up, **params))
        up_shape = u.aval(updates).shape
        ids_shape = list(up_shape)
        for d in dn.update_window_dims:
            ids_shape[d] = 1
        num_ids = int(np.prod(ids_shape, dtype=np.int64))
        id_dt = np.dtype(np.uint64 if num_ids > np.iinfo(np.uint32).max else np.uint32)
        ids = u.add(u.reshape(u.iota(id_dt, num_ids), tuple(ids_shape)),
                    u.full(up_shape, 1, id_dt))
        scattered = _bind_scatter(self, u.full(u.aval(operand).shape, 0, id_dt), indices,
                                  ids, dn, indices_are_sorted, unique_indices, mode)
        gathered = _gather_back(scattered, indices, dn, up_shape)
        keep_op = u.eq(scattered, u.full(u.aval(scattered).shape, 0, id_dt))
        keep_up = u.eq(ids, gathered)

        def masked(keep, x):
            return u.select(keep, x, u.zeros(u.aval(x)))
        val = _bind_scatter(scatter_add_p, masked(keep_op, operand), indices,
                            masked(keep_up, updates), dn, indices_are_sorted,
                            unique_indices, mode)
        tan = _bind_scatter(scatter_add_p, masked(keep_op, g_op), indices,
                            masked(keep_up, g_up), dn, indices_are_sorted, unique_indices,
                            mode)
        return val, tan

    def transpose(self, ct, operand, indices, updates, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr, update_consts):
        if not unique_indices:
            raise NotImplementedError("scatter transpose is only implemented where "
                                      "unique_indices=True")
        if u.is_zero(ct):
            return [None, None, None]
        up_shape = u.aval(updates).shape
        op_ct = up_ct = None
        if u.is_undefined(operand):
            # the overwritten windows get no cotangent
            op_ct = _bind_scatter(self, ct, indices,
                                  u.zeros(ShapedArray(up_shape, u.aval(ct).dtype)),
                                  dimension_numbers, indices_are_sorted, True, mode)
        if u.is_undefined(updates):
            up_ct = _gather_back(ct, indices, dimension_numbers, up_shape, mode=mode,
                                 fill_value=0)
        return [op_ct, None, up_ct]

    def masked_update(self, eqn, pred, pred_eqn, when):
        """The equations of ``select_n(pred, x, this update of x)`` (the update applying
        where ``pred == when``) as one scatter whose index vectors point out of bounds
        where the update does not apply, so that it drops them (XLA's simplifier makes the
        same rewrite; the update of a carried buffer then stays in place). ``pred`` must
        vary only along the operand's batching dimensions: a scalar, or a
        ``broadcast_in_dim`` (``pred_eqn``) of such a value. Returns None otherwise."""
        from jaxlite._src.prims.conversion import select_n_p
        from jaxlite._src.prims.shape import broadcast_in_dim_p, reshape_p
        dn, params = eqn.params["dimension_numbers"], eqn.params
        operand, indices = eqn.invars[0].aval, eqn.invars[1].aval
        mode = GatherScatterMode.from_any(params["mode"])
        if self.combine is not None or params["update_jaxpr"] is not None or \
                mode not in (GatherScatterMode.FILL_OR_DROP, GatherScatterMode.CLIP) or \
                indices.dtype.kind not in "iu" or not indices.shape:
            return None
        ishape = indices.shape
        new = []
        index = eqn.invars[1]
        if mode is GatherScatterMode.CLIP:
            # clamped here as CLIP clamps each window into bounds, so dropping out-of-
            # bounds indices then leaves exactly the masked ones out
            new += self._clamp_eqns(eqn)
            index = new[-1].outvars[0]
            eqn = eqn.replace(params=dict(params, mode=GatherScatterMode.FILL_OR_DROP))
        if pred.aval.shape:
            if pred_eqn is None or pred_eqn.primitive is not broadcast_in_dim_p:
                return None
            b = pred_eqn.invars[0]
            keep, dims = [], []
            for k, d in enumerate(pred_eqn.params["broadcast_dimensions"]):
                if b.aval.shape[k] == 1:
                    continue
                if d not in dn.operand_batching_dims:
                    return None
                keep.append(b.aval.shape[k])
                dims.append(dn.scatter_indices_batching_dims[dn.operand_batching_dims.index(d)])
            if dims != sorted(dims):
                return None
            flat = Var(ShapedArray(tuple(keep), np.dtype(np.bool_)))
            new.append(Eqn(reshape_p, [b], {"new_sizes": tuple(keep), "dimensions": None,
                                                "sharding": None}, [flat], eqn.source_info))
            pi = Var(ShapedArray(ishape, np.dtype(np.bool_)))
            new.append(Eqn(broadcast_in_dim_p, [flat], {
                "shape": ishape, "broadcast_dimensions": tuple(dims), "sharding": None},
                [pi], eqn.source_info))
        else:
            pi = pred
        oob = Var(ShapedArray(ishape, indices.dtype))
        far = Literal(np.asarray(max(operand.shape), indices.dtype),
                      ShapedArray((), indices.dtype))
        new.append(Eqn(broadcast_in_dim_p, [far], {"shape": ishape, "broadcast_dimensions": (),
                                                   "sharding": None}, [oob], eqn.source_info))
        idx = Var(ShapedArray(ishape, indices.dtype))
        cases = [oob, index] if when else [index, oob]
        new.append(Eqn(select_n_p, [pi] + cases, {}, [idx], eqn.source_info))
        return new + [eqn.replace(invars=[eqn.invars[0], idx, eqn.invars[2]])]

    @staticmethod
    def _clamp_eqns(eqn):
        """Equations clamping a scatter's index vectors so that each window lies in bounds
        (what CLIP mode does), their result the last equation's output."""
        from jaxlite._src.prims.conversion import clamp_p
        from jaxlite._src.prims.shape import broadcast_in_dim_p
        dn = eqn.params["dimension_numbers"]
        operand, indices, updates = (v.aval for v in eqn.invars)
        whole = [k for k in range(operand.ndim) if k not in dn.inserted_window_dims and
                 k not in dn.operand_batching_dims]
        window = [1] * operand.ndim
        for k, w in zip(whole, dn.update_window_dims):
            window[k] = updates.shape[w]
        hi = np.asarray([operand.shape[k] - window[k] for k in dn.scatter_dims_to_operand_dims],
                        indices.dtype)
        ishape, dt = indices.shape, indices.dtype
        his = Var(ShapedArray(ishape, dt))
        out = Var(ShapedArray(ishape, dt))
        zero = Literal(np.asarray(0, dt), ShapedArray((), dt))
        return [Eqn(broadcast_in_dim_p, [Literal(hi, ShapedArray(hi.shape, dt))],
                    {"shape": ishape, "broadcast_dimensions": (len(ishape) - 1,),
                     "sharding": None}, [his], eqn.source_info),
                Eqn(clamp_p, [zero, eqn.invars[1], his], {}, [out], eqn.source_info)]

    def numba(self, code, eqn, ins, dimension_numbers, indices_are_sorted, unique_indices,
              mode, update_jaxpr, update_consts):
        """Tier 2's loop code (``compiler/numba_bodies.py``): a copy of the operand (or the
        operand itself where the loop owns it and it dies here) with each update window
        written (or added) at the start its index vector gives (batching dimensions: at
        the window's own batch position), dropped when out of bounds (clamped with CLIP),
        in the order of the indices, as ``impl``."""
        dn = dimension_numbers
        operand, indices, updates = (a.aval for a in eqn.invars)
        if self.combine not in (None, np.add) or \
                (self.combine is not None and (operand.dtype == np.bool_ or
                                               not unique_indices)):
            return None
        nd, nb = operand.ndim, indices.ndim - 1
        window_dims = [d for d in range(nd) if d not in dn.inserted_window_dims and
                       d not in dn.operand_batching_dims]
        sizes = [1] * nd
        for d, ud in zip(window_dims, dn.update_window_dims):
            sizes[d] = updates.shape[ud]
        clip = GatherScatterMode.from_any(mode) is GatherScatterMode.CLIP
        out = code.fresh("a")
        code.emit(f"{out} = {ins[0]}" if code.may_update(eqn) else f"{out} = {ins[0]}.copy()")
        code.own(eqn.outvars[0])
        bidx = code.loop_nest(indices.shape[:-1])        # (each index vector in order)
        ivec = f"{ins[1]}[{', '.join(bidx + [''])}" if nb else f"{ins[1]}["
        starts, checks = ["0"] * nd, []
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            st, hi = code.fresh("o"), operand.shape[d] - sizes[d]
            code.emit(f"{st} = np.int64({ivec}{k}])")
            if clip:
                code.emit(f"{st} = {code.clamped(st, hi)}")
            else:
                checks.append(f"0 <= {st} <= {hi}")
            starts[d] = st
        for od, idd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            starts[od] = bidx[idd]
        if checks:
            code.emit(f"if {' and '.join(checks)}:")
            code.push()
        widx = code.loop_nest([sizes[d] for d in window_dims])
        at = dict(zip(window_dims, widx))
        dst = ", ".join(f"{starts[d]} + {at[d]}" if d in at else starts[d] for d in range(nd))
        wpos = dict(zip(dn.update_window_dims, widx))
        rest = iter(bidx)
        src = ", ".join(wpos[i] if i in wpos else next(rest) for i in range(updates.ndim))
        val = f"{ins[2]}[{src}]" if updates.ndim else code.to_scalar(ins[2], updates)
        if self.combine is not None:
            val = f"{code.dt(operand.dtype)}({out}[{dst}] + {val})"
        code.emit(f"{out}[{dst}] = {val}")
        code.close_nest(widx)
        if checks:
            code.pop()
        code.close_nest(bidx)
        return [out]

    def numba_vector_access(self, eqn, v):
        """Tier 2's scalar loops (``prims/numba_exprs.py``): a scatter (or scatter-add, not
        of booleans) of one scalar at one index into a vector, in place: the index clamped
        (``CLIP``) or an out-of-bounds update dropped (``FILL_OR_DROP``)."""
        if not v.in_place or self.combine not in (None, np.add):
            return None
        dn, dt = eqn.params["dimension_numbers"], eqn.invars[0].aval.dtype
        idx, upd = v.scalar(eqn.invars[1]), v.scalar(eqn.invars[2])
        if dn.update_window_dims or dn.inserted_window_dims != (0,) or \
                dn.scatter_dims_to_operand_dims != (0,) or dn.operand_batching_dims or \
                idx is None or upd is None or eqn.invars[1].aval.shape != (1,) or \
                eqn.invars[2].aval.shape != () or (self.combine is not None and dt == np.bool_):
            return None
        val = upd if self.combine is None else f"np.{dt.name}({v.arr}[{v.nm}] + {upd})"
        v.updated()
        nm, n, pad = v.nm, v.n, v.indent
        if GatherScatterMode.from_any(eqn.params["mode"]) is GatherScatterMode.CLIP:
            return [f"{pad}{nm} = min(max({idx}, 0), {n - 1})", f"{pad}{v.arr}[{nm}] = {val}"]
        return [f"{pad}{nm} = {idx}",
                f"{pad}if 0 <= {nm} < {n}:",     # (FILL_OR_DROP: out of bounds is dropped)
                f"{pad}    {v.arr}[{nm}] = {val}"]


class ScatterAdd(Scatter):
    name, combine = "scatter-add", np.add

    def jvp(self, primals, tangents, **params):
        operand, indices, updates = primals
        g_op, _, g_up = tangents
        out = self.bind(operand, indices, updates, **params)
        if u.is_zero(g_op) and u.is_zero(g_up):
            return out, u.Zero.like(out)
        return out, self.bind(u.instantiate(g_op), indices, u.instantiate(g_up), **params)

    def transpose(self, ct, operand, indices, updates, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr, update_consts):
        if u.is_zero(ct):
            return [None, None, None]
        op_ct = ct if u.is_undefined(operand) else None
        up_ct = None
        if u.is_undefined(updates):
            up_ct = _gather_back(ct, indices, dimension_numbers, u.aval(updates).shape,
                                 mode=mode, fill_value=0)
            if self.combine is np.subtract:
                up_ct = u.neg(up_ct)
        return [op_ct, None, up_ct]


class ScatterSub(ScatterAdd):
    name, combine = "scatter-sub", np.subtract


class ScatterMul(Scatter):
    name, combine = "scatter-mul", np.multiply

    def jvp(self, primals, tangents, dimension_numbers, indices_are_sorted, unique_indices,
            mode, update_jaxpr, update_consts):
        # linear in the operand; the updates' part needs unique indices (as JAX)
        operand, indices, updates = primals
        g_op, _, g_up = tangents
        params = dict(dimension_numbers=dimension_numbers,
                      indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                      mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts)
        out = self.bind(operand, indices, updates, **params)
        tan = u.Zero.like(out)
        if not u.is_zero(g_op):
            tan = self.bind(g_op, indices, updates, **params)
        if not u.is_zero(g_up):
            if not unique_indices:
                raise NotImplementedError(
                    "scatter_mul gradients are only implemented if `unique_indices=True`")
            t = u.mul(operand, _bind_scatter(scatter_add_p, u.zeros(u.aval(operand)),
                                             indices, g_up, dimension_numbers,
                                             indices_are_sorted, unique_indices, mode))
            tan = t if u.is_zero(tan) else u.add_any(tan, t)
        return out, tan

    def transpose(self, ct, operand, indices, updates, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr, update_consts):
        if u.is_zero(ct):
            return [None, None, None]
        op_ct = up_ct = None
        if u.is_undefined(operand):
            op_ct = _bind_scatter(self, ct, indices, updates, dimension_numbers,
                                  indices_are_sorted, unique_indices, mode)
        if u.is_undefined(updates):
            if not unique_indices:
                raise NotImplementedError(
                    "scatter_mul gradients are only implemented if `unique_indices=True`")
            up_ct = _gather_back(u.mul(ct, operand), indices, dimension_numbers,
                                 u.aval(updates).shape, mode=mode, fill_value=0)
        return [op_ct, None, up_ct]


class ScatterMin(Scatter):
    name, combine = "scatter-min", np.minimum

    def jvp(self, primals, tangents, dimension_numbers, indices_are_sorted, unique_indices,
            mode, update_jaxpr, update_consts):
        # JAX's rule: tangents of the values that survive, averaged over ties
        operand, indices, updates = primals
        g_op, _, g_up = tangents
        dn = dimension_numbers
        out = self.bind(operand, indices, updates, dimension_numbers=dn,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        mode=mode, update_jaxpr=update_jaxpr, update_consts=update_consts)
        if u.is_zero(g_op) and u.is_zero(g_up):
            return out, u.Zero.like(out)
        g_op, g_up = u.instantiate(g_op), u.instantiate(g_up)
        up_shape = u.aval(updates).shape
        initial = _gather_back(operand, indices, dn, up_shape)
        target = _gather_back(out, indices, dn, up_shape)
        won = u.eq(updates, target)
        kept = u.eq(initial, target)
        zeros_up, ones_up = u.zeros(u.aval(updates)), u.ones(updates)
        zeros_op = u.zeros(u.aval(operand))

        def count(x):
            return _gather_back(_bind_scatter(scatter_add_p, zeros_op, indices, x, dn, False,
                                              False, None), indices, dn, up_shape)
        num_updates = count(u.select(won, ones_up, zeros_up))
        num_refs = count(ones_up)
        one = u.const(updates, 1)
        inv1 = u.div(one, u.add(num_updates, one))
        up_norm = u.select(kept, inv1, u.div(one, num_updates))
        up_coef = u.select(won, up_norm, zeros_up)
        op_norm = u.select(kept, inv1, zeros_up)
        op_coef = u.div(u.add(u.const(updates, -1), op_norm), num_refs)
        tgt_t = _gather_back(g_op, indices, dn, up_shape)
        tan_up = u.add(u.mul(tgt_t, op_coef), u.mul(g_up, up_coef))
        tan = _bind_scatter(scatter_add_p, g_op, indices, tan_up, dn, indices_are_sorted,
                            unique_indices, mode)
        return out, tan


class ScatterMax(ScatterMin):
    name, combine = "scatter-max", np.maximum


ScatterMin.transpose = None  # not linear


scatter_p, scatter_add_p, scatter_sub_p = Scatter(), ScatterAdd(), ScatterSub()
scatter_mul_p, scatter_min_p, scatter_max_p = ScatterMul(), ScatterMin(), ScatterMax()


# the elementwise primitive each scatter combines with (plain scatter overwrites)
_COMBINERS = {"scatter-add": "add_p", "scatter-sub": "sub_p", "scatter-mul": "mul_p",
              "scatter-min": "min_p", "scatter-max": "max_p"}


def update_jaxpr(prim, dtype):
    """The scalar combiner of the scatter primitive ``prim`` as a one-equation jaxpr of two
    ``dtype`` scalars (JAX's ``update_jaxpr`` parameter), or None for plain ``scatter``."""
    name = _COMBINERS.get(prim.name)
    if name is None:
        return None
    combine = getattr(u.ew(), name)
    aval = ShapedArray((), dtype)
    a, b = Var(aval), Var(aval)
    out = Var(combine.abstract_eval(aval, aval))
    return Jaxpr([], [a, b], [Eqn(combine, [a, b], {}, [out], user_frame())], [out])


def bind_scatter(prim, operand, scatter_indices, updates, dimension_numbers, *,
                 indices_are_sorted=False, unique_indices=False, mode=None):
    """Bind the scatter primitive ``prim`` as lax does (``mode`` None is FILL_OR_DROP), with
    its ``update_jaxpr``."""
    if not isinstance(dimension_numbers, ScatterDimensionNumbers):
        raise TypeError("scatter dimension_numbers must be a ScatterDimensionNumbers; got "
                        f"{type(dimension_numbers).__name__}.")
    return prim.bind(operand, scatter_indices, updates,
                     dimension_numbers=ScatterDimensionNumbers(
                         *(_dims(t) for t in dimension_numbers)),
                     indices_are_sorted=bool(indices_are_sorted),
                     unique_indices=bool(unique_indices),
                     mode=GatherScatterMode.from_any(mode),
                     update_jaxpr=update_jaxpr(prim, operand.dtype), update_consts=())
