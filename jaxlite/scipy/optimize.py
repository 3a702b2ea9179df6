"""jaxlite.scipy.optimize (mirrors ``jax.scipy.optimize``). Re-exports only."""
from jaxlite._src.scipy.optimize import OptimizeResults as OptimizeResults  # noqa: F401
from jaxlite._src.scipy.optimize import minimize as minimize  # noqa: F401
