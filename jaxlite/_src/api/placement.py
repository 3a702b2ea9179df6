"""Putting data on devices: device_put (to a device, a sharding, or a pytree of them),
device_put_sharded/replicated, device_get and the make_array_from_* constructors."""
from __future__ import annotations

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.trace import Tracer
from jaxlite._src.runtime import devices as _devices, guards
from jaxlite._src.runtime import sharded_array as _sa
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.shardings import (Sharding, NamedSharding, PositionalSharding,
                                             SingleDeviceSharding,
                                             resolve_sharding, aval_sharding)
from jaxlite._src.sharding.partition_spec import PartitionSpec

__all__ = ["device_put", "device_get", "device_put_sharded", "device_put_replicated",
           "reshard", "make_single_device_sharding",
           "make_array_from_callback", "make_array_from_single_device_arrays",
           "make_array_from_process_local_data", "default_device", "check_congruent"]


def _is_target(t):
    return t is None or isinstance(t, (Sharding, _devices.CpuDevice, PartitionSpec))


def _host_value(x):
    """(NumPy value, weak flag, already-immutable) of a leaf given to device_put."""
    if isinstance(x, ArrayImpl):
        return x._value, x.weak_type, True
    if isinstance(x, (bool, int, float, complex)):
        return np.asarray(x, dtypes.python_scalar_dtype(x)), type(x) is not bool, False
    if hasattr(x, "__jax_array__") and not isinstance(x, np.ndarray):
        return _host_value(x.__jax_array__())
    v = np.asarray(x)
    if v.dtype == object:
        raise TypeError(f"device_put: value of type {type(x).__name__} is not a valid JAX "
                        f"array type")
    dt = dtypes.canonicalize_dtype(v.dtype)
    if dt != v.dtype:   # (a converted copy is ours: no second copy needed)
        return v.astype(dt), False, True
    return v, False, False


def check_congruent(sharding, shape, what="device_put args"):
    """Raise JAX's error when ``sharding`` cannot split an array of ``shape``."""
    shape = tuple(shape)
    if isinstance(sharding, PositionalSharding):
        if sharding.is_fully_replicated:
            return   # (JAX 0.4.30 wanted the rank to match; the seed tutorials relied on not)
        if sharding.ndim != len(shape):
            raise ValueError(
                f"One of {what} is incompatible with its sharding annotation {sharding!r}: "
                f"Sharding {sharding!r} is only valid for values of rank {sharding.ndim}, but "
                f"was applied to a value of rank {len(shape)}")
        for k, (p, s) in enumerate(zip(sharding.shape, shape)):
            if s % p:
                raise ValueError(
                    f"One of {what} was given the sharding of {sharding!r}, which implies "
                    f"that the global size of its dimension {k} should be divisible by {p}, "
                    f"but it is equal to {s} (full shape: {shape})")
        return
    sharding.check_rank(shape)
    if isinstance(sharding, NamedSharding):
        aval_s = aval_sharding(sharding, len(shape))
        if aval_s is not None:
            sizes = sharding.mesh.shape
            for k, e in enumerate(aval_s.spec):
                if e is None:
                    continue
                axes = e if isinstance(e, tuple) else (e,)
                p = int(np.prod([sizes[a] for a in axes], dtype=np.int64))
                if shape[k] % p:
                    raise ValueError(
                        f"Sharding spec {axes!r} implies that array axis {k} is partitioned "
                        f"{p} times, but does not evenly divide the dimension size "
                        f"{shape[k]}. Got shape: {shape} and sharding {aval_s!r}")
    sharding.shard_shape(shape)   # IndivisibleError for the other axes


def _fresh(x):
    """A new Array object over the same (immutable) buffers as ``x``."""
    if isinstance(x, _sa.ShardedArray):
        return _sa.ShardedArray(x._aval, x._sharding, x._bufs, x._whole)
    return ArrayImpl(x._value, x.weak_type, x._sharding)


