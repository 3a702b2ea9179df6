"""jaxlite.experimental.pallas.tpu (``pltpu``): the TPU names that mean something in
interpret mode (memory spaces for scratch buffers, compiler parameters, which interpret mode
records and ignores). Re-exports only."""
from jaxlite._src.pallas.core import SemaphoreType  # noqa: F401
from jaxlite._src.pallas.core import TPUMemorySpace as MemorySpace  # noqa: F401
from jaxlite._src.pallas.helpers import (  # noqa: F401
    async_copy, make_async_copy, sync_copy)
from jaxlite._src.pallas.pallas_tpu import (  # noqa: F401
    ARBITRARY, CORE_PARALLEL, PARALLEL, CompilerParams, GridDimensionSemantics,
    InterpretParams, PrefetchScalarGridSpec)

VMEM = MemorySpace.VMEM
SMEM = MemorySpace.SMEM
HBM = MemorySpace.HBM
CMEM = MemorySpace.CMEM
VMEM_SHARED = MemorySpace.VMEM_SHARED
SEMAPHORE = MemorySpace.SEMAPHORE
