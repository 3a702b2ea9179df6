"""jax.experimental.colocated_python.api. Re-exports only."""
from jaxlite._src.colocated_python.api import *  # noqa: F401,F403
from jaxlite._src.colocated_python.api import (  # noqa: F401
    colocated_cpu_devices, colocated_python, colocated_python_class)