def _put_leaf(x, target, may_alias=None, donate=False):
    if isinstance(x, Tracer):
        return x
    if type(x) in dtypes.extended_array_types:   # a key array: its data is placed
        return x.dtype.from_physical(_put_leaf(x.dtype.to_physical(x), target, may_alias,
                                               donate))
    by_device = isinstance(target, _devices.CpuDevice)
    target = resolve_sharding(target)
    if guards.active[0] and not isinstance(x, ArrayImpl):
        guards.check_host_to_device(x, explicit=True, sharding=target)
    # JAX hands back the same Array when nothing moves, unless asked for a copy (may_alias=False)
    # or to donate; a new one for a Device target. Buffers are immutable: a "copy" shares them.
    fresh = donate is True or may_alias is False
    if target is None:
        if isinstance(x, ArrayImpl):
            return _fresh(x) if fresh else x
        v, weak, _ = _host_value(x)
        return ArrayImpl(np.array(v, copy=True) if may_alias is not True else v, weak)
    if isinstance(x, _sa.ShardedArray):
        check_congruent(target, x.shape)
        if x._sharding == target:
            return _fresh(x) if fresh else x
        if x._sharding._places_like(target, x.ndim):   # same buffers, relabelled
            bufs = x._shard_buffers()
            return _sa.from_buffers(x.aval, target,
                                    [bufs.get(d) for d in target._device_assignment])
        if not x.is_fully_addressable:
            # shards live in several processes: a jit with the target layout moves them
            from jaxlite._src.runtime.dispatch import reshard_spanning_processes
            return reshard_spanning_processes(x, target)
    v, weak, immutable = _host_value(x)
    check_congruent(target, v.shape)
    if isinstance(x, ArrayImpl) and x._sharding is not None and x._sharding == target:
        return _fresh(x) if fresh or by_device else x
    # the caller's NumPy data is copied (once, block by block) unless it may be aliased
    return _sa.from_global(v, weak, target, owned=immutable or may_alias is True)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Place the arrays of pytree ``x`` on ``device``: a Device, a Sharding, a bare
    PartitionSpec under ``jax.set_mesh``, or a pytree prefix of ``x`` holding those.

    NumPy inputs are copied once; jaxlite arrays are immutable, so placing one (even
    replicated over many devices) shares its buffer instead of copying it. ``donate`` (a bool)
    is accepted; as on JAX's CPU backend the donated array stays usable."""
    donate = donate if isinstance(donate, bool) else False
    if _is_target(device):
        return tree_util.tree_map(lambda l: _put_leaf(l, device, may_alias, donate), x)
    return tree_util.tree_map(
        lambda t, sub: tree_util.tree_map(lambda l: _put_leaf(l, t, may_alias, donate), sub),
        device, x, is_leaf=_is_target)


def device_get(x):
    """Fetch the arrays of pytree ``x`` as NumPy arrays (other leaves pass through)."""
    def get(l):
        if isinstance(l, ArrayImpl):
            return np.asarray(l)
        return l
    return tree_util.tree_map(get, x)


def _pmap_sharding(devs, ndim):
    from jaxlite._src.sharding.mesh import Mesh
    mesh = Mesh(np.asarray(devs, dtype=object), ("_internal_pmap_axis_name",))
    return NamedSharding(mesh, PartitionSpec("_internal_pmap_axis_name"))


def device_put_sharded(shards, devices):
    """Stack the list ``shards`` (pytrees of equal structure) along a new leading axis,
    slice i on ``devices[i]`` (the layout pmap uses)."""
    if len(shards) != len(devices):
        raise ValueError(f"len(shards) = {len(shards)} must equal len(devices) = "
                         f"{len(devices)}.")

    def stack(*xs):
        vals = [_host_value(x)[0] for x in xs]
        if any(v.shape != vals[0].shape or v.dtype != vals[0].dtype for v in vals):
            raise ValueError("the shards passed to device_put_sharded must have consistent "
                             f"shape and dtype, got {[v.shape for v in vals]}")
        full = np.stack(vals)
        return _sa.from_global(full, False, _pmap_sharding(devices, full.ndim))
    return tree_util.tree_map(stack, *shards)


def device_put_replicated(x, devices):
    """Copy every array of pytree ``x`` to each of ``devices``, stacked along a new leading
    axis (the copies share one buffer)."""
    if not devices:
        raise ValueError("`devices` argument to `device_put_replicated must be a non-empty "
                         "sequence.")

    def rep(l):
        v, _, immutable = _host_value(l)
        if not immutable:
            v = np.array(v, copy=True)   # (the copies alias this one buffer, not the caller's)
            v.flags.writeable = False
        full = np.broadcast_to(v, (len(devices),) + v.shape)
        return _sa.from_global(full, False, _pmap_sharding(devices, full.ndim))
    return tree_util.tree_map(rep, x)


def _addressable(d):
    return d.process_index == _devices.process_index()


