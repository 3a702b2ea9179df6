"""jaxlite.tree (mirrors ``jax.tree``). Re-exports only."""
from jaxlite._src.tree_util import tree_flatten as flatten, tree_unflatten as unflatten  # noqa
from jaxlite._src.tree_util import tree_map as map, tree_leaves as leaves  # noqa: F401
from jaxlite._src.tree_util import tree_structure as structure  # noqa: F401
