"""jaxlite.numpy.linalg (mirrors ``jax.numpy.linalg``). Re-exports only."""
from jaxlite._src.numpy.linalg import *  # noqa: F401,F403
