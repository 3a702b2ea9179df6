"""jaxlite.experimental.colocated_python (mirrors ``jax.experimental.colocated_python``).
Re-exports only."""
from jaxlite._src.colocated_python.api import (  # noqa: F401
    colocated_cpu_devices, colocated_python, colocated_python_class)
from jaxlite.experimental.colocated_python import (  # noqa: F401
    api, func, obj, serialization)
