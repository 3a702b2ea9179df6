"""jaxlite.experimental.shard_map (the seed-era ``jax.experimental.shard_map``). Re-exports
only."""
from jaxlite._src.api.shard_map import experimental_shard_map as shard_map  # noqa: F401
