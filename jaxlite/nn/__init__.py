"""jaxlite.nn (mirrors ``jax.nn``). Re-exports only."""
from jaxlite._src.nn.functions import *  # noqa: F401,F403
from jaxlite._src.nn.scaled_matmul import (  # noqa: F401
    scaled_matmul, scaled_dot_general, get_scaled_dot_general_config)
from jaxlite.nn import initializers as initializers  # noqa: F401
