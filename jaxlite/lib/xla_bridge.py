"""jaxlite.lib.xla_bridge (the seed-era ``jax.lib.xla_bridge``). Re-exports only."""
from jaxlite._src.runtime.devices import (  # noqa: F401
    get_backend, devices, local_devices, device_count, local_device_count, default_backend,
    process_index, process_count)
