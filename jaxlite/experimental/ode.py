"""jaxlite.experimental.ode (mirrors ``jax.experimental.ode``). Re-exports only."""
from jaxlite._src.ode import odeint  # noqa: F401
