"""jax.experimental.colocated_python.obj. Re-exports only."""
from jaxlite._src.colocated_python.obj import (  # noqa: F401
    wrap_class)
from jaxlite._src.colocated_python.obj_backend import SINGLETON_OBJECT_STORE  # noqa: F401
