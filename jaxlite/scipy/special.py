"""jaxlite.scipy.special (mirrors ``jax.scipy.special``). Re-exports only."""
from jaxlite._src.scipy.special import *  # noqa: F401,F403
