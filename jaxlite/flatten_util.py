"""jaxlite.flatten_util (mirrors ``jax.flatten_util``). Re-exports only."""
from jaxlite._src.flatten_util import ravel_pytree as ravel_pytree  # noqa: F401
