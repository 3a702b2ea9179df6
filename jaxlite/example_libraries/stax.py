"""jaxlite.example_libraries.stax (mirrors ``jax.example_libraries.stax``). Re-exports only."""
from jaxlite._src.example_libraries.stax import *  # noqa: F401,F403
