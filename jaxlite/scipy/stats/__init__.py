"""jaxlite.scipy.stats (mirrors ``jax.scipy.stats``). Re-exports only."""
from jaxlite._src.scipy.stats import *  # noqa: F401,F403
