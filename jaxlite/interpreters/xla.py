"""jaxlite.interpreters.xla (mirrors the parts of ``jax.interpreters.xla`` libraries still
touch: the table of value-canonicalizing handlers). Re-exports only."""
from jaxlite._src.core.avals import canonicalize_dtype_handlers  # noqa: F401
