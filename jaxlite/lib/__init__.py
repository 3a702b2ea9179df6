"""jaxlite.lib (the seed-era ``jax.lib``): ``xla_bridge.get_backend()``. Re-exports only."""
from jaxlite.lib import xla_bridge  # noqa: F401
# the jaxlib release matching the JAX whose semantics jaxlite follows (libraries compare it)
from jaxlite._src.import_hook import JAX_API_VERSION as __version__  # noqa: F401,E402
