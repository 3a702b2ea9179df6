"""jaxlite.experimental.pallas.triton (``plgpu`` for Triton kernels): masked loads and
stores, atomics and hints, run in interpret mode. Re-exports only."""
from jaxlite._src.pallas.helpers import (  # noqa: F401
    atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg,
    atomic_xor, load, max_contiguous, store)
from jaxlite._src.pallas.pallas_tpu import TritonCompilerParams as CompilerParams  # noqa: F401
