"""jaxlite.scipy.spatial (mirrors ``jax.scipy.spatial``). Re-exports only."""
from jaxlite.scipy.spatial import transform as transform  # noqa: F401
