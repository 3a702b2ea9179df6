"""jaxlite.experimental.pjit (mirrors ``jax.experimental.pjit``; ``pjit`` is deprecated in
favour of ``jax.jit``, and warns when accessed, as in JAX). Re-exports only."""
from jaxlite._src.api.pjit import PJIT_DEPRECATION as _MSG, pjit as _pjit


def __getattr__(name):
    if name == "pjit":
        import warnings
        warnings.warn(_MSG, DeprecationWarning, stacklevel=2)
        return _pjit
    raise AttributeError(f"module 'jaxlite.experimental.pjit' has no attribute '{name}'")
