"""jaxlite.nn.initializers (mirrors ``jax.nn.initializers``). Re-exports only."""
from jaxlite._src.nn.initializers import *  # noqa: F401,F403
