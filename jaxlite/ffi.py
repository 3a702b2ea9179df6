"""jaxlite.ffi (mirrors ``jax.ffi``): register compiled XLA FFI handlers and call them.
Re-exports only; jaxlite implements XLA's FFI C ABI itself (jaxlite/_src/runtime/xla_ffi.py)."""
from jaxlite._src.ffi import (  # noqa: F401
    build_ffi_lowering_function, ffi_call, ffi_lowering, include_dir, pycapsule,
    register_ffi_target, register_ffi_target_as_batch_partitionable, register_ffi_type,
    register_ffi_type_id)
