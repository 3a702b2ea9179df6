"""jaxlite.scipy (mirrors ``jax.scipy``). Re-exports only."""
from jaxlite.scipy import linalg as linalg  # noqa: F401
from jaxlite.scipy import special as special  # noqa: F401
from jaxlite.scipy import stats as stats  # noqa: F401
