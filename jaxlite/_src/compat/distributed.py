"""``jax._src.distributed``: the state of a multi-process run, ``global_state``, which
libraries read (orbax-checkpoint: ``global_state.process_id``, and ``global_state.client`` for
barriers and small messages between processes).

jaxlite's processes find each other and compute over MPI (``jax.distributed``); the
``client`` is jaxlite's own key-value store and barriers with the API of JAX's coordination
service client (runtime/coordination.py), present from ``jax.distributed.initialize()`` to
``shutdown()`` and None otherwise. ``process_id`` and ``num_processes`` are this run's, live.
JAX's coordination ``service`` object, preemption manager and coordinator address have no
counterpart (None).
"""
from __future__ import annotations

from jaxlite._src.runtime import coordination as _coordination
from jaxlite._src.runtime import devices as _devices
from jaxlite._src.runtime.mpi import initialize, is_initialized, shutdown

__all__ = ["State", "global_state", "initialize", "is_initialized", "shutdown"]


class State:
    """``jax._src.distributed.State`` as jaxlite has it: the process index and count of the
    run and its coordination client; no coordination service object, preemption manager or
    coordinator address (MPI wires jaxlite's processes)."""
    service = None
    preemption_sync_manager = None
    coordinator_address = None
    partition_index = None

    @property
    def client(self):
        """The run's DistributedRuntimeClient (None outside ``jax.distributed``)."""
        return _coordination.client()

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
