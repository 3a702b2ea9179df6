"""``shard_map``: one per-device program, run on every device of a mesh.

The primitive carries the per-device jaxpr, the mesh and a PartitionSpec per input and
output. Executing it splits each input into its per-device blocks (views, or the shards the
array already has), runs the compiled body on every device's executor thread with an SPMD
context for the collectives, and returns arrays made of the per-device output blocks (no
copies). pmap is built on it, as in JAX 0.10.
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive, extended_eager, extended_operands
from jaxlite._src.runtime import collectives as _coll
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.runtime import sharded_array as _sa
from jaxlite._src.prims.call import jit_p
from jaxlite._src.prims.collectives import axis_env
from jaxlite._src.prims.shard_map_batched import batched_runner
from jaxlite._src.sharding.partition_spec import PartitionSpec, entry_axes
from jaxlite._src.sharding.shardings import NamedSharding

__all__ = ["shard_map_p", "global_aval", "local_aval", "run_shard_map", "run_shard_map_local",
           "plan_for", "run_plan"]


def _factors(mesh, spec, ndim):
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    entries = list(spec) + [None] * (ndim - len(spec))
    return [math.prod(sizes[a] for a in entry_axes(e)) for e in entries]


def global_aval(local, mesh, spec):
    """The global aval of a per-device block ``local`` laid out by ``spec``."""
    f = _factors(mesh, spec, local.ndim)
    return ShapedArray(tuple(s * k for s, k in zip(local.shape, f)), local.dtype,
                       local.weak_type)


def local_aval(glob, mesh, spec, what="shard_map argument"):
    """The per-device block aval of ``glob`` laid out by ``spec`` (JAX's error when the spec
    does not evenly divide the shape)."""
    if len(spec) > glob.ndim:
        raise ValueError(f"{what} of shape {glob.str_short(False)} has rank {glob.ndim} but its "
                         f"PartitionSpec {spec!r} names {len(spec)} dimensions.")
    f = _factors(mesh, spec, glob.ndim)
    for k, (s, p) in enumerate(zip(glob.shape, f)):
        if s % p:
            raise ValueError(
                f"{what} of shape {glob.str_short(False)} cannot be split by "
                f"{spec!r}: its dimension {k} of size {s} is not divisible by the "
                f"{p} devices of mesh axes {entry_axes(spec[k])}.")
    return ShapedArray(tuple(s // p for s, p in zip(glob.shape, f)), glob.dtype,
                       glob.weak_type)


def _blocks(x, sharding, shape):
    """Per-device blocks (mesh order) of operand ``x`` under ``sharding``: the shards it
    already has when its layout is the same, else views of its value."""
    if isinstance(x, _sa.ShardedArray) and (x._sharding is sharding or x._sharding == sharding
                                            or x._sharding.is_equivalent_to(sharding,
                                                                            len(shape))):
        by_dev = x._shard_buffers()
        return [by_dev.get(d) for d in sharding._device_assignment]
    if isinstance(x, _sa.ShardedArray) and not x.is_fully_addressable:
        try:
            x._value
        except RuntimeError:
            raise ValueError(
                f"An array spanning processes with sharding {x._sharding} is used where "
                f"sharding {sharding} is needed: jaxlite does not move shards between "
                f"processes implicitly. Create the array with the sharding the computation "
                f"uses (jax.make_array_from_process_local_data / device_put with that "
                f"sharding), or gather it first (multihost_utils.process_allgather).") \
                from None
    if not isinstance(x, ArrayImpl) and _is_key_array(x) and sharding.is_fully_replicated:
        # a key array every device reads: compiled bodies take its data
        data = x.dtype.to_physical(x)
        return [getattr(data, "_value", data)] * len(sharding._device_assignment)
    v = x._value if isinstance(x, ArrayImpl) else np.asarray(x)
    idx = sharding._indices_and_replicas(shape)
    return [v[idx[d][0]] for d in sharding._device_assignment]


def _is_key_array(x):
    from jaxlite._src.core import dtypes
    dt = getattr(x, "dtype", None)
    return dt is not None and dtypes.is_extended(dt)


class _Plan:
    """What running one shard_map needs, computed once per (body, mesh, specs)."""
    __slots__ = ("devs", "in_shardings", "out_shardings", "body", "in_avals", "out_avals",
                 "batched", "jaxpr", "mesh", "in_specs", "out_specs")

    def __init__(self, jaxpr, mesh, in_specs, out_specs):
        self.jaxpr, self.mesh, self.in_specs, self.out_specs = jaxpr, mesh, in_specs, out_specs
        self.devs = list(mesh.devices.flat)
        self.in_shardings = [NamedSharding(mesh, s) for s in in_specs]
        self.out_shardings = [NamedSharding(mesh, s) for s in out_specs]
        self.body = jit_p.compiled(jaxpr, "shard_map_body")
        self.in_avals = [global_aval(a, mesh, s) for a, s in zip(jaxpr.in_avals, in_specs)]
        self.out_avals = [global_aval(a, mesh, s) for a, s in zip(jaxpr.out_avals, out_specs)]
        self.batched = None          # shard_map_batched's runner once built (False: none)


_plans = weakref.WeakKeyDictionary()


def _plan_for(jaxpr, mesh, in_specs, out_specs):
    per = _plans.get(jaxpr)
    if per is None:
        per = _plans[jaxpr] = {}
    key = (mesh, in_specs, out_specs)
    plan = per.get(key)
    if plan is None:
        plan = per[key] = _Plan(jaxpr, mesh, in_specs, out_specs)
    return plan


def run_shard_map(args, jaxpr, mesh, in_specs, out_specs):
    """Run the per-device ``jaxpr`` on every device of ``mesh``; returns the output arrays
    (ArrayImpls over the per-device blocks)."""
    return run_plan(_plan_for(jaxpr, mesh, tuple(in_specs), tuple(out_specs)), args)


def plan_for(jaxpr, mesh, in_specs, out_specs):
    """The cached plan of one shard_map (for callers that run it many times: ``run_plan``)."""
    return _plan_for(jaxpr, mesh, tuple(in_specs), tuple(out_specs))


def _canonical(x):
    """A NumPy argument in the dtype JAX computes it in (float64 -> float32 unless x64)."""
    if isinstance(x, (np.ndarray, np.generic)):
        dt = dtypes.canonicalize_dtype(x.dtype)
        if dt != x.dtype:
            return np.asarray(x, dt)
    return x


def run_plan(plan, args):
    """``run_shard_map`` with the plan already looked up."""
    args = [_canonical(a) for a in args]
    if _coll.current() is None:
        batched = batched_runner(plan)
        if batched is not None:
            return [_sa.from_global(v, g.weak_type, sh)
                    for v, g, sh in zip(batched(args), plan.out_avals, plan.out_shardings)]
    devs = plan.devs
    per_arg = [_blocks(a, s, a.shape if isinstance(a, ArrayImpl) else np.shape(a))
               for a, s in zip(args, plan.in_shardings)]
    body = plan.body
    per_dev = [([blocks[i] for blocks in per_arg],) for i in range(len(devs))]

    def run(blocks):
        return body(*blocks)

    outs = _coll.run_spmd(devs, plan.mesh.axis_sizes, plan.mesh.axis_names, run, per_dev)
    return [_sa.from_buffers(g, sh, [None if o is None else np.asarray(o[k]) for o in outs])
            for k, (g, sh) in enumerate(zip(plan.out_avals, plan.out_shardings))]


def run_shard_map_local(args, jaxpr, mesh, local_devs, in_specs, out_specs):
    """``run_shard_map`` over a one-axis ``mesh`` spanning processes, with process-local
    arguments and results (pmap under jax.distributed): each process passes the blocks of
    its own devices ``local_devs`` stacked along the mapped axis and gets its devices'
    results back the same way."""
    per = _plans.get(jaxpr)
    if per is None:
        per = _plans[jaxpr] = {}
    key = ("local", mesh, tuple(local_devs), tuple(in_specs), tuple(out_specs))
    plan = per.get(key)
    if plan is None:
        plan = per[key] = _local_plan(jaxpr, mesh, local_devs, in_specs, out_specs)
    devs, slots, in_sh, body, outs_meta = plan
    per_arg = [_blocks(a, sh, a.shape if isinstance(a, ArrayImpl) else np.shape(a))
               for a, sh in zip(args, in_sh)]
    per_dev = [None] * len(devs)
    for j, w in enumerate(slots):
        per_dev[w] = ([blocks[j] for blocks in per_arg],)

    def run(blocks):
        return body(*blocks)
    outs = _coll.run_spmd(devs, mesh.axis_sizes, mesh.axis_names, run, per_dev)
    return [_sa.from_buffers(aval, sh, [np.asarray(outs[w][k]) for w in slots])
            for k, (aval, sh) in enumerate(outs_meta)]


def _local_plan(jaxpr, mesh, local_devs, in_specs, out_specs):
    from jaxlite._src.sharding.mesh import Mesh
    local_mesh = Mesh(np.asarray(local_devs, dtype=object), mesh.axis_names)
    devs = list(mesh.devices.flat)
    where = {d: i for i, d in enumerate(devs)}
    in_sh = [NamedSharding(local_mesh, s) for s in in_specs]
    outs_meta = [(global_aval(a, local_mesh, s), NamedSharding(local_mesh, s))
                 for a, s in zip(jaxpr.out_avals, out_specs)]
    return (devs, [where[d] for d in local_devs], in_sh,
            jit_p.compiled(jaxpr, "shard_map_body"), outs_meta)


def _nested_plan(jaxpr, mesh, in_specs, out_specs):
    """The compiled program one device runs for a shard_map nested in another's body (its
    operands are the device's values of the enclosing body, whole over this shard_map's
    axes): take the device's block of each operand, run the body, and all-gather each
    result over the axes its out_spec splits it on."""
    per = _plans.get(jaxpr)
    if per is None:
        per = _plans[jaxpr] = {}
    key = ("nested", mesh, in_specs, out_specs)
    fn = per.get(key)
    if fn is None:
        from jaxlite._src.interpreters.staging import trace_to_jaxpr
        sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))

        def expanded(*xs):
            blocks = [_own_block(x, s, sizes) for x, s in zip(xs, in_specs)]
            outs = ad_eval(jaxpr, blocks)
            return [_gather_blocks(o, s, sizes) for o, s in zip(outs, out_specs)]
        with axis_env(mesh):
            j, _, consts = trace_to_jaxpr(expanded, [global_aval(a, mesh, s) for a, s in
                                                     zip(jaxpr.in_avals, in_specs)])
        from jaxlite._src.core.ir import ClosedJaxpr
        fn = per[key] = jit_p.compiled(ClosedJaxpr(j, consts), "shard_map_nested")
    return fn


def _own_block(x, spec, sizes):
    """This device's block of ``x`` split as ``spec`` says (a slice at its axis index)."""
    from jaxlite._src.prims.collectives import axis_index_p
    from jaxlite._src.prims.elementwise import mul_p
    from jaxlite._src.prims.dynamic_slice import dynamic_slice_p
    shape = list(x.aval.shape)
    for k, e in enumerate(spec):
        axes = entry_axes(e)
        if not axes:
            continue
        block = shape[k] // math.prod(sizes[a] for a in axes)
        idx = axis_index_p.bind(axis_name=axes if len(axes) > 1 else axes[0])
        start = mul_p.bind(idx, np.int32(block))
        starts = [start if j == k else np.int32(0) for j in range(len(shape))]
        x = dynamic_slice_p.bind(x, *starts, slice_sizes=tuple(
            block if j == k else n for j, n in enumerate(shape)))
        shape[k] = block
    return x


