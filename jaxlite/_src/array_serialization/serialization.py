"""Asynchronous checkpointing of arrays (``jax.experimental.array_serialization.serialization``).

``GlobalAsyncCheckpointManager.serialize`` copies every array's shards out to TensorStore on
the calling thread, then commits them to storage on a background thread and runs an
``on_commit_callback`` (e.g. renaming a temporary directory to its final name) once all data
is durable; ``wait_until_finished`` joins that thread and re-raises what failed in it.
``deserialize`` reads arrays back for given shardings. The older zarr format is the default
here (``get_tensorstore_spec`` of this module), as in JAX.
"""
from __future__ import annotations

import abc
import asyncio
import functools
import itertools
import logging
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from jaxlite._src import monitoring, tree_util
from jaxlite._src.array_serialization import tensorstore_impl as ts_impl
from jaxlite._src.core.errors import JaxRuntimeError
from jaxlite._src.runtime import coordination as _coordination
from jaxlite._src.runtime import devices as _devices

__all__ = [
    "TS_CONTEXT",
    "AsyncManager",
    "BarrierTimeoutError",
    "GlobalAsyncCheckpointManager",
    "GlobalAsyncCheckpointManagerBase",
    "async_deserialize",
    "async_serialize",
    "get_tensorstore_spec",
    "is_remote_storage",
    "run_deserialization",
    "run_serialization",
]

# names JAX's serialization module keeps for code written before tensorstore_impl existed
TS_CONTEXT = ts_impl._TS_CONTEXT
_DEFAULT_DRIVER = ts_impl._DEFAULT_BASE_DRIVER
_LimitInFlightBytes = ts_impl._LimitInFlightBytes
async_serialize = ts_impl.async_serialize
async_deserialize = ts_impl.async_deserialize
run_serialization = ts_impl._run_serialization
run_deserialization = ts_impl._run_deserialization

# the zarr (v2) format, which this module wrote before zarr3 became tensorstore_impl's default
_get_metadata = functools.partial(ts_impl._get_tensorstore_metadata, driver="zarr")
get_tensorstore_spec = functools.partial(ts_impl.get_tensorstore_spec, driver="zarr",
                                         ocdbt=False)

_CHECKPOINT_SUCCESS = "checkpoint_write_success"
_module_unique_count = itertools.count()
_DISTRIBUTED_SYSTEM_MSG = ("Please initialize the distributed system via "
                           "`jax.distributed.initialize()` at the start of your program.")
_REMOTE_URL_PREFIXES = ["gs://", "s3://"]
_REMOTE_DRIVERS = ("gcs", "s3")

logger = logging.getLogger(__name__)


class BarrierTimeoutError(Exception):
    """The processes of a multi-process checkpoint did not all reach the commit barrier."""


_BARRIER_TIMED_OUT_MSG = (
    "Suggestions for possible fixes:\n"
    "* Check the logs to see if one or more processes failed.\n"
    "* Make sure the training and checkpointing endpoints are close geographically.\n"
    "* Try increasing the timeout you pass to GlobalAsyncCheckpointManager.")


def is_remote_storage(tspec: dict[str, Any] | str) -> bool:
    """Whether a TensorStore spec (or a kvstore URL) points at cloud storage (GCS or S3).
    Common spellings only: a bucket mounted as a local path (gcsfuse) is not recognised."""
    if isinstance(tspec, str):
        return re.match(f"^({'|'.join(_REMOTE_URL_PREFIXES)})", tspec) is not None
    for key in ("base", "kvstore"):
        if key in tspec:
            return is_remote_storage(tspec[key])
    return tspec.get("driver") in _REMOTE_DRIVERS


def _get_key(key: int) -> str:
    return f"tensorstore_checkpoint_{key}"


class GlobalAsyncCheckpointManagerBase(abc.ABC):
    """The interface of an asynchronous array checkpointer.

    It holds the state of the checkpoint in flight: a checkpoint of step 2 waits until the
    one of step 1 is committed. A simplified training loop::

        manager = GlobalAsyncCheckpointManager()
        train_state = manager.deserialize(...)      # or a fresh init
        while ...:
            if step % steps_between_checkpoints == 0:
                manager.serialize(train_state, tensorstore_specs,
                                  on_commit_callback=...)
            train_state = train_step(train_state, batch)
            manager.check_for_errors()                  # does not block
        manager.serialize(train_state, ...)
        manager.wait_until_finished()                   # blocks
    """
    __slots__ = ()

    @abc.abstractmethod
    def check_for_errors(self):
        """Raise, in the calling thread, an error raised by the commit thread (no waiting)."""

    @abc.abstractmethod
    def wait_until_finished(self):
        """Block until the checkpoint in flight is committed."""

    @abc.abstractmethod
    def serialize(self, arrays, tensorstore_specs, *, on_commit_callback: Callable[[], None]):
        """Write ``arrays`` to the TensorStore specs."""

    @abc.abstractmethod
    def deserialize(self, shardings: Sequence, tensorstore_specs: Sequence[dict[str, Any]],
                    global_shapes: Sequence | None = None, dtypes: Sequence | None = None):
        """Read arrays from the TensorStore specs, placed by ``shardings``."""


