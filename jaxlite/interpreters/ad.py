"""jaxlite.interpreters.ad (mirrors ``jax.interpreters.ad``). Re-exports only."""
from jaxlite._src.extend.ad import *  # noqa: F401,F403
