"""jit on sharded arguments: partition the traced program once per input layout and run the
per-device program on every device thread (computation follows sharding)."""
from __future__ import annotations

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.core.ir import Literal
from jaxlite._src.compiler.partition import partition, output_sharding, sharding_hints
from jaxlite._src.prims.shard_map import run_shard_map
from jaxlite._src.runtime import sharded_array as _sa
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.shardings import NamedSharding, Sharding, resolve_sharding
from jaxlite._src.sharding.types import concrete_mesh_for, is_typed

__all__ = ["run_partitioned", "flat_out_shardings", "partition_for", "arg_sharding",
           "has_constraints", "typed_out_shardings", "used_inputs"]


def typed_out_shardings(closed, leaves):
    """The output shardings the program's types name (over Explicit mesh axes), on the
    concrete mesh of an argument or of ``jax.set_mesh``; None when no output is typed."""
    avals = closed.out_avals
    if not any(is_typed(a) for a in avals):
        return None
    cands = [getattr(x, "_sharding", None) for x in leaves]
    res = []
    for a in avals:
        if not is_typed(a):
            res.append(None)
            continue
        mesh = concrete_mesh_for(a.sharding.mesh, cands)
        res.append(None if mesh is None else NamedSharding(mesh, a.sharding.spec))
    return res if any(r is not None for r in res) else None


def flat_out_shardings(out_shardings, out_tree):
    """One Sharding (or None) per output leaf from jit's ``out_shardings`` (a Sharding, a bare
    PartitionSpec under a mesh, or a pytree prefix of the outputs)."""
    if out_shardings is None:
        return None
    is_leaf = lambda s: s is None or isinstance(s, Sharding) or \
        type(s).__name__ == "PartitionSpec"  # noqa: E731
    if is_leaf(out_shardings):
        return [resolve_sharding(out_shardings)] * out_tree.num_leaves
    full = tree_util.broadcast_prefix(
        out_shardings, tree_util.tree_unflatten(out_tree, [0] * out_tree.num_leaves),
        is_leaf=is_leaf)
    return [resolve_sharding(s) for s in full]


def arg_sharding(x):
    """The sharding of a leaf split over several devices (None otherwise); a key array's is
    its data's."""
    if type(x) in dtypes.extended_array_types:
        x = x.dtype.to_physical(x)
    s = getattr(x, "_sharding", None) if isinstance(x, ArrayImpl) else None
    return s if s is not None and s.num_devices > 1 else None


def has_constraints(closed):
    """Whether the program asks for layouts of intermediate values (sharding constraints,
    shard_maps)."""
    return bool(sharding_hints(closed.jaxpr))


def used_inputs(jaxpr):
    """Whether each input of ``jaxpr`` is read by an equation or returned."""
    used = {v for e in jaxpr.eqns for v in e.invars if type(v) is not Literal}
    used.update(v for v in jaxpr.outvars if type(v) is not Literal)
    return [v in used for v in jaxpr.invars]


def partition_for(closed, leaves, out_shardings, cache, keep_unused=False):
    """The Partitioned program for these arguments' shardings (cached), or None. Without
    ``keep_unused`` an argument the program does not read does not place it (as JAX prunes
    unused arguments)."""
    shardings = [arg_sharding(x) for x in leaves]
    if not keep_unused and any(s is not None for s in shardings):
        used = cache.get(("used", id(closed)))
        if used is None:       # (the jaxpr is kept with its entry: its id stays its own)
            used = cache[("used", id(closed))] = (closed, used_inputs(closed.jaxpr))
        shardings = [s if u else None for s, u in zip(shardings, used[1])]
    shardings = tuple(shardings)
    key = (id(closed), shardings, None if out_shardings is None else tuple(out_shardings))
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = (closed, partition(closed, shardings, out_shardings))
    return hit[1]


def run_partitioned(part, leaves):
    """Run a Partitioned program; outputs carry the layouts it chose."""
    if part.in_ext is not None:      # key arrays in and out as their data
        leaves = [x if e is None else e.to_physical(x) for x, e in zip(leaves, part.in_ext)]
    outs = run_shard_map(list(leaves), part.body, part.mesh, part.in_specs, part.out_specs)
    if part.positional:
        outs = [_positional(part, o, spec) for o, spec in zip(outs, part.out_specs)]
    if part.out_ext is not None:
        outs = [o if e is None else e.from_physical(o) for o, e in zip(outs, part.out_ext)]
    return outs


def _positional(part, o, spec):
    """Output ``o`` placed by the PositionalSharding of its layout."""
    s = output_sharding(part, spec, o.ndim)
    by_dev = o._shard_buffers() if isinstance(o, _sa.ShardedArray) else None
    if by_dev is None:
        return o
    if s.num_devices == 1:
        return ArrayImpl(by_dev[next(iter(s.device_set))], o.weak_type, s)
    return _sa.from_buffers(o.aval, s, [by_dev.get(d) for d in s._device_assignment])
