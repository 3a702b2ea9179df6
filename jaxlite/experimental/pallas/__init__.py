"""jaxlite.experimental.pallas (mirrors ``jax.experimental.pallas``): custom kernels over refs,
run in interpret mode. Re-exports only."""
from jaxlite._src.pallas.core import (  # noqa: F401
    Blocked, BlockSpec, BoundedSlice, Buffered, CompilerParams, CostEstimate, Element, GridSpec,
    MemoryRef, MemorySpace, NoBlockSpec, Squeezed, align_to, cdiv, next_power_of_2, no_block_spec,
    squeezed, strides_from_shape)
from jaxlite._src.pallas.helpers import (  # noqa: F401
    atomic_add, atomic_and, atomic_cas, atomic_max, atomic_min, atomic_or, atomic_xchg,
    atomic_xor, broadcast_to, debug_print, empty, empty_like, load, loop, max_contiguous,
    multiple_of, num_programs, program_id, reciprocal, run_scoped, store, when, with_scoped)
from jaxlite._src.pallas.pallas_call import pallas_call, pallas_call_p  # noqa: F401
from jaxlite._src.prims.state import Slice, ds, dslice  # noqa: F401

ANY = MemorySpace.ANY
HOST = MemorySpace.HOST

