"""jaxlite.distributed (mirrors ``jax.distributed``): several processes, one program, over
MPI. Launch with ``mpiexec -n 2 python script.py`` and call ``initialize()`` first.
Re-exports only."""
from jaxlite._src.runtime.mpi import initialize, shutdown, is_initialized  # noqa: F401
