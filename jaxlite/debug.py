"""jaxlite.debug (mirrors ``jax.debug``). Re-exports only."""
from jaxlite._src.debugging.visualize import (  # noqa: F401
    visualize_array_sharding, visualize_sharding)