def _gather_blocks(y, spec, sizes):
    """The whole of a result split over the devices as ``spec`` says (an all-gather over
    the axes of each split dimension)."""
    from jaxlite._src.prims.collectives import all_gather_p
    for k, e in enumerate(spec):
        axes = entry_axes(e)
        if axes:
            y = all_gather_p.bind(y, axis_name=axes, axis_index_groups=None,
                                  all_gather_dimension=k,
                                  axis_size=math.prod(sizes[a] for a in axes), tiled=True)
    return y


def _nested_here(mesh, manual):
    """Whether this call runs on a device thread of ``mesh`` whose program already binds
    the axes ``manual`` (a shard_map nested in another's body)."""
    c = _coll.current()
    return c is not None and c.has_axes(tuple(manual)) and \
        tuple(c.axis_names) == tuple(mesh.axis_names)


class ShardMap(Primitive):
    """``shard_map[jaxpr, mesh, in_specs, out_specs, check_vma, newly_manual_axes]``.

    ``newly_manual_axes`` may be a subset of the mesh's axes (partial manual): the body sees
    blocks split over those only, and every device of the other axes holds the same block
    (under jit the partitioner goes on splitting the body's values over the other axes)."""
    name = "shard_map"
    multiple_results = True

    def runs_per_device_for(self, params):
        """A shard_map over a subset of its mesh's axes may be nested in another's body
        over the same mesh: it runs on each device of that body (not batched)."""
        manual = params.get("newly_manual_axes")
        return bool(manual) and frozenset(manual) != frozenset(params["mesh"].axis_names)

    def vma_rule(self, avals, jaxpr, newly_manual_axes=frozenset(), **params):
        """The results vary over what the body's do, except this shard_map's own axes
        (inside an enclosing shard_map they vary over its axes as its values do)."""
        return [set(a.vma) - set(newly_manual_axes) for a in jaxpr.out_avals]

    def abstract_eval(self, *avals, jaxpr, mesh, in_specs, out_specs, **_):
        return [global_aval(a, mesh, s) for a, s in zip(jaxpr.out_avals, out_specs)]

    def eager(self, args, params):
        if extended_operands(args):   # key arrays: on their data
            return extended_eager[0](self, args, params)
        manual = params.get("newly_manual_axes") or params["mesh"].axis_names
        if _nested_here(params["mesh"], manual):
            return list(self.impl(*args, **params))
        if frozenset(manual) != frozenset(params["mesh"].axis_names):
            return self._run_partitioned(args, params)
        return run_shard_map(list(args), params["jaxpr"], params["mesh"], params["in_specs"],
                             params["out_specs"])

    def impl(self, *args, jaxpr, mesh, in_specs, out_specs, newly_manual_axes=None, **_):
        if _nested_here(mesh, newly_manual_axes or mesh.axis_names):
            fn = _nested_plan(jaxpr, mesh, tuple(in_specs), tuple(out_specs))
            return [np.asarray(o) for o in fn(*args)]
        return [np.asarray(o) for o in run_shard_map(list(args), jaxpr, mesh, in_specs,
                                                     out_specs)]

    def _run_partitioned(self, args, params):
        """Run a partial-manual shard_map as a one-equation sharded jit would (the
        partitioner splits the body's values over the other mesh axes as the arguments'
        layouts ask), so its results are laid out as under jit, as in JAX."""
        from jaxlite._src.compiler.partition import partition
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.interpreters.staging import trace_to_jaxpr
        shardings = tuple(
            a._sharding if isinstance(a, ArrayImpl) and a._sharding is not None and
            a._sharding.num_devices > 1 else None for a in args)
        jaxpr, mesh = params["jaxpr"], params["mesh"]
        per = _plans.get(jaxpr)
        if per is None:
            per = _plans[jaxpr] = {}
        key = ("partial", mesh, params["in_specs"], params["out_specs"], shardings)
        part = per.get(key)
        if part is None:
            avals = [global_aval(a, mesh, s) for a, s in zip(jaxpr.in_avals, params["in_specs"])]
            j, _, consts = trace_to_jaxpr(lambda *xs: self.bind(*xs, **params), avals)
            part = per[key] = partition(ClosedJaxpr(j, consts), shardings) or False
        if part is False:       # the arguments' layouts name other meshes: blocks as specs say
            return run_shard_map(list(args), jaxpr, mesh, params["in_specs"],
                                 params["out_specs"])
        return run_shard_map(list(args), part.body, part.mesh, part.in_specs, part.out_specs)

    def out_weak(self, avals, params):
        return False

    def explicit_sharding_rule(self, avals, dims, mesh, out_specs, jaxpr, **params):
        """Over a mesh with Explicit axes the results are typed as ``out_specs`` lay them
        out (their Explicit axes)."""
        if not mesh.explicit_axes:
            return [None] * len(out_specs)
        from jaxlite._src.sharding.types import dims_of, is_typed, sharding_dims
        outs = []
        for s, a in zip(out_specs, jaxpr.out_avals):
            d = sharding_dims(NamedSharding(mesh, s), a.ndim)
            if is_typed(a):   # (over a subset of the axes: the others' splits, within)
                d = tuple(tuple(x) + tuple(ax for ax in i if ax not in x)
                          for x, i in zip(d, dims_of(a)))
            outs.append(d)
        return outs

    def sharding_hints(self, eqn):
        """The layouts of the results, as ``out_specs`` place them on the mesh (a jit holding a
        shard_map returns them so, as JAX's does)."""
        p = eqn.params
        return [(NamedSharding(p["mesh"], s), a.ndim)
                for s, a in zip(p["out_specs"], p["jaxpr"].out_avals)]

    def partition(self, builder, eqn, ins, mesh_spec):
        """Inside a partitioned program over the same mesh, a shard_map is its per-device
        body: operands are laid out as ``in_specs`` say, the body's equations run on the
        blocks, and the results are laid out as ``out_specs`` say (None: another mesh, the
        partitioner runs it on whole operands). Over a subset of the mesh's axes (partial
        manual), an operand keeps its split over the other axes, within its blocks, and the
        body's equations are partitioned over those axes like any others."""
        from jaxlite._src.interpreters.eval import eval_jaxpr
        p = eqn.params
        mesh = p["mesh"]
        if tuple(mesh.axis_names) != tuple(builder.mesh.axis_names) or \
                list(mesh.devices.flat) != list(builder.mesh.devices.flat):
            return None      # the body's collectives name another mesh's axes
        manual = frozenset(p.get("newly_manual_axes") or mesh.axis_names)
        partial = manual != frozenset(mesh.axis_names)
        wants = [mesh_spec(self, NamedSharding(p["mesh"], s), len(d))
                 for s, (_, d) in zip(p["in_specs"], ins)]
        outs = [mesh_spec(self, NamedSharding(p["mesh"], s), a.ndim)
                for s, a in zip(p["out_specs"], p["jaxpr"].out_avals)]
        if any(w is None for w in wants + outs):
            return None
        body = p["jaxpr"]
        if partial:
            wants = [_keep_auto(want, d, manual, a.shape, builder.factor)
                     for want, (_, d), a in zip(wants, ins, body.in_avals)]
        blocks = []
        for (x, d), want in zip(ins, wants):
            if d != want:
                x, d = builder.relayout(x, d, want, f"shard_map's in_specs lay this operand out "
                                        f"as {want}", eqn.source_info)
            blocks.append(x)
        if not partial:
            ys = eval_jaxpr(body.jaxpr, body.consts, *blocks)
            return list(zip(ys, outs))
        inner = [tuple(tuple(a for a in axes if a not in manual) for axes in w) for w in wants]
        res = builder.run(body.jaxpr, body.consts, list(zip(blocks, inner)))
        return [(y, tuple(o + tuple(a for a in lay if a not in o) for o, lay in zip(out, lays)))
                for (y, lays), out in zip(res, outs)]

    def _with(self, params, jaxpr, in_specs, out_specs):
        return dict(params, jaxpr=jaxpr, in_specs=tuple(in_specs), out_specs=tuple(out_specs))

    # -- autodiff
    def jvp(self, primals, tangents, jaxpr, in_specs, out_specs, **params):
        from jaxlite._src.interpreters import ad
        nonzeros = [type(t) is not ad.Zero for t in tangents]
        mesh = params["mesh"]
        with axis_env(mesh):
            closed = ad.jvp_jaxpr(jaxpr, nonzeros)
        nz_t = [t for t in tangents if type(t) is not ad.Zero]
        t_specs = [s for s, nz in zip(in_specs, nonzeros) if nz]
        outs = self.bind(*primals, *nz_t, **self._with(
            params, closed, list(in_specs) + t_specs, list(out_specs) * 2))
        n = len(jaxpr.out_avals)
        return outs[:n], outs[n:]

    def partial_eval(self, trace, args, params):
        """Split the per-device program: a shard_map of the known part runs now and also
        returns its residuals (each device's own, stacked along a new leading dimension split
        over every mesh axis); the unknown part is staged as a second shard_map that takes
        them, so it does not recompute the known part (and transposes: a scan inside
        becomes a known scan and a linear one)."""
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.core.trace import set_current_trace
        from jaxlite._src.interpreters.partial_eval import partial_eval_jaxpr
        from jaxlite._src.interpreters.staging import StagingTrace, trace_to_jaxpr
        from jaxlite._src.prims.shape import broadcast_in_dim_p, squeeze_p
        closed, mesh = params["jaxpr"], params["mesh"]
        unknowns = [trace.is_unknown(a) for a in args]
        with axis_env(mesh):
            known, unknown, out_unknown, n_res = partial_eval_jaxpr(closed, unknowns)
        n_known = len(known.jaxpr.outvars) - n_res
        res_avals = known.out_avals[n_known:]
        manual = params.get("newly_manual_axes") or mesh.axis_names
        every = PartitionSpec(tuple(a for a in mesh.axis_names if a in manual))

        def known_body(*xs):
            outs = ad_eval(known, xs)
            return outs[:n_known] + [
                broadcast_in_dim_p.bind(r, shape=(1,) + tuple(a.shape),
                                        broadcast_dimensions=tuple(range(1, a.ndim + 1)),
                                        sharding=None)
                for r, a in zip(outs[n_known:], res_avals)]

        def unknown_body(*xs):
            res = [squeeze_p.bind(r, dimensions=(0,)) for r in xs[:n_res]]
            return ad_eval(unknown, res + list(xs[n_res:]))
        with axis_env(mesh):
            kj, _, kc = trace_to_jaxpr(known_body, known.in_avals)
            uj, _, uc = trace_to_jaxpr(unknown_body, [
                a.update(shape=(1,) + tuple(a.shape)) for a in res_avals] +
                list(unknown.in_avals[n_res:]))
        k_specs = [s for s, u in zip(params["in_specs"], unknowns) if not u]
        ko_specs = [s for s, u in zip(params["out_specs"], out_unknown) if not u]
        u_specs = [s for s, u in zip(params["in_specs"], unknowns) if u]
        uo_specs = [s for s, u in zip(params["out_specs"], out_unknown) if u]
        known_args = [a for a, u in zip(args, unknowns) if not u]
        with set_current_trace(trace.parent):
            kouts = self.bind(*known_args, **self._with(
                params, ClosedJaxpr(kj, kc), k_specs, ko_specs + [every] * n_res)) \
                if n_known or n_res else []
        residuals = kouts[n_known:]
        uouts = StagingTrace.process_primitive(
            trace, self, list(residuals) + [a for a, u in zip(args, unknowns) if u],
            self._with(params, ClosedJaxpr(uj, uc), [every] * n_res + u_specs, uo_specs))
        ki, ui = iter(kouts[:n_known]), iter(uouts)
        return [next(ui) if u else next(ki) for u in out_unknown]

    def transpose(self, cts, *args, jaxpr, in_specs, out_specs, mesh, **params):
        """Cotangents flow back through the transposed body; an input replicated over some
        mesh axes gets the sum over those axes of the per-device cotangents, and the
        cotangent of an output replicated over some axes is shared out among the devices
        holding its replicas (each gets its share, as in JAX: the sum over them of what
        flows back is then the cotangent once, not once per replica)."""
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.interpreters import ad
        from jaxlite._src.interpreters.staging import trace_to_jaxpr
        from jaxlite._src.prims.collectives import psum_p
        linear = [type(a) is ad.UndefinedPrimal for a in args]
        manual = params.get("newly_manual_axes") or mesh.axis_names
        with axis_env(mesh):
            tclosed = ad.transpose_jaxpr(jaxpr, linear)
            lin_specs = [s for s, lin in zip(in_specs, linear) if lin]

            def body(*xs):
                outs = ad_eval(tclosed, xs)
                res = []
                for o, s in zip(outs, lin_specs):
                    used = {a for e in s for a in entry_axes(e)}
                    missing = tuple(a for a in mesh.axis_names if a not in used and
                                    a in manual)
                    if missing:
                        (o,) = psum_p.bind(o, axes=missing, axis_index_groups=None)
                    res.append(o)
                return res
            j, _, consts = trace_to_jaxpr(body, tclosed.in_avals)
        full = ClosedJaxpr(j, consts)
        known = [a for a, lin in zip(args, linear) if not lin]
        k_specs = [s for s, lin in zip(in_specs, linear) if not lin]
        cts = [_share(ad.instantiate(c), s, mesh, manual) for c, s in zip(cts, out_specs)]
        outs = iter(self.bind(*known, *cts, **self._with(
            dict(params, mesh=mesh), full, k_specs + list(out_specs), lin_specs)))
        return [next(outs) if lin else None for lin in linear]

    # -- vmap: the batch dimension becomes an unsplit dimension of every block
    def batch(self, size, args, dims, jaxpr, in_specs, out_specs, **params):
        from jaxlite._src.interpreters.batching import batch_jaxpr_keep_dims
        mesh = params["mesh"]
        with axis_env(mesh):
            closed, out_dims = batch_jaxpr_keep_dims(jaxpr, size, dims)
        new_in = [s if d is None else _insert_none(s, d) for s, d in zip(in_specs, dims)]
        new_out = [s if d is None else _insert_none(s, d) for s, d in zip(out_specs, out_dims)]
        outs = self.bind(*args, **self._with(params, closed, new_in, new_out))
        return outs, out_dims

    def pp_suggest_names(self, eqn, ctx):
        return None