def make_array_from_callback(shape, sharding, data_callback, dtype=None):
    """An array of ``shape`` with ``sharding`` whose shard on each device is
    ``data_callback(index)`` (index: that device's tuple of slices). Under jax.distributed
    only this process's devices ask (the array spans the processes)."""
    shape = tuple(int(s) for s in shape)
    sharding = resolve_sharding(sharding)
    idx = sharding.devices_indices_map(shape)
    bufs, seen = [], {}
    once = sharding.is_fully_replicated
    for d in sharding._device_assignment:
        if not _addressable(d):
            bufs.append(None)
            continue
        key = tuple((s.start, s.stop) for s in idx[d])
        if key in seen and not once:
            data_callback(idx[d])   # (JAX asks every device; replicas keep the first buffer)
        if key not in seen:
            b, _, immutable = _host_value(data_callback(idx[d]))
            if not immutable and dtype is None:
                b = np.array(b, copy=True)   # (callbacks often return views of the caller's data)
            want = tuple(len(range(*s.indices(n))) for s, n in zip(idx[d], shape))
            if b.shape != want:
                raise ValueError(f"make_array_from_callback: the data_callback returned a "
                                 f"shard of shape {b.shape} for index {idx[d]}, expected "
                                 f"{want}.")
            seen[key] = np.array(b, dtype=dtype) if dtype is not None else b
        bufs.append(seen[key])
    aval = ShapedArray(shape, next(b for b in bufs if b is not None).dtype)
    return _sa.from_buffers(aval, sharding, bufs)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """An array of ``shape`` with ``sharding`` made of the given per-device arrays (one per
    addressable device, each already on its device; under jax.distributed, one per device
    of this process)."""
    shape = tuple(int(s) for s in shape)
    sharding = resolve_sharding(sharding)
    by_dev = {}
    for a in arrays:
        if not isinstance(a, ArrayImpl):
            raise TypeError("make_array_from_single_device_arrays expects jax Arrays placed "
                            f"on single devices, got {type(a).__name__}")
        by_dev[next(iter(a.sharding.device_set))] = a
    missing = [d for d in sharding._device_assignment if d not in by_dev and _addressable(d)]
    if missing:
        raise ValueError(f"make_array_from_single_device_arrays: no array given for devices "
                         f"{missing} of the sharding {sharding!r}")
    idx = sharding.devices_indices_map(shape)
    bufs, weak = [], False
    for d in sharding._device_assignment:
        if not _addressable(d):
            bufs.append(None)
            continue
        b = by_dev[d]._value
        weak = by_dev[d].weak_type
        want = tuple(len(range(*s.indices(n))) for s, n in zip(idx[d], shape))
        if b.shape != want:
            raise ValueError(f"Expected shard shape {want} doesn't match the single device "
                             f"array shape {b.shape}. Shape of Array is {ShapedArray(shape, b.dtype).str_short(False)} "
                             f"with sharding {sharding!r}")
        bufs.append(b)
    dt = next(b for b in bufs if b is not None).dtype
    return _sa.from_buffers(ShapedArray(shape, dt, weak), sharding, bufs)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """An array with ``sharding`` from this process's data: in one process all of it; under
    jax.distributed the block of the global array that this process's devices hold (the
    global shape is inferred when not given: each dimension split over the processes grows
    by the number of blocks the other processes hold)."""
    v = _host_value(local_data)[0]
    sharding = resolve_sharding(sharding)
    if _devices.process_count() == 1:
        if global_shape is not None and tuple(global_shape) != v.shape:
            raise ValueError(f"global_shape {tuple(global_shape)} differs from the local "
                             f"data's shape {v.shape} in a single-process run.")
        return _put_leaf(v, sharding)
    if global_shape is None:
        global_shape = _infer_global_shape(sharding, v.shape)
    global_shape = tuple(int(s) for s in global_shape)
    check_congruent(sharding, global_shape, "make_array_from_process_local_data args")
    idx = sharding.devices_indices_map(global_shape)
    local = [d for d in sharding._device_assignment if _addressable(d)]
    origin, extent = [], []
    for k, n in enumerate(global_shape):
        lo = min(idx[d][k].indices(n)[0] for d in local)
        hi = max(idx[d][k].indices(n)[1] for d in local)
        origin.append(lo)
        extent.append(hi - lo)
    if tuple(extent) != v.shape:
        raise ValueError(f"make_array_from_process_local_data: this process's devices hold "
                         f"a block of shape {tuple(extent)} of the global shape "
                         f"{global_shape} under {sharding!r}, but the local data has shape "
                         f"{v.shape}.")

    def block(index):
        return v[tuple(slice(s.indices(n)[0] - o, s.indices(n)[1] - o)
                       for s, n, o in zip(index, global_shape, origin))]
    return make_array_from_callback(global_shape, sharding, block)


def _infer_global_shape(sharding, local_shape):
    """The global shape whose blocks held by this process's devices form ``local_shape``."""
    probe = tuple(max(1, s) * sharding.num_devices for s in local_shape)
    try:
        idx = sharding.devices_indices_map(probe)
    except Exception:   # noqa: BLE001 - rank mismatch: JAX's message from check_congruent
        check_congruent(sharding, local_shape, "make_array_from_process_local_data args")
        raise
    out = []
    for k, n in enumerate(probe):
        every = {idx[d][k].indices(n)[:2] for d in sharding._device_assignment}
        mine = {idx[d][k].indices(n)[:2] for d in sharding._device_assignment
                if _addressable(d)}
        if local_shape[k] * len(every) % len(mine):
            raise ValueError(f"make_array_from_process_local_data: cannot infer the global "
                             f"shape of dimension {k}; pass global_shape.")
        out.append(local_shape[k] * len(every) // len(mine))
    return tuple(out)


def default_device(device):
    """Context manager: uncommitted arrays created inside live on ``device``."""
    return _devices.default_device_context(device)


def make_single_device_sharding(device, *, memory_kind=None):
    """The SingleDeviceSharding of ``device`` (in memory ``memory_kind``: None, 'device',
    'pinned_host' or 'unpinned_host')."""
    if memory_kind is not None:
        return SingleDeviceSharding(device, memory_kind=memory_kind)
    from jaxlite._src.runtime.array import single_device_sharding
    return single_device_sharding(device)
