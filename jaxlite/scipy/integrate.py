"""jaxlite.scipy.integrate (mirrors ``jax.scipy.integrate``): trapezoid. Re-exports only."""
from jaxlite._src.scipy.integrate import *  # noqa: F401,F403
