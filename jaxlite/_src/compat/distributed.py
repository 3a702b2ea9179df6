"""``jax._src.distributed``: the state of a multi-process run, ``global_state``, which
libraries read (orbax-checkpoint: ``global_state.process_id``, and ``global_state.client`` to
tell whether JAX's coordination service is up).

jaxlite's processes find each other and communicate over MPI (``jax.distributed``), not
through JAX's coordination service: ``client`` and ``service`` are always None, so libraries
take their path for a run without that service (orbax then synchronises processes with
``multihost_utils.sync_global_devices``, which jaxlite runs over MPI). ``process_id`` and
``num_processes`` are this run's, live.
"""
from __future__ import annotations

from jaxlite._src.runtime import devices as _devices
from jaxlite._src.runtime.mpi import initialize, is_initialized, shutdown

__all__ = ["State", "global_state", "initialize", "is_initialized", "shutdown"]


class State:
    """``jax._src.distributed.State`` as jaxlite has it: the process index and count of the
    run; no coordination-service client, service, preemption manager or coordinator address
    (MPI wires jaxlite's processes)."""
    service = None
    client = None
    preemption_sync_manager = None
    coordinator_address = None
    partition_index = None

    @property
    def process_id(self) -> int:
        """This process's index (0 in a single-process run)."""
        return _devices.process_index()

    @property
    def num_processes(self) -> int:
        """The number of processes of the run (1 without ``jax.distributed``)."""
        return _devices.process_count()

    def initialize(self, *args, **kwargs):
        """``jax.distributed.initialize`` (over MPI; see jaxlite.distributed)."""
        return initialize(*args, **kwargs)

    def shutdown(self):
        """``jax.distributed.shutdown``."""
        return shutdown()


global_state = State()
