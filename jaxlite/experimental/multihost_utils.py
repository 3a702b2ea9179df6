"""jaxlite.experimental.multihost_utils (mirrors ``jax.experimental.multihost_utils``).
Re-exports only."""
from jaxlite._src.api.multihost import (  # noqa: F401
    process_allgather, broadcast_one_to_all, sync_global_devices,
    host_local_array_to_global_array, global_array_to_host_local_array, assert_equal,
    live_devices, reached_preemption_sync_point, ProcessFailureError)
