"""jaxlite.tree_util (mirrors ``jax.tree_util``). Re-exports only."""
from jaxlite._src.tree_util import *  # noqa: F401,F403
