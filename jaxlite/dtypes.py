"""jaxlite.dtypes (mirrors ``jax.dtypes``). Re-exports only."""
from ml_dtypes import bfloat16  # noqa: F401  (the scalar type, as jax.dtypes.bfloat16)

from jaxlite._src.core.dtypes import (  # noqa: F401
    canonicalize_dtype, float0, itemsize_bits, issubdtype, prng_key, result_type,
    scalar_type_of, TypePromotionError, extended, finfo, iinfo)
