"""jaxlite.nn (mirrors ``jax.nn``). Re-exports only."""
from jaxlite._src.nn.functions import *  # noqa: F401,F403
from jaxlite.nn import initializers as initializers  # noqa: F401
