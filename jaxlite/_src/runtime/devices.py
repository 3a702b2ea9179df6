"""Logical CPU devices and the single-device sharding of ordinary arrays.

The number of CPU devices comes from ``JAXLITE_NUM_CPU_DEVICES`` or from
``XLA_FLAGS=--xla_force_host_platform_device_count=N`` (default 1).
"""
from __future__ import annotations

import os
import re

__all__ = ["CpuDevice", "devices", "local_devices", "device_count", "local_device_count",
           "SingleDeviceSharding", "default_backend", "process_index", "process_count"]


class CpuDevice:
    """A logical CPU device, printed as JAX prints it: ``CpuDevice(id=0)``."""
    __slots__ = ("id",)
    platform = "cpu"
    device_kind = "cpu"
    process_index = 0
    client = None

    def __init__(self, id: int):
        self.id = id

    @property
    def host_id(self):
        return 0

    @property
    def local_hardware_id(self):
        return self.id

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __str__(self):
        return f"cpu:{self.id}"

    def __eq__(self, other):
        return type(other) is CpuDevice and other.id == self.id

    def __hash__(self):
        return hash(("cpu", self.id))


def _num_devices() -> int:
    n = os.environ.get("JAXLITE_NUM_CPU_DEVICES")
    if n:
        return max(1, int(n))
    m = re.search(r"--xla_force_host_platform_device_count=(\d+)", os.environ.get("XLA_FLAGS", ""))
    return max(1, int(m.group(1))) if m else 1


_DEVICES = [CpuDevice(i) for i in range(_num_devices())]


def devices(backend=None):
    """All devices (all CPU devices in jaxlite)."""
    _check_backend(backend)
    return list(_DEVICES)


def local_devices(process_index=None, backend=None, host_id=None):
    """The devices attached to this process."""
    _check_backend(backend)
    return list(_DEVICES)


def device_count(backend=None):
    """Number of devices."""
    return len(_DEVICES)


def local_device_count(backend=None):
    """Number of devices attached to this process."""
    return len(_DEVICES)


def default_backend():
    """The default backend's platform name: always ``'cpu'``."""
    return "cpu"


def process_index(backend=None):
    """This process's index among all processes (0 without jaxlite.distributed)."""
    return 0


def process_count(backend=None):
    """The number of processes (1 without jaxlite.distributed)."""
    return 1


def _check_backend(backend):
    if backend not in (None, "cpu") and not (hasattr(backend, "platform")):
        raise RuntimeError(f"Unknown backend {backend}: jaxlite only has the 'cpu' backend "
                           "(available: cpu).")


class SingleDeviceSharding:
    """The sharding of an array that lives wholly on one device."""
    __slots__ = ("_device", "memory_kind")

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self.memory_kind = memory_kind

    @property
    def device_set(self):
        return {self._device}

    @property
    def num_devices(self):
        return 1

    @property
    def is_fully_replicated(self):
        return True

    @property
    def is_fully_addressable(self):
        return True

    def devices_indices_map(self, global_shape):
        return {self._device: tuple(slice(None) for _ in global_shape)}

    def addressable_devices_indices_map(self, global_shape):
        return self.devices_indices_map(global_shape)

    def shard_shape(self, global_shape):
        return tuple(global_shape)

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("single", self._device))


DEFAULT_SHARDING = SingleDeviceSharding(_DEVICES[0])
