"""jaxlite.extend.linear_util (mirrors ``jax.extend.linear_util``). Re-exports only."""
from jaxlite._src.extend.linear_util import (  # noqa: F401
    WrappedFun, wrap_init, Store, merge_linear_aux)
