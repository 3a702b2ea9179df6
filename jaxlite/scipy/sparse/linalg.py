"""jaxlite.scipy.sparse.linalg (mirrors ``jax.scipy.sparse.linalg``): Krylov solvers.
Re-exports only."""
from jaxlite._src.scipy.sparse_linalg import bicgstab as bicgstab  # noqa: F401
from jaxlite._src.scipy.sparse_linalg import cg as cg  # noqa: F401
from jaxlite._src.scipy.sparse_linalg import gmres as gmres  # noqa: F401
