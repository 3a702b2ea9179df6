"""jaxlite.extend (mirrors ``jax.extend``): the extension API (``core.Primitive`` and the
IR), ``linear_util``, ``source_info_util``, and ``ffi``. Re-exports only."""
from jaxlite.extend import backend, core, linear_util, source_info_util  # noqa: F401


def __getattr__(name):
    # jax.extend.ffi lives in its own module (loaded on first use)
    if name == "ffi":
        import importlib
        return importlib.import_module("jaxlite.extend.ffi")
    raise AttributeError(f"module 'jaxlite.extend' has no attribute {name!r}")
