"""jaxlite.scipy (mirrors ``jax.scipy``). Re-exports only.

As in JAX, the submodules are loaded on first use (``jaxlite.scipy.special`` works after
``import jaxlite`` alone), so importing jaxlite does not pay for them."""
import importlib as _importlib

_SUBMODULES = ("cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "signal",
               "sparse", "special", "stats")
__all__ = list(_SUBMODULES)


def __getattr__(name):
    if name in _SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")  # binds the attribute too
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
