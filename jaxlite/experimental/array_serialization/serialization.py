"""jaxlite.experimental.array_serialization.serialization (mirrors JAX's module of that name):
the asynchronous checkpoint manager and the zarr-format helpers. Re-exports only."""
from jaxlite._src.array_serialization.serialization import (  # noqa: F401
    _DEFAULT_DRIVER,
    TS_CONTEXT,
    AsyncManager,
    BarrierTimeoutError,
    GlobalAsyncCheckpointManager,
    GlobalAsyncCheckpointManagerBase,
    _get_metadata,
    _LimitInFlightBytes,
    async_deserialize,
    async_serialize,
    get_tensorstore_spec,
    is_remote_storage,
    run_deserialization,
    run_serialization,
)
