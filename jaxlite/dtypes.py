"""jaxlite.dtypes (mirrors ``jax.dtypes``). Re-exports only."""
from jaxlite._src.core.dtypes import (  # noqa: F401
    bfloat16, canonicalize_dtype, float0, itemsize_bits, issubdtype, prng_key, result_type,
    scalar_type_of, TypePromotionError, extended, finfo, iinfo)
