"""jax.experimental.colocated_python.serialization (private names included). Re-exports
only."""
import sys as _sys

from jaxlite._src.colocated_python import serialization as _impl

# (the implementation module itself, so that a library wrapping a reducer is heard)
_sys.modules[__name__] = _impl
