"""``jax.experimental.colocated_python``'s top-level API: ``colocated_cpu_devices``,
``colocated_python`` and ``colocated_python_class``.

In JAX an accelerator device has a colocated CPU device on its host, and colocated Python
runs Python code there, next to the data. Every jaxlite device is a CPU device of this
process, so colocated code runs here (see ``colocated_cpu_devices`` for which device is
whose)."""
from __future__ import annotations

import inspect

import numpy as np

from jaxlite._src.colocated_python.func import make_callable
from jaxlite._src.colocated_python.obj import wrap_class
from jaxlite._src.runtime import devices as _devices
from jaxlite._src.sharding.mesh import Mesh

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]


def colocated_cpu_devices(devices_or_mesh):
    """The CPU devices colocated with the given devices (a list, in order), or a mesh of the
    same shape, axis names and types over them.

    JAX matches devices by their ``colocation_id``; CPU devices have none, and JAX 0.10.2
    then hands each device the next unused CPU device of its process, in device order (so
    ``devices()[2:4]`` map to ``devices()[0:2]``). jaxlite's devices are CPU devices without
    a colocation id too, and map the same way."""
    if isinstance(devices_or_mesh, Mesh):
        mesh = devices_or_mesh
        flat = colocated_cpu_devices(tuple(mesh.devices.flat))
        if all(a is b for a, b in zip(flat, mesh.devices.flat)):
            return mesh
        return Mesh(np.array(flat, dtype=object).reshape(mesh.devices.shape),
                    mesh.axis_names, axis_types=mesh.axis_types)
    devices = tuple(devices_or_mesh)
    pools = {}
    for d in _devices.devices():
        if d.device_kind == "cpu":
            pools.setdefault(d.process_index, []).append(d)
    for pool in pools.values():
        pool.reverse()         # (popped from the end: lowest id first)
    out = []
    for d in devices:
        try:
            out.append(pools.get(d.process_index, []).pop())
        except IndexError:
            raise ValueError(f"Process {d.process_index} does not have enough local CPU "
                             "devices") from None
    return out


def _sourceinfo(fun):
    try:
        return f"{fun.__name__} at {inspect.getsourcefile(fun)}:" \
               f"{inspect.getsourcelines(fun)[1]}"
    except (TypeError, OSError, AttributeError):
        return None


def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def colocated_python(fun):
    """Executes ``fun`` on the same devices as its arguments: the returned callable runs a
    (serialized and deserialized) copy of ``fun`` on the CPU devices colocated with the
    arguments' devices and returns the arrays it gives. Its ``specialize(in_specs=...,
    out_specs_fn=..., devices=...)`` fixes input specs, the output-spec function or the
    devices (needed when the function takes no arrays)."""
    return make_callable(fun, _sourceinfo(fun), _signature(fun))


def colocated_python_class(cls):
    """A wrapper class of ``cls`` whose methods run on the same devices as their arguments,
    on one instance of ``cls`` made at the first method call and kept while the wrapper
    lives."""
    return wrap_class(cls, _sourceinfo(cls))
