"""jaxlite.scipy.cluster (mirrors ``jax.scipy.cluster``). Re-exports only."""
from jaxlite.scipy.cluster import vq as vq  # noqa: F401
