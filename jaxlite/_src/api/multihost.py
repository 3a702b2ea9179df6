"""``jax.experimental.multihost_utils``: moving host data between the processes of a
jax.distributed run (runtime/mpi.py). In a single process every function is the identity
(or stacks one copy), as in JAX."""
from __future__ import annotations

import zlib

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.runtime import devices as _devices
from jaxlite._src.runtime import mpi as _mpi
from jaxlite._src.runtime import sharded_array as _sa
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.partition_spec import PartitionSpec
from jaxlite._src.sharding.shardings import NamedSharding

__all__ = ["process_allgather", "broadcast_one_to_all", "sync_global_devices",
           "host_local_array_to_global_array", "global_array_to_host_local_array",
           "assert_equal", "live_devices", "reached_preemption_sync_point",
           "ProcessFailureError"]


class ProcessFailureError(Exception):
    """A process of a multi-controller run failed (raised inside ``live_devices``)."""


class _LiveDevices:
    """``with live_devices(devices) as live:`` runs a block on the devices that are alive.
    jaxlite's processes meet over MPI, which ends the whole run when one fails, so every
    device of a running jax.distributed job is live: ``live`` is ``devices``."""

    def __call__(self, devices):
        import contextlib

        @contextlib.contextmanager
        def ctx():
            if not _mpi.is_initialized():
                raise RuntimeError("Distributed JAX not initialized.")
            yield list(devices)
        return ctx()


