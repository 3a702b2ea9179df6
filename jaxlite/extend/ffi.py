"""jaxlite.extend.ffi: the FFI's older home (``from jax.extend.ffi import ffi_call``, as in
the seed slides); the same functions as ``jaxlite.ffi``. Re-exports only."""
from jaxlite._src.ffi import (  # noqa: F401
    build_ffi_lowering_function, ffi_call, ffi_lowering, include_dir, pycapsule,
    register_ffi_target)