def _keep_auto(want, have, manual, local_shape, factor):
    """The layout of an operand of a partial-manual shard_map: its manual axes as the
    in_spec says (``want``), then the other axes it is already split on along the same
    dimension, where the split it has starts with the in_spec's (the blocks are already
    where the body wants them) and they still divide the body's block."""
    used = {a for axes in want for a in axes}
    out = []
    for w, h, n in zip(want, have, local_shape):
        w = tuple(w)
        extra = tuple(h[len(w):]) if tuple(h[:len(w)]) == w else ()
        if extra and not (set(extra) & (used | set(manual))) and n % factor(extra) == 0:
            used |= set(extra)
            w = w + extra
        out.append(w)
    return tuple(out)


def _share(ct, spec, mesh, manual):
    """The cotangent each device gets for an output replicated over the manual mesh axes its
    spec does not name: an equal share of it (the input cotangents are then summed over the
    axes their specs do not name, so every replica's share is counted once)."""
    used = {a for e in spec for a in entry_axes(e)}
    n = math.prod(s for a, s in zip(mesh.axis_names, mesh.axis_sizes)
                  if a not in used and a in manual)
    if n == 1:
        return ct
    from jaxlite._src.prims.elementwise import mul_p
    dt = getattr(ct, "dtype", None) or np.asarray(ct).dtype
    if not np.issubdtype(dt, np.inexact):
        return ct
    return mul_p.bind(ct, np.asarray(1.0 / n, dt))


def ad_eval(closed, xs):
    from jaxlite._src.interpreters.eval import eval_jaxpr
    return eval_jaxpr(closed.jaxpr, closed.consts, *xs)


def _insert_none(spec, d):
    parts = list(spec) + [None] * max(0, d - len(spec))
    parts.insert(d, None)
    while parts and parts[-1] is None:
        parts.pop()
    return PartitionSpec(*parts)


shard_map_p = ShardMap()
