"""jaxlite.lax.linalg (mirrors ``jax.lax.linalg``). Re-exports only."""
from jaxlite._src.lax.linalg import *  # noqa: F401,F403
