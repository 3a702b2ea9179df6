"""Computation follows data: eager primitives on committed or sharded arrays.

An eager op whose operands are committed to a device runs there and returns an array committed
to it. An op on sharded operands runs shard by shard on the device threads when the
primitive's ``sharding_rule`` says every device already holds what its output block needs
(elementwise ops, reductions over unsplit axes, transposes, matmuls whose contracted axes are
not split, ...); otherwise the operands are gathered and the result is placed with the sharding
those rules imply (the sharded-jit partitioner will replace this fallback with collectives).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.runtime.devices import current_device, run_on_devices
from jaxlite._src.runtime import sharded_array as _sa
from jaxlite._src.sharding.mesh import mesh_active, mesh_listeners, context_mesh  # noqa: F401

__all__ = ["eager_placed", "placement_of", "incompatible_devices_error", "place_outputs",
           "place_output", "replicated_like", "set_global_fallback",
           "reshard_spanning_processes", "mesh_placement", "on_context_mesh"]


def placement_of(args, name):
    """(sharding, is_multi) shared by the committed operands among ``args``, or (None, False)
    when none is committed; raises JAX's errors when they sit on different meshes (of
    Explicit axes) or devices."""
    found = []
    for i, a in enumerate(args):
        if isinstance(a, ArrayImpl) and a._sharding is not None:
            found.append((i, a))
    if not found:
        return None, False
    if mesh_active[0]:
        _check_context_devices(found, name)
    first = found[0][1]._sharding
    if len(found) > 1:
        _check_meshes(found)
        devs = set(first._device_assignment)
        for i, a in found[1:]:
            if set(a._sharding._device_assignment) != devs:
                raise incompatible_devices_error(name, found[0], (i, a))
        return first, len(devs) > 1
    return first, first.num_devices > 1


def mesh_placement():
    """The placement of a computation none of whose operands is committed: replicated over
    the concrete mesh of ``jax.set_mesh`` (JAX runs such a computation on the context mesh's
    devices), or None when no mesh is set."""
    if not mesh_active[0] or current_device() is not None:
        return None     # (a device thread computes its own block: no placement there)
    m = context_mesh()
    if m is None:
        return None
    return _replicated_on(m)


def _replicated_on(mesh):
    hit = _REPLICATED.get(mesh)
    if hit is None:
        from jaxlite._src.sharding.shardings import NamedSharding
        from jaxlite._src.sharding.partition_spec import PartitionSpec
        if len(_REPLICATED) > 64:
            _REPLICATED.clear()
        hit = _REPLICATED[mesh] = NamedSharding(mesh, PartitionSpec())
    return hit


_REPLICATED = {}


def on_context_mesh(outs):
    """Eager results computed from uncommitted operands (an Array or a list of them), placed
    as JAX places them: replicated over the ``jax.set_mesh`` mesh when one is set, else
    returned as they are."""
    sharding = mesh_placement()
    if sharding is None:
        return outs
    if isinstance(outs, list):
        return [_on_mesh(o, sharding) for o in outs]
    return _on_mesh(outs, sharding)


def _on_mesh(o, sharding):
    if type(o) in dtypes.extended_array_types:      # key arrays: their data is placed
        data = o.dtype.to_physical(o)
        placed = _on_mesh(data, sharding)
        return o if placed is data else o.dtype.from_physical(placed)
    if type(o) is not ArrayImpl or o._sharding is not None:
        return o        # (committed results stay where they are)
    return _sa.from_global(o._value, o.weak_type, sharding)


def _check_context_devices(found, name):
    """JAX's error for a committed operand whose devices are not the ``jax.set_mesh`` mesh's
    (a computation under a concrete mesh runs on that mesh's devices)."""
    m = context_mesh() if current_device() is None else None
    if m is None:
        return
    want = tuple(m.devices.flat)
    for i, a in found:
        have = tuple(a._sharding._device_assignment)
        if have != want:
            from jaxlite._src.sharding.shardings import aval_sharding
            ids = [d.id for d in have]
            aval = ShapedArray(a.shape, a.dtype,
                               sharding=aval_sharding(a._sharding, a.ndim))
            raise ValueError(
                f"Received incompatible devices for jitted computation. Got argument "
                f"{_ARG_NAMES[min(i, len(_ARG_NAMES) - 1)]} of {name} with shape "
                f"{aval.str_short(False)} and with device ids {ids} on platform CPU and "
                f"jit's context mesh with device ids {[d.id for d in want]} on platform CPU")


_ARG_NAMES = ("x", "y", "args")


def _check_meshes(found):
    """JAX's error for operands whose types name different meshes (sharding in types: the
    meshes of Explicit axes must agree)."""
    from jaxlite._src.sharding.shardings import aval_sharding
    seen = None
    for _, a in found:
        s = a._sharding
        if getattr(s, "mesh", None) is None or not s.mesh.explicit_axes:
            continue
        m = aval_sharding(s, a.ndim).mesh
        if seen is None:
            seen = m
        elif m != seen:
            raise ValueError(f"Mesh for all inputs should be equal. Got one mesh: {seen} and "
                             f"another mesh: {m}")


def incompatible_devices_error(name, a, b):
    """JAX's ValueError for operands committed to different devices."""
    from jaxlite._src.sharding.shardings import aval_sharding

    def desc(label, x):
        ids = sorted(d.id for d in x._sharding._device_assignment)
        s = aval_sharding(x._sharding, x.ndim)
        aval = ShapedArray(x.shape, x.dtype, sharding=s)
        return (f"argument {label} of {name} with shape {aval.str_short(False)} and with "
                f"device ids {ids} on platform CPU")
    return ValueError(f"Received incompatible devices for jitted computation. Got "
                      f"{desc('x', a[1])} and {desc('y', b[1])}")


def _local(a):
    """The operand as an uncommitted single-device value (assembling a sharded one)."""
    if isinstance(a, ArrayImpl) and a._sharding is not None:
        return ArrayImpl(a._value, a.weak_type)
    return a


def place_outputs(outs, sharding):
    """Commit eager results (an Array or a list of them) to a single-device ``sharding``."""
    if isinstance(outs, list):
        return [ArrayImpl(o._value, o.weak_type, sharding) for o in outs]
    return ArrayImpl(outs._value, outs.weak_type, sharding)


def place_output(value, weak, sharding, multi):
    """Wrap a computed NumPy value as an array placed where its committed inputs were
    (uncommitted when ``sharding`` is None; replicated over a multi-device sharding's devices
    until the sharded-jit partitioner decides better)."""
    if sharding is None:
        return ArrayImpl(value, weak)
    if not multi:
        return ArrayImpl(value, weak, sharding)
    return _sa.from_global(value, weak, replicated_like(sharding, np.ndim(value)))


def replicated_like(like, ndim):
    """A sharding replicating rank-``ndim`` arrays over ``like``'s devices, of its kind."""
    from jaxlite._src.sharding.shardings import NamedSharding, PositionalSharding, \
        _object_array
    from jaxlite._src.sharding.partition_spec import PartitionSpec
    if isinstance(like, NamedSharding):
        return NamedSharding(like.mesh, PartitionSpec(*[None] * ndim))
    devs = sorted(like._device_assignment, key=lambda d: d.id)
    # (JAX 0.4 gave rank-0 results a 1-d replicated PositionalSharding)
    return PositionalSharding._from_tile(_object_array(devs, (1,) * max(ndim, 1) +
                                                       (len(devs),)))


def eager_placed(prim, args, params):
    """Run ``prim`` eagerly on operands of which some are committed or sharded."""
    sharding, multi = placement_of(args, prim.name)
    if not multi:
        return place_outputs(prim.eager([_local(a) for a in args], params), sharding)
    mesh = getattr(sharding, "mesh", None)
    if mesh is not None and mesh.explicit_axes:
        # sharding in types: the result is laid out as its type says (and an operation
        # whose result sharding JAX cannot type raises ShardingTypeError before running)
        want = _typed_shardings(prim, args, params, mesh)
        out = _sharded(prim, args, params, sharding)
        if isinstance(out, list):
            return [_retyped(o, w) for o, w in zip(out, want)]
        return _retyped(out, want[0])
    return _sharded(prim, args, params, sharding)


_TYPED = {}


def _typed_shardings(prim, args, params, mesh):
    """The NamedSharding (on ``mesh``) of each result that the result types name (None for
    an untyped result), cached per primitive, parameters and operand types."""
    try:
        key = (prim, tuple(sorted(params.items())), tuple(_arg_key(a) for a in args))
        hit = _TYPED.get(key)
    except TypeError:
        key, hit = None, None
    if hit is not None:
        return hit
    from jaxlite._src.sharding.shardings import NamedSharding
    from jaxlite._src.sharding.types import out_types, typed_aval, is_typed
    avals = [typed_aval(a, _aval(a)) if isinstance(a, ArrayImpl) else _aval(a) for a in args]
    outs = out_types(prim, avals, params, prim.abstract_eval(*avals, **params))
    outs = outs if isinstance(outs, list) else [outs]
    hit = [NamedSharding(mesh, o.sharding.spec) if is_typed(o) else None for o in outs]
    if key is not None:
        if len(_TYPED) >= _PLANS_MAX:
            _TYPED.clear()
        _TYPED[key] = hit
    return hit


def _retyped(out, want):
    """``out`` laid out by ``want`` (its buffers kept when the layouts agree)."""
    have = getattr(out, "_sharding", None)
    if want is None or have is None or have == want:
        return out
    if have.is_equivalent_to(want, out.ndim) and isinstance(out, _sa.ShardedArray):
        by_dev = out._shard_buffers()
        return _sa.from_buffers(out.aval, want, [by_dev.get(d) for d in want._device_assignment])
    return _sa.from_global(np.asarray(out._value), out.weak_type, want)


def _aval(a):
    if isinstance(a, ArrayImpl):
        return a.aval
    v = np.asarray(a)
    return ShapedArray(v.shape, v.dtype)


_PLANS = {}
_PLANS_MAX = 4096
_SHARD, _WHOLE, _RAW = 0, 1, 2


def _arg_key(a):
    if isinstance(a, ArrayImpl):
        return (a._sharding, a.shape, a.dtype, a.weak_type)
    if type(a) in (int, float, complex, bool):
        return (type(a),)
    v = np.asarray(a)
    return (type(a), v.shape, v.dtype)


def _sharded(prim, args, params, like):
    """Run ``prim`` on operands split over several devices: shard by shard on the device
    threads when each device holds what its output block needs, else gathered. The plan
    (output sharding, which slice of which operand each device takes) is cached per
    primitive, parameters and operand shardings/avals."""
    try:
        key = (prim, tuple(sorted(params.items())), tuple(_arg_key(a) for a in args))
        plan = _PLANS.get(key)
    except TypeError:   # unhashable parameters: plan every call
        key, plan = None, None
    if plan is None:
        plan = _make_plan(prim, args, params, like)
        if key is not None:
            if len(_PLANS) >= _PLANS_MAX:
                _PLANS.clear()
            _PLANS[key] = plan
    spans = any(isinstance(a, _sa.ShardedArray) and not a.is_fully_addressable for a in args)
    if plan[0] is None:
        if spans:     # the data lives in several processes: run it as a sharded jit
            return _global_fallback[0](prim, args, params)
        avals = [_aval(a) for a in args]
        return _gathered(prim, args, params, like, avals, plan[1])
    sharding, out_shape, weak, devs, recipes, order, local_params = plan
    if spans:
        return _sharded_local(prim, args, plan)
    shard_bufs = [a._shard_buffers() if r[0] == _SHARD else None
                  for a, r in zip(args, recipes[0])]
    if len(devs) > 1 and sharding.is_fully_replicated and \
            _same_everywhere(devs, recipes, shard_bufs):
        # every device would compute the same replica from the same buffers (replicated
        # operands, as under jax.set_mesh): compute it once, the replicas share its buffer
        return _replicated_once(prim, args, plan, shard_bufs)
    per_dev = []
    for dev, recipe in zip(devs, recipes):
        local = []
        for a, (src, want), sb in zip(args, recipe, shard_bufs):
            if src == _SHARD:
                buf = sb[dev]
                local.append(ArrayImpl(buf if want is None else buf[want], a.weak_type))
            elif src == _WHOLE:
                buf = a._value
                local.append(ArrayImpl(buf if want is None else buf[want], a.weak_type))
            else:
                local.append(a if want is None else np.asarray(a)[want])
        per_dev.append((local,))

    def run(dev_args):
        return prim.eager(dev_args, local_params)._value

    bufs = run_on_devices(devs, run, per_dev)
    if order is not None:   # (an array keeps its buffers in its own sharding's device order)
        bufs = [bufs[i] for i in order]
    return _sa.from_buffers(ShapedArray(out_shape, bufs[0].dtype, weak), sharding, bufs)


def _same_everywhere(devs, recipes, shard_bufs):
    """Whether every device's operands are the same buffers taken the same way."""
    r0 = recipes[0]
    for r in recipes[1:]:
        if r != r0:
            return False
    d0 = devs[0]
    for sb in shard_bufs:
        if sb is not None:
            b0 = sb[d0]
            for d in devs[1:]:
                if sb[d] is not b0:
                    return False
    return True


def _replicated_once(prim, args, plan, shard_bufs):
    """The shard-by-shard run when all devices compute one replica: computed on the first
    device, its buffer (read-only) shared by every device."""
    sharding, out_shape, weak, devs, recipes, order, local_params = plan
    local = []
    for a, (src, want), sb in zip(args, recipes[0], shard_bufs):
        if src == _SHARD:
            buf = sb[devs[0]]
        elif src == _WHOLE:
            buf = a._value
        else:
            local.append(a if want is None else np.asarray(a)[want])
            continue
        local.append(ArrayImpl(buf if want is None else buf[want], a.weak_type))

    def run(dev_args):
        return prim.eager(dev_args, local_params)._value

    buf = run_on_devices([devs[0]], run, [(local,)])[0]
    if buf.flags.writeable and buf.base is None:
        buf.flags.writeable = False
    return _sa.from_buffers(ShapedArray(out_shape, buf.dtype, weak), sharding,
                            [buf] * len(devs))


# Set by the jit layer: runs one primitive on operands spanning processes as a jit (the
# partitioner inserts the collectives that move data between them), and moves an array
# spanning processes to another sharding.
_global_fallback = [None, None]


def set_global_fallback(eager, reshard):
    """Install ``eager(prim, args, params)``, the path of eager ops whose operands span
    processes and need data from other devices, and ``reshard(x, sharding)``."""
    _global_fallback[:] = [eager, reshard]


def reshard_spanning_processes(x, sharding):
    """``x`` (an array spanning processes) laid out by ``sharding``."""
    return _global_fallback[1](x, sharding)


def _sharded_local(prim, args, plan):
    """The shard-by-shard run when the operands span processes: this process's devices
    compute their blocks; the others' buffers stay theirs."""
    from jaxlite._src.runtime.devices import process_index
    sharding, out_shape, weak, devs, recipes, order, local_params = plan
    me = process_index()
    shard_bufs = [a._shard_buffers() if r[0] == _SHARD else None
                  for a, r in zip(args, recipes[0])]
    mine, per_dev = [], []
    for i, (dev, recipe) in enumerate(zip(devs, recipes)):
        if dev.process_index != me:
            continue
        local = []
        for a, (src, want), sb in zip(args, recipe, shard_bufs):
            if src == _SHARD:
                buf = sb[dev]
            elif src == _WHOLE:
                buf = a._value
            else:
                local.append(a if want is None else np.asarray(a)[want])
                continue
            local.append(ArrayImpl(buf if want is None else buf[want], a.weak_type))
        mine.append(i)
        per_dev.append((local,))

    def run(dev_args):
        return prim.eager(dev_args, local_params)._value

    got = run_on_devices([devs[i] for i in mine], run, per_dev)
    bufs = [None] * len(devs)
    for i, b in zip(mine, got):
        bufs[i] = b
    if order is not None:
        bufs = [bufs[i] for i in order]
    dt = next(b for b in bufs if b is not None).dtype
    return _sa.from_buffers(ShapedArray(out_shape, dt, weak), sharding, bufs)


def _make_plan(prim, args, params, like):
    """(output sharding, output shape, weak type, devices, per-device recipes, buffer order,
    per-device parameters) for a shard-by-shard run, or (None, dims_map) when the operands
    must be gathered."""
    avals = [_aval(a) for a in args]
    # (a primitive whose eager placement differs from its place in a partitioned program
    # says so with an ``eager_sharding_rule``)
    rule = getattr(prim, "eager_sharding_rule", None) or getattr(prim, "sharding_rule", None)
    dims_map = rule(avals, **params) if rule is not None and not prim.multiple_results else None
    devs = like._device_assignment
    if dims_map is None or getattr(prim, "whole_dims", None) is not None:
        # (a primitive that needs some dimensions whole runs gathered; its rule still
        # places the result)
        return (None, dims_map)
    out_shape = prim.abstract_eval(*avals, **params).shape
    planned = _plan(args, avals, dims_map, devs, len(out_shape))
    if planned is None:
        return (None, dims_map)
    out_idx, recipes = planned
    sharding = _sharding_from_blocks(out_shape, out_idx, devs, like, args, dims_map)
    if sharding is None:
        return (None, dims_map)
    order = None
    if tuple(sharding._device_assignment) != tuple(devs):
        pos = {d: i for i, d in enumerate(devs)}
        order = [pos[d] for d in sharding._device_assignment]
    weak = prim.weak_from_flags([_weak(a) for a in args], params)
    local_params = params
    hook = getattr(prim, "local_params", None)
    if hook is not None:
        # parameters naming sizes (a gather's windows, a broadcast's shape) name the blocks'
        pieces = tuple(sharding._tile_cached(len(out_shape)).shape[:-1])
        in_f = [tuple(a._sharding._tile_cached(a.ndim).shape[:-1])
                if isinstance(a, ArrayImpl) and a._sharding is not None and
                a._sharding.num_devices > 1 else (1,) * np.ndim(a) for a in args]
        local_params = hook(params, in_f, pieces, ShapedArray(out_shape, np.float32))
    elif tuple(params.get("shape", ()) or ()) == tuple(out_shape) and out_shape:
        # a parameter naming the output shape (broadcast_in_dim) names the block's on a device
        pieces = sharding._tile_cached(len(out_shape)).shape[:-1]
        local_params = dict(params, shape=tuple(n // p for n, p in zip(out_shape, pieces)))
    return (sharding, out_shape, weak, tuple(devs), recipes, order, local_params)


def _weak(a):
    if isinstance(a, ArrayImpl):
        return a.weak_type
    return type(a) in (int, float, complex)


def _plan(args, avals, dims_map, devs, out_rank):
    """Per device: the output block (tuple of slices) and how to get each local operand
    (``(source, slices or None)``, source: the device's shard, the whole value of an
    unsplit array, or a raw operand), or None when some device lacks what its block needs
    (a split contracted axis, mismatched splits)."""
    indices = []
    for a in args:
        if isinstance(a, ArrayImpl) and a._sharding is not None and \
                a._sharding.num_devices > 1:
            indices.append({d: ir[0] for d, ir in
                            a._sharding._indices_and_replicas(a.shape).items()})
        else:
            indices.append(None)
    out_idx, recipes = [], []
    for dev in devs:
        block = [slice(None)] * out_rank
        for a, m, idx in zip(args, dims_map, indices):
            if idx is None:
                continue
            for k, (s, od) in enumerate(zip(idx[dev], m)):
                if s == slice(None):
                    continue
                if od is None:
                    return None
                if block[od] != slice(None) and block[od] != s:
                    return None
                block[od] = s
        recipe = []
        for a, av, m, idx in zip(args, avals, dims_map, indices):
            if idx is not None:
                src, have = _SHARD, idx[dev]
            else:
                src = _WHOLE if isinstance(a, ArrayImpl) else _RAW
                have = (slice(None),) * av.ndim
            want = tuple(block[od] if od is not None else slice(None) for od in m)
            sl = None
            if any(h != w for h, w in zip(have, want)):
                if any(h != slice(None) for h, w in zip(have, want) if h != w):
                    return None
                # the slices within what this device holds: dimensions it already has cut
                # as wanted stay whole
                sl = tuple(slice(None) if h == w else w for h, w in zip(have, want))
            recipe.append((src, sl))
        out_idx.append(tuple(block))
        recipes.append(recipe)
    return out_idx, recipes


def _sharding_from_blocks(out_shape, out_idx, devs, like, args, dims_map):
    """The output sharding of a shard-by-shard run: a NamedSharding on ``like``'s mesh when
    one describes the blocks, else a PositionalSharding of them (None when the blocks do not
    tile the output evenly)."""
    from jaxlite._src.sharding.shardings import PositionalSharding, _object_array
    nd = len(out_shape)
    starts = [sorted({(b[k].start or 0) for b in out_idx}) for k in range(nd)]
    pieces = [len(s) for s in starts]
    if any(n % p for n, p in zip(out_shape, pieces)):
        return None
    groups = {}
    for dev, b in zip(devs, out_idx):
        pos = tuple(starts[k].index(b[k].start or 0) for k in range(nd))
        groups.setdefault(pos, []).append(dev)
    reps = {len(v) for v in groups.values()}
    if len(groups) != int(np.prod(pieces, dtype=np.int64)) or len(reps) != 1:
        return None   # some output block is computed by no device
    tile = _object_array([d for pos in np.ndindex(*pieces) for d in groups[pos]],
                         tuple(pieces) + (reps.pop(),))
    placed = PositionalSharding._from_tile(tile)
    cand = _named_candidate(like, args, dims_map, nd)
    if cand is not None and cand._places_like(placed, nd):
        return _as_jax_names(cand, args, nd)
    if isinstance(like, PositionalSharding):
        return _positional_like(tile)
    return placed


def _named_candidate(like, args, dims_map, nd):
    """The NamedSharding on ``like``'s mesh that the operands' specs imply for a rank-``nd``
    result (each output dimension takes the entry of the first operand dimension mapped to
    it, a mesh axis used once), with one entry per dimension as JAX prints eager results."""
    from jaxlite._src.sharding.shardings import NamedSharding
    from jaxlite._src.sharding.partition_spec import PartitionSpec, entry_axes
    if not isinstance(like, NamedSharding):
        return None
    spec, used = [None] * nd, set()
    for a, m in zip(args, dims_map or ()):
        s = getattr(a, "_sharding", None)
        if not isinstance(s, NamedSharding) or s.mesh != like.mesh:
            continue
        entries = list(s.spec)[:a.ndim] + [None] * (a.ndim - len(s.spec))
        for k, od in enumerate(m):
            e = entries[k]
            if od is None or e is None or spec[od] is not None or set(entry_axes(e)) & used:
                continue
            spec[od] = e
            used |= set(entry_axes(e))
    return NamedSharding(like.mesh, PartitionSpec(*spec))


def _as_jax_names(s, args, nd):
    """How JAX names a NamedSharding result: over a mesh with Explicit axes the spec comes
    from the result's type (one entry per dimension); over Auto axes XLA decides, and JAX
    hands back an operand's own sharding when the result is laid out as it is, else the
    spec without trailing Nones."""
    from jaxlite._src.sharding.shardings import NamedSharding
    from jaxlite._src.sharding.partition_spec import PartitionSpec
    if not isinstance(s, NamedSharding) or s.mesh.explicit_axes:
        return s
    for a in args:
        sa = getattr(a, "_sharding", None)
        if isinstance(sa, NamedSharding) and a.ndim == nd and sa.mesh == s.mesh and \
                sa._places_like(s, nd):
            return sa
    spec = list(s.spec)
    while spec and spec[-1] is None:
        spec.pop()
    return NamedSharding(s.mesh, PartitionSpec(*spec))


def _positional_like(tile):
    """A PositionalSharding of ``tile`` with each replica set in device-id order (as JAX 0.4
    listed them)."""
    from jaxlite._src.sharding.shardings import PositionalSharding, _object_array
    if tile.shape[-1] > 1:
        tile = _object_array([d for pos in np.ndindex(*tile.shape[:-1])
                              for d in sorted(tile[pos], key=lambda d: d.id)], tile.shape)
    return PositionalSharding._from_tile(tile)


def _mapped_tile(tile, m, out_rank):
    """The tile array of a result whose dimension ``m[k]`` comes from operand dimension k
    (None: the dimension is reduced away or contracted): split dimensions that do not reach
    the result turn into replicas."""
    in_rank = tile.ndim - 1
    kept = [k for k in range(in_rank) if m[k] is not None]
    gone = [k for k in range(in_rank) if m[k] is None]
    order = sorted(kept, key=lambda k: m[k])
    t = np.transpose(tile, order + gone + [in_rank])
    pieces = [1] * out_rank
    for k in kept:
        pieces[m[k]] = tile.shape[k]
    return t.reshape(pieces + [-1])


def _gathered(prim, args, params, like, avals, dims_map):
    """Compute on the whole operands and place the result as the rules suggest (replicated
    over ``like``'s devices where they say nothing)."""
    out = prim.eager([_local(a) for a in args], params)
    outs = out if isinstance(out, list) else [out]
    placed = [_sa.from_global(o._value, o.weak_type, _fallback_sharding(o, like, args, dims_map))
              for o in outs]
    return placed if isinstance(out, list) else placed[0]


def _fallback_sharding(out, like, args, dims_map):
    """Where a gathered result goes: the NamedSharding the operands' specs imply, or the tile
    an operand's sharding maps to (split dimensions that are reduced become replicas), when
    it splits the result evenly; else replicated over ``like``'s devices."""
    from jaxlite._src.sharding.shardings import PositionalSharding
    nd = out.ndim
    cand = _named_candidate(like, args, dims_map, nd)
    if cand is not None and _divides(cand, out.shape):
        return _as_jax_names(cand, args, nd)
    if isinstance(like, PositionalSharding) and dims_map is not None:
        devs = set(like._device_assignment)
        for a, m in zip(args, dims_map):
            s = getattr(a, "_sharding", None)
            if s is None or s.num_devices < 2 or set(s._device_assignment) != devs:
                continue
            tile = _mapped_tile(s._tile_cached(a.ndim), m, nd)
            if tile.shape[-1] == len(devs):
                break
            if all(n % p == 0 for n, p in zip(out.shape, tile.shape[:-1])):
                return _positional_like(tile)
    return replicated_like(like, nd)


def _divides(sharding, shape):
    try:
        pieces = sharding._tile_cached(len(shape)).shape[:-1]
    except ValueError:
        return False
    return all(n % p == 0 for n, p in zip(shape, pieces))
