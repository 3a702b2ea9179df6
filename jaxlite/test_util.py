"""jaxlite.test_util (mirrors ``jax.test_util``). Re-exports only."""
from jaxlite._src.test_util import check_grads, check_jvp, check_vjp  # noqa: F401