class AsyncManager:
    """Commits TensorStore writes on a background thread, then runs the commit callback
    (on process 0); errors of that thread surface in ``check_for_errors`` and
    ``wait_until_finished``."""

    def __init__(self, timeout_secs=300):
        self._timeout_secs = timeout_secs
        self._timeout_in_ms = timeout_secs * 1000
        self._commit_futures = None
        self._thread = None
        self._exception = None
        self._on_commit_callback = None
        self._count: int | None = None
        client = _coordination.client()
        if _devices.process_count() > 1 and client is None:
            raise ValueError(_DISTRIBUTED_SYSTEM_MSG)
        self._client = client

    def __del__(self):
        if self._thread is not None and self._thread.is_alive():
            logger.warning("Please add `.wait_until_finished()` in the main thread before "
                           "your program finishes because there is a possibility of losing "
                           "errors raised if the this class is deleted before writing is "
                           "completed.")

    def _thread_func(self):
        try:
            process = _devices.process_index()
            nproc = _devices.process_count()
            logger.info("Starting commit to storage layer by process: %s", process)
            start = time.time()
            for future in self._commit_futures:
                future.result()
            logger.info("Finished committing to storage layer by process: %s", process)
            key = None
            if nproc > 1:
                # every process waits here until all have committed (or the timeout)
                key = _get_key(self._count)
                logger.info("Key used for barrier is %s for process %s", key, process)
                self._client.wait_at_barrier(key, self._timeout_in_ms)
                logger.info("Finished waiting at barrier for process %s", process)
            if process == 0:
                if self._on_commit_callback is not None:
                    self._on_commit_callback()
                    logger.info("on_commit_callback successfully ran!")
                if nproc > 1:
                    self._client.key_value_set(key, _CHECKPOINT_SUCCESS)
                    logger.info("Process 0 successfully set key %s in the kv store", key)
            monitoring.record_event_duration_secs(
                "/jax/checkpoint/write/async/thread_duration_sec", time.time() - start)
        except Exception as e:  # noqa: BLE001  (re-raised by check_for_errors)
            self._exception = e

    def _start_async_commit(self, on_commit_callback):
        self._count = next(_module_unique_count)
        self._on_commit_callback = on_commit_callback
        self._thread = threading.Thread(target=self._thread_func)
        self._thread.start()

    def check_for_errors(self):
        """Raise (once) the exception the commit thread met, if any; never blocks."""
        if self._exception is None:
            return
        exception, self._exception = self._exception, None
        if isinstance(exception, JaxRuntimeError) and \
                "DEADLINE_EXCEEDED: Barrier timed out" in str(exception):
            raise BarrierTimeoutError("\n".join([str(exception), _BARRIER_TIMED_OUT_MSG]))
        raise exception

    def wait_until_finished(self):
        """Join the commit thread, then raise what it met (``check_for_errors``)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
            logger.info("Thread joined successfully")
        self.check_for_errors()
        logger.info("Error check finished successfully")
        if _devices.process_count() > 1 and self._count is not None:
            # process 0 writes the success key once every process committed and its
            # callback ran: other processes finish only then
            key = _get_key(self._count)
            self._client.blocking_key_value_get(key, self._timeout_in_ms)
            logger.info("blocking_key_value_get on key %s was successfully completed.", key)

    def _add_futures(self, futures: Sequence):
        self._commit_futures = futures


class GlobalAsyncCheckpointManager(AsyncManager, GlobalAsyncCheckpointManagerBase):
    """Serializes arrays with TensorStore, committing in the background."""

    def serialize(self, arrays, tensorstore_specs, *,
                  on_commit_callback: Callable[[], None] | None = None, transaction=None):
        """Write ``arrays`` (a list, or a pytree matched by ``tensorstore_specs``) to their
        TensorStore specs asynchronously.

        TensorStore writes in two steps: the data is copied out of each array (done when this
        returns: the arrays may then change or be deleted), then committed to storage on a
        background thread. ``on_commit_callback`` runs (on process 0) after everything is
        committed: on a file system it can rename a temporary directory to the final one; on
        GCS, which has no atomic rename, it can write a success marker. ``transaction``: a
        TensorStore transaction to write in. Waits first for the previous checkpoint.
        """
        logger.info("Waiting for previous serialization to finish.")
        self.wait_until_finished()
        commit_futures: list = []

        async def run():
            writes = tree_util.tree_map(
                lambda arr, spec: ts_impl.async_serialize(
                    arr, spec, commit_future=commit_futures, transaction=transaction),
                arrays, tensorstore_specs)
            return await asyncio.gather(*tree_util.tree_leaves(writes))
        asyncio.run(run())
        self._add_futures(commit_futures)
        self._start_async_commit(on_commit_callback)

    def serialize_with_paths(self, arrays: Sequence, paths: Sequence[str], *,
                             on_commit_callback: Callable[[], None] | None = None,
                             transaction=None):
        """``serialize`` to the zarr stores at ``paths`` (see ``get_tensorstore_spec``)."""
        specs = tree_util.tree_map(get_tensorstore_spec, paths)
        return self.serialize(arrays, specs, on_commit_callback=on_commit_callback,
                              transaction=transaction)

    def deserialize(self, shardings: Sequence, tensorstore_specs: Sequence[dict[str, Any]],
                    global_shapes: Sequence | None = None, dtypes: Sequence | None = None,
                    concurrent_gb: int = 32):
        """Read the arrays of ``tensorstore_specs`` placed by ``shardings`` (Shardings,
        Formats or ShapeDtypeStructs), optionally with other global shapes and dtypes; at
        most ``concurrent_gb`` GB of reads in flight. Waits first for a checkpoint in
        flight."""
        self.wait_until_finished()
        return ts_impl._run_deserialization(shardings, tensorstore_specs, global_shapes,
                                            dtypes, concurrent_gb)

    def deserialize_with_paths(self, shardings: Sequence, paths: Sequence[str],
                               global_shapes: Sequence | None = None,
                               dtypes: Sequence | None = None, concurrent_gb: int = 32):
        """``deserialize`` from the zarr stores at ``paths``."""
        specs = tree_util.tree_map(get_tensorstore_spec, paths)
        return self.deserialize(shardings, specs, global_shapes, dtypes, concurrent_gb)
