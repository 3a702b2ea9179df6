"""Serialization of colocated Python functions and their specs (JAX's
``colocated_python/serialization.py``).

JAX ships a colocated function to the hosts of its devices as a cloudpickle of the function
and its specialization, with meshes, shardings and device lists reduced to device ids that
are looked up among the CPU devices when unpickled; on a CPU backend it unpickles that copy
in the calling process and runs it. jaxlite does the same: a colocated function always runs
on a deserialized copy (so what it closes over is copied, as in JAX). As in JAX, this needs
cloudpickle, and raises ``ModuleNotFoundError`` without it.
"""
from __future__ import annotations

import collections
import io

import numpy as np

from jaxlite._src.runtime import devices as _devices
from jaxlite._src.sharding.mesh import Mesh
from jaxlite._src.sharding.shardings import NamedSharding, SingleDeviceSharding

try:
    import cloudpickle
except ImportError:       # (JAX's own behaviour: colocated Python then raises when used)
    cloudpickle = None

__all__ = ["DeviceList", "_serialize", "_deserialize", "_reduce_mesh",
           "_reduce_named_sharding", "_reduce_device_list", "_reduce_single_device_sharding",
           "_get_cpu_device_map", "_lookup_cpu_device"]


class DeviceList(tuple):
    """An ordered, hashable list of devices (``xla_client.DeviceList``)."""
    __slots__ = ()

    @property
    def addressable_device_list(self):
        """The devices of this list that this process addresses."""
        pi = _devices.process_index()
        return DeviceList(d for d in self if d.process_index == pi)

    @property
    def device_kind(self):
        """The kind of the devices ("cpu")."""
        return self[0].device_kind if self else None


def _get_cpu_device_map():
    """{device id: CPU device} of the backend (every jaxlite device is a CPU device)."""
    return {d.id: d for d in _devices.devices() if d.device_kind == "cpu"}


def _lookup_cpu_device(cpu_device_map, device_id):
    """The CPU device with id ``device_id``; JAX's ValueError when there is none."""
    d = cpu_device_map.get(device_id)
    if d is None:
        raise ValueError(f"Invalid device ID {device_id}. Device list must contain only CPU "
                         "devices.")
    return d


def _reduce_mesh(mesh):
    ids = np.vectorize(lambda d: d.id, otypes=[int])(mesh.devices)
    return _unreduce_mesh, (ids, mesh.axis_names, mesh.axis_types)


def _unreduce_mesh(mesh_device_ids, axis_names, axis_types):
    m = _get_cpu_device_map()
    devs = np.vectorize(lambda i: _lookup_cpu_device(m, int(i)), otypes=[object])(
        mesh_device_ids)
    return Mesh(devs, axis_names, axis_types)


def _reduce_named_sharding(sharding):
    return _unreduce_named_sharding, (_reduce_mesh(sharding.mesh), sharding.spec,
                                      sharding.memory_kind)


def _unreduce_named_sharding(reduced_mesh, spec, memory_kind):
    return NamedSharding(reduced_mesh[0](*reduced_mesh[1]), spec, memory_kind=memory_kind)


def _reduce_device_list(device_list):
    return _unreduce_device_list, ([d.id for d in device_list],)


def _unreduce_device_list(device_ids):
    m = _get_cpu_device_map()
    return DeviceList(_lookup_cpu_device(m, int(i)) for i in device_ids)


def _reduce_single_device_sharding(sharding):
    return _unreduce_single_device_sharding, (next(iter(sharding.device_set)).id,
                                              sharding.memory_kind)


def _unreduce_single_device_sharding(device_id, memory_kind):
    return SingleDeviceSharding(_lookup_cpu_device(_get_cpu_device_map(), device_id),
                                memory_kind=memory_kind)


def _serialize(obj):
    """cloudpickle of ``obj`` with meshes, shardings and device lists by device id (only
    for colocated Python's own use: the bytes are consumed at once, never persisted)."""
    if cloudpickle is None:
        raise ModuleNotFoundError('No module named "cloudpickle"')
    mod = globals()    # (the reducers are looked up at each call: libraries wrap them)

    class _CustomPickler(cloudpickle.Pickler):
        dispatch_table = collections.ChainMap(
            {Mesh: lambda m: mod["_reduce_mesh"](m)},
            {NamedSharding: lambda s: mod["_reduce_named_sharding"](s)},
            {DeviceList: lambda d: mod["_reduce_device_list"](d)},
            {SingleDeviceSharding: lambda s: mod["_reduce_single_device_sharding"](s)},
            cloudpickle.CloudPickler.dispatch_table)
        dispatch = dispatch_table

    with io.BytesIO() as f:
        _CustomPickler(f).dump(obj)
        return f.getvalue()


def _deserialize(serialized):
    """The object ``_serialize`` pickled."""
    if cloudpickle is None:
        raise ModuleNotFoundError('No module named "cloudpickle"')
    return cloudpickle.loads(serialized)
