"""jaxlite.experimental.layout (mirrors ``jax.experimental.layout``). Re-exports only."""
from jaxlite._src.sharding.layout import Format, Layout  # noqa: F401
