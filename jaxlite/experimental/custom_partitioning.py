"""jaxlite.experimental.custom_partitioning (mirrors
``jax.experimental.custom_partitioning``). Re-exports only."""
from jaxlite._src.api.custom_partitioning import (  # noqa: F401
    custom_partitioning, custom_partitioning_p, BATCHING, CompoundFactor, ArrayMapping,
    SdyShardingRule)
