"""jit on sharded arguments: partition the traced program once per input layout and run the
per-device program on every device thread (computation follows sharding)."""
from __future__ import annotations

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.compiler.partition import partition, output_sharding, sharding_hints
from jaxlite._src.prims.shard_map import run_shard_map
from jaxlite._src.runtime import sharded_array as _sa
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.shardings import NamedSharding, Sharding, resolve_sharding
from jaxlite._src.sharding.types import concrete_mesh_for, is_typed

__all__ = ["run_partitioned", "flat_out_shardings", "partition_for", "arg_sharding",
           "has_constraints", "typed_out_shardings"]


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
    """The sharding of a leaf split over several devices (None otherwise)."""
    s = getattr(x, "_sharding", None) if isinstance(x, ArrayImpl) else None
    return s if s is not None and s.num_devices > 1 else None


def has_constraints(closed):
    """Whether the program asks for layouts of intermediate values (sharding constraints,
    shard_maps). Programs returning key arrays run whole (the partitioner places arrays
    only; key arguments are read whole by every device)."""
    if any(dtypes.is_extended(a.dtype) for a in closed.out_avals):
        return False
    return bool(sharding_hints(closed.jaxpr))


def partition_for(closed, leaves, out_shardings, cache):
    """The Partitioned program for these arguments' shardings (cached), or None."""
    shardings = tuple(arg_sharding(x) for x in leaves)
    key = (id(closed), shardings, None if out_shardings is None else tuple(out_shardings))
    hit = cache.get(key)
    if hit is None:
        hit = cache[key] = (closed, partition(closed, shardings, out_shardings))
    return hit[1]


def run_partitioned(part, leaves):
    """Run a Partitioned program; outputs carry the layouts it chose."""
    outs = run_shard_map(list(leaves), part.body, part.mesh, part.in_specs, part.out_specs)
    if not part.positional:
        return outs
    res = []
    for o, spec in zip(outs, part.out_specs):
        s = output_sharding(part, spec, o.ndim)
        by_dev = o._shard_buffers() if isinstance(o, _sa.ShardedArray) else None
        if by_dev is None:
            res.append(o)
        elif s.num_devices == 1:
            res.append(ArrayImpl(by_dev[next(iter(s.device_set))], o.weak_type, s))
        else:
            res.append(_sa.from_buffers(o.aval, s, [by_dev.get(d) for d in s._device_assignment]))
    return res

