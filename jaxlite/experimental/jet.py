"""jaxlite.experimental.jet (mirrors ``jax.experimental.jet``). Re-exports only."""
from jaxlite._src.api.jet import jet, jet2  # noqa: F401
