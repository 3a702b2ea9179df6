"""jaxlite.experimental.compute_on (mirrors ``jax.experimental.compute_on``). Re-exports
only."""
from jaxlite._src.api.compute_on import compute_on, compute_on2  # noqa: F401
