"""jaxlite.experimental.sparse (mirrors ``jax.experimental.sparse``): the BCOO sparse
format. Re-exports only."""
from jaxlite._src.sparse.bcoo import (  # noqa: F401
    BCOO, bcoo_fromdense, bcoo_todense, bcoo_dot_general)
