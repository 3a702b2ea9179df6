"""jaxlite.extend.backend (mirrors ``jax.extend.backend``). Re-exports only."""
from jaxlite._src.extend.backend import (  # noqa: F401
    backends, get_backend, clear_backends, backend_xla_version, get_default_device,
    clear_in_memory_compilation_cache, get_compile_options, register_backend_factory,
    register_backend_cache)
