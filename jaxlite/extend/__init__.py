"""jaxlite.extend (mirrors ``jax.extend``): APIs for libraries that extend jaxlite."""
from jaxlite.extend import ffi  # noqa: F401
