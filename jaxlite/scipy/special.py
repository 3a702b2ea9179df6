"""jaxlite.scipy.special (mirrors ``jax.scipy.special``). Re-exports only."""
from jaxlite._src.scipy.special import *  # noqa: F401,F403
from jaxlite._src.scipy.special_fresnel import fresnel as fresnel  # noqa: F401
