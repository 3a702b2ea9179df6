"""jaxlite.ops (mirrors ``jax.ops``): segment reductions. Re-exports only."""
from jaxlite._src.numpy.segment import (  # noqa: F401
    segment_sum, segment_prod, segment_max, segment_min)
