"""Running a small shard_map (or pmap) as one batched program on the calling thread.

A per-device program over a mesh means the same thing as that program ``vmap``-ped over each
mesh axis, with the collectives reducing over the batch axes (vmap's collective rules). When
the data is small, waking one executor thread per device and meeting at every collective
costs far more than the work (tens of microseconds per device and per collective, all under
the GIL), so such calls run the batched program once, on the caller's thread, and hand the
devices views of the result: a ``psum`` of a scalar over 8 devices then costs what one small
jitted call costs.

The batched form is only used where it cannot differ from the per-device run in anything
but the rounding of reductions. So it is not used for programs with side effects or host
calls (callbacks, prints, FFI calls: each is made once per device, with that device's
context), with a collective under data-dependent control flow (``cond``/``while``: the
per-device run reports the devices that never arrive), or with a collective whose vmap rule
does not cover its axis groups or tuple of axes; nor across processes, nor inside another
per-device program. ``jaxlite_spmd_mode`` (``JAXLITE_SPMD_MODE``) forces 'threads' or
'batched'; 'auto' picks by size.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.config import config
from jaxlite._src.core import dtypes
from jaxlite._src.core.ir import has_effects, jaxprs_in_params
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.partition_spec import entry_axes

__all__ = ["batched_runner", "BATCHED_MAX_BYTES"]

# 'auto' batches a call whose split (not replicated) arguments and results together hold at
# most this many bytes: above it, the device threads' parallel NumPy kernels win
# (benchmarks/bench_pmap.py).
BATCHED_MAX_BYTES = 1 << 20


def _unbatchable(jaxpr, divergent=False):
    """Whether ``jaxpr`` holds an equation the batched form could get wrong: a call made
    once per device (host callbacks, FFI calls, which see their device), a collective under
    data-dependent control flow, with ``axis_index_groups``, or over several axes at once
    where its vmap rule only handles its own axis."""
    for eqn in jaxpr.eqns:
        prim, params = eqn.primitive, eqn.params
        if getattr(prim, "runs_per_device", False):
            return True
        per_device_for = getattr(prim, "runs_per_device_for", None)
        if per_device_for is not None and per_device_for(params):
            return True
        if getattr(prim, "collective", False):
            names = params.get("axes", params.get("axis_name", ()))
            names = names if isinstance(names, (tuple, list)) else (names,)
            if divergent or params.get("axis_index_groups") is not None or \
                    (len(names) > 1 and not getattr(prim, "batches_axis_tuples", False)):
                return True
        inner = divergent or getattr(prim, "divergent", False)
        for sub in jaxprs_in_params(params):
            if _unbatchable(getattr(sub, "jaxpr", sub), inner):
                return True
    return False


class BatchedRunner:
    """The body of one shard_map batched over every mesh axis, and the layout moves between
    global values and its batched operands."""
    __slots__ = ("program", "mesh_names", "sizes", "in_moves", "out_moves", "nbytes")

    def __init__(self, jaxpr, mesh, in_specs, out_specs, in_avals, out_avals):
        from jaxlite._src.compiler.codegen import lower_jaxpr
        from jaxlite._src.compiler.passes import keep_sum_order, optimize
        from jaxlite._src.compiler.tiers import Program
        from jaxlite._src.interpreters import batching
        from jaxlite._src.prims.collectives import axis_env
        names, sizes = tuple(mesh.axis_names), dict(zip(mesh.axis_names, mesh.axis_sizes))
        self.mesh_names, self.sizes = names, sizes
        mentioned = [self._used(s) for s in in_specs]
        # the program each device runs (its jit: compiler passes included, e.g. a transpose
        # or a sum folded into a contraction), batched over the devices
        closed = optimize(jaxpr)
        with axis_env(mesh):
            for a in reversed(names):   # innermost mesh axis first: it ends up last
                dims = [0 if a in used else None for used in mentioned]
                closed = batching.batch_jaxpr(closed, sizes[a], dims, axis_name=a,
                                              per_device=True)
        want = [tuple(sizes[a] for a in names) + tuple(a.shape) for a in jaxpr.out_avals]
        if [tuple(a.shape) for a in closed.out_avals] != want:
            raise ValueError(f"batched shapes {closed.out_avals} are not {want}")
        with keep_sum_order():     # the same bits as the per-device programs
            opt = optimize(closed)
            # tiered as a jit: a hot pmap step gets tier 2's fused kernels (same ops, same
            # order, so still the per-device programs' bits)
            self.program = Program(opt, lower_jaxpr(opt, "shard_map_batched"),
                                   "shard_map_batched", exact_sums=True)
        self.in_moves = [self._in_move(s, a.shape) for s, a in zip(in_specs, in_avals)]
        self.out_moves = [self._out_move(s, a.shape) for s, a in zip(out_specs, out_avals)]
        # the data split over the devices: replicated operands are not multiplied in the
        # batched form, so only the split ones measure the work the devices would share
        self.nbytes = sum(a.size * a.dtype.itemsize
                          for a, sp in zip(list(in_avals) + list(out_avals),
                                           list(in_specs) + list(out_specs))
                          if self._used(sp))

    @staticmethod
    def _used(spec):
        return {a for e in spec for a in entry_axes(e)}

    def _split(self, spec, shape):
        """The global shape with every sharded dimension split into (mesh axes..., block),
        and the label of each resulting dimension."""
        entries = list(spec) + [None] * (len(shape) - len(spec))
        split, labels = [], []
        for j, (n, e) in enumerate(zip(shape, entries)):
            axes = entry_axes(e)
            k = math.prod(self.sizes[a] for a in axes)
            split += [self.sizes[a] for a in axes] + [n // k]
            labels += list(axes) + [("block", j)]
        return tuple(split), labels

    def _in_move(self, spec, shape):
        split, labels = self._split(spec, shape)
        front = [labels.index(a) for a in self.mesh_names if a in labels]
        rest = [i for i, lab in enumerate(labels) if not isinstance(lab, str)]
        return split, tuple(front + rest)

    def _out_move(self, spec, shape):
        split, labels = self._split(spec, shape)
        have = list(self.mesh_names) + [lab for lab in labels if not isinstance(lab, str)]
        # mesh axes the output is not split over: its devices hold replicas, take the first
        drop = tuple(0 if a not in labels else slice(None) for a in self.mesh_names)
        have = [lab for lab in have if not (isinstance(lab, str) and lab not in labels)]
        perm = tuple(have.index(lab) for lab in labels)
        return drop, perm, tuple(shape)

    def __call__(self, args):
        ins = []
        for x, (split, perm) in zip(args, self.in_moves):
            v = x._value if isinstance(x, ArrayImpl) else np.asarray(x)
            ins.append(v.reshape(split).transpose(perm))
        outs = self.program.fn(*ins)
        res = []
        for o, (drop, perm, shape) in zip(outs, self.out_moves):
            o = np.asarray(o)[drop].transpose(perm)
            res.append(np.ascontiguousarray(o).reshape(shape))
        return res


def batched_runner(plan):
    """The BatchedRunner to use for this call of ``plan``'s shard_map (prims/shard_map.py),
    or None to run it on the device threads."""
    mode = config._flags["jaxlite_spmd_mode"].value
    if mode == "threads":
        return None
    r = plan.batched
    if r is None:
        r = plan.batched = _build(plan.jaxpr, plan.mesh, plan.in_specs, plan.out_specs,
                                  plan.in_avals, plan.out_avals)
    if r is False:
        return None
    if mode == "auto" and r.nbytes > BATCHED_MAX_BYTES:
        return None
    return r


def _build(jaxpr, mesh, in_specs, out_specs, in_avals, out_avals):
    from jaxlite._src.runtime.devices import process_count
    if process_count() > 1 or any(has_effects(e) for e in jaxpr.jaxpr.eqns) or \
            any(dtypes.is_extended(a.dtype) for a in list(in_avals) + list(out_avals)) or \
            _unbatchable(jaxpr.jaxpr):     # (key arrays run on the threads, over their data)
        return False
    try:
        return BatchedRunner(jaxpr, mesh, in_specs, out_specs, in_avals, out_avals)
    except Exception:   # noqa: BLE001 - a rule vmap lacks: the device threads run it
        return False
