"""jaxlite.example_libraries.optimizers (mirrors ``jax.example_libraries.optimizers``).
Re-exports only."""
from jaxlite._src.example_libraries.optimizers import *  # noqa: F401,F403
