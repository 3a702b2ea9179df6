"""``jax._src.xla_bridge``: the backend functions, and ``_backends`` (the backends created
so far, by platform: empty until a JAX operation creates the CPU backend), which libraries
read to tell whether the device count can still change (chex's ``set_n_cpu_devices``)."""
from jaxlite._src.runtime import devices as _devices
from jaxlite._src.runtime.devices import (  # noqa: F401
    get_backend, devices, local_devices, device_count, local_device_count, default_backend,
    process_index, process_count, backend_started)


def __getattr__(name):
    if name == "_backends":
        return {"cpu": _devices.backend()} if _devices.backend_started() else {}
    raise AttributeError(f"module 'jax._src.xla_bridge' (jaxlite) has no attribute {name!r}")
