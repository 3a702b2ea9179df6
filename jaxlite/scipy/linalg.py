"""jaxlite.scipy.linalg (mirrors ``jax.scipy.linalg``): factorizations, solvers, matrix
functions and special matrices. Re-exports only."""
from jaxlite._src.scipy.linalg import *  # noqa: F401,F403
from jaxlite._src.scipy.linalg_matfuncs import *  # noqa: F401,F403
from jaxlite._src.scipy.linalg_special import *  # noqa: F401,F403
