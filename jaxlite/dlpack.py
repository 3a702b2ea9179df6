"""jaxlite.dlpack (mirrors ``jax.dlpack``). Re-exports only."""
from jaxlite._src.dlpack import from_dlpack, is_supported_dtype, SUPPORTED_DTYPES  # noqa: F401