live_devices = _LiveDevices()


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether every process has reached the preemption sync point at ``step_id``: always
    False in jaxlite, which receives no preemption notices (JAX's answer when none came)."""
    del step_id
    return False


def _global_value(x):
    """The whole value of an array spanning processes: every process sends its distinct
    shards."""
    if x.is_fully_addressable:
        return np.asarray(x._value)
    try:
        return np.asarray(x._value)          # replicated over the processes: already here
    except RuntimeError:
        pass
    mine = {}
    for s in x.addressable_shards:
        key = tuple((sl.start, sl.stop, sl.step) for sl in s.index)
        mine.setdefault(key, np.asarray(s.data._value))
    parts = _mpi.allgather_object(mine, "multihost_utils.process_allgather")
    out = np.empty(x.shape, x.dtype)
    for part in parts:
        for key, b in part.items():
            out[tuple(slice(*k) for k in key)] = b
    return out


def process_allgather(in_tree, tiled=False):
    """Gather the arrays of ``in_tree`` from every process as NumPy arrays.

    An array spanning processes gives its global value; host-local values (NumPy arrays,
    fully addressable arrays) are stacked along a new leading axis in process order, or
    concatenated along axis 0 with ``tiled=True``."""
    def one(x):
        if isinstance(x, _sa.ShardedArray) and not x.is_fully_addressable:
            return _global_value(x)
        v = np.asarray(x)
        if _devices.process_count() == 1:
            return v if tiled else v[None]
        parts = _mpi.allgather_object(v, "multihost_utils.process_allgather")
        return np.concatenate(parts, 0) if tiled else np.stack(parts)
    return tree_util.tree_map(one, in_tree)


def broadcast_one_to_all(in_tree, is_source=None):
    """The source process's values of ``in_tree`` on every process (NumPy arrays). The
    source is process 0 unless ``is_source`` is True in exactly one process."""
    if is_source is None:
        is_source = _devices.process_index() == 0
    if _devices.process_count() == 1:
        return tree_util.tree_map(np.asarray, in_tree)
    flags = _mpi.allgather_object(bool(is_source), "multihost_utils.broadcast_one_to_all")
    if sum(flags) != 1:
        raise ValueError(f"broadcast_one_to_all needs exactly one source process, got "
                         f"is_source={flags} over the processes.")
    root = flags.index(True)
    leaves, tree = tree_util.tree_flatten(in_tree)
    out = [_mpi.bcast_array(np.ascontiguousarray(np.asarray(v)), root,
                            "multihost_utils.broadcast_one_to_all") for v in leaves]
    return tree_util.tree_unflatten(tree, out)


def assert_equal(in_tree, fail_message=""):
    """Raise AssertionError unless every process holds the same values of ``in_tree``."""
    mine = tree_util.tree_map(np.asarray, in_tree)
    every = _mpi.allgather_object(mine, "multihost_utils.assert_equal")
    ref_leaves, ref_tree = tree_util.tree_flatten(every[0])
    for p, other in enumerate(every[1:], 1):
        leaves, tree = tree_util.tree_flatten(other)
        if tree != ref_tree or any(
                a.shape != b.shape or not np.array_equal(a, b, equal_nan=True)
                for a, b in zip(ref_leaves, leaves)):
            raise AssertionError(f"{fail_message} Expected: {every[0]}; got: {other} "
                                 f"(process {p}).")


def sync_global_devices(name):
    """Block until every process reaches ``sync_global_devices`` with the same ``name``
    (bounded by JAXLITE_COLLECTIVE_TIMEOUT)."""
    if _devices.process_count() == 1:
        return
    h = zlib.crc32(str(name).encode())
    names = _mpi.allgather_object((h, str(name)), f"sync_global_devices({name!r})")
    if len({n for n, _ in names}) > 1:
        raise AssertionError(f"sync_global_devices name mismatch ('{name}'): the processes "
                             f"called it with {[n for _, n in names]}.")


def _specs(pspecs, tree):
    return tree_util.broadcast_prefix(pspecs, tree,
                                      is_leaf=lambda s: isinstance(s, PartitionSpec) or
                                      s is None)


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
    """Arrays spanning the processes from each process's local blocks: a leaf laid out by
    ``pspecs`` over this process's devices of ``global_mesh`` becomes its part of the global
    array (a dimension split over the processes grows by their number)."""
    from jaxlite._src.api.placement import make_array_from_process_local_data
    specs = _specs(pspecs, local_inputs)
    leaves, tree = tree_util.tree_flatten(local_inputs)
    flat_specs = tree_util.tree_leaves(specs, is_leaf=lambda s: isinstance(s, PartitionSpec)
                                       or s is None)
    out = []
    for x, spec in zip(leaves, flat_specs):
        spec = PartitionSpec() if spec is None else spec
        out.append(make_array_from_process_local_data(NamedSharding(global_mesh, spec), x))
    return tree_util.tree_unflatten(tree, out)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
    """The inverse of ``host_local_array_to_global_array``: each process's block of the
    global arrays, as arrays laid out by ``pspecs`` over its own devices."""
    specs = _specs(pspecs, global_inputs)
    leaves, tree = tree_util.tree_flatten(global_inputs)
    flat_specs = tree_util.tree_leaves(specs, is_leaf=lambda s: isinstance(s, PartitionSpec)
                                       or s is None)
    local_mesh = global_mesh.local_mesh
    out = []
    for x, spec in zip(leaves, flat_specs):
        spec = PartitionSpec() if spec is None else spec
        out.append(_local_block(x, global_mesh, local_mesh, spec))
    return tree_util.tree_unflatten(tree, out)


def _local_block(x, mesh, local_mesh, spec):
    if not isinstance(x, ArrayImpl):
        x = ArrayImpl(np.asarray(x), False)
    sharding = NamedSharding(mesh, spec)
    idx = sharding.devices_indices_map(x.shape)
    by_dev = x._shard_buffers() if isinstance(x, _sa.ShardedArray) else None
    me = _devices.process_index()
    local = [d for d in mesh.devices.flat if d.process_index == me]
    lo = [min(idx[d][k].indices(n)[0] for d in local) for k, n in enumerate(x.shape)]
    hi = [max(idx[d][k].indices(n)[1] for d in local) for k, n in enumerate(x.shape)]
    block = np.empty([b - a for a, b in zip(lo, hi)], x.dtype)
    for d in local:
        where = tuple(slice(s.indices(n)[0] - a, s.indices(n)[1] - a)
                      for s, n, a in zip(idx[d], x.shape, lo))
        if by_dev is not None and d in by_dev and \
                (x._sharding == sharding or x._sharding.is_equivalent_to(sharding, x.ndim)):
            block[where] = by_dev[d]
        else:
            block[where] = np.asarray(x._value)[idx[d]]
    block.flags.writeable = False
    return _sa.from_global(block, x.weak_type, NamedSharding(local_mesh, spec))
