"""jaxlite.scipy.sparse (mirrors ``jax.scipy.sparse``). Re-exports only."""
from jaxlite.scipy.sparse import linalg as linalg  # noqa: F401
