"""jaxlite.tree: short names for the pytree utilities (mirrors ``jax.tree``).  Re-exports
only; the implementation is in ``jaxlite._src.tree_util``."""
from jaxlite._src.tree_util import (  # noqa: F401
    tree_all as all,
    tree_broadcast as broadcast,
    tree_flatten_with_path as flatten_with_path,
    tree_flatten as flatten,
    tree_leaves_with_path as leaves_with_path,
    tree_leaves as leaves,
    tree_map_with_path as map_with_path,
    tree_map as map,
    tree_reduce as reduce,
    tree_reduce_associative as reduce_associative,
    static as static,
    tree_structure as structure,
    tree_transpose as transpose,
    tree_unflatten as unflatten,
)
