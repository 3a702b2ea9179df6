"""jaxlite.scipy.cluster.vq (mirrors ``jax.scipy.cluster.vq``). Re-exports only."""
from jaxlite._src.scipy.cluster import vq as vq  # noqa: F401
