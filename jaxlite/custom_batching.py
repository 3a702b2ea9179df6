"""jaxlite.custom_batching (mirrors ``jax.custom_batching``). Re-exports only."""
from jaxlite._src.lax.custom_batching import custom_vmap, sequential_vmap  # noqa: F401
