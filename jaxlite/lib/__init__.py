"""jaxlite.lib (the seed-era ``jax.lib``): ``xla_bridge.get_backend()``. Re-exports only."""
from jaxlite.lib import xla_bridge  # noqa: F401
