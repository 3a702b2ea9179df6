"""Pytrees: flattening nested containers to a list of leaves plus a structure, and back.

This package is the implementation behind ``jaxlite.tree_util`` and ``jaxlite.tree`` (JAX's
``jax.tree_util`` and ``jax.tree``); import from the package, whose names below are its
public surface.  It sits at the bottom of ``jaxlite._src`` with the config: it imports
nothing else of jaxlite.  The modules, each importing only those before it:

* ``keys``: key-path entries (``SequenceKey``, ``DictKey``, ...) and ``keystr``;
* ``kinds``: node kinds (tuple, list, dict, None, namedtuple, custom, dataclass) and the
  recursive flatteners, with the spec representation explained;
* ``treedef``: ``PyTreeDef``, compiled unflatteners, the registry object,
  ``tree_flatten``/``tree_unflatten`` and the other core functions;
* ``registration``: ``register_pytree_node`` & co., ``Partial`` and the standard-library
  containers registered at import;
* ``errors``: the structure-mismatch explanations (``prefix_errors``, ``equality_errors``);
* ``ops``: mapping, reducing, transposing and broadcasting whole trees.

``tree_flatten(tree, is_leaf=None) -> (leaves, treedef)`` and ``treedef.unflatten(leaves)``
are what ``jit`` uses on every call; both are tuned for speed (about a microsecond for a
small tree).
"""
from jaxlite._src.tree_util.keys import (  # noqa: F401
    DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath, SequenceKey, keystr)
from jaxlite._src.tree_util.kinds import Leaf, PyTree  # noqa: F401
from jaxlite._src.tree_util.treedef import (  # noqa: F401
    PyTreeDef, PyTreeRegistry, all_leaves, default_registry, flatten_one_level,
    flatten_one_level_with_keys, is_tree_node, tree_flatten, tree_leaves, tree_structure,
    tree_unflatten, treedef_children, treedef_is_leaf, treedef_is_strict_leaf, treedef_tuple)
from jaxlite._src.tree_util.registration import (  # noqa: F401
    Partial, register_dataclass, register_pytree_node, register_pytree_node_class,
    register_pytree_with_keys, register_pytree_with_keys_class, register_static, static)
from jaxlite._src.tree_util.errors import (  # noqa: F401
    equality_errors, equality_errors_pytreedef, prefix_errors)
from jaxlite._src.tree_util.ops import (  # noqa: F401
    Unspecified, broadcast_flattened_prefix_with_treedef, broadcast_prefix, tree_all,
    tree_broadcast, tree_flatten_with_path, tree_leaves_with_path, tree_map,
    tree_map_with_path, tree_reduce, tree_reduce_associative, tree_transpose)

__all__ = [
    "Partial", "all_leaves", "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node",
    "register_dataclass", "register_pytree_node", "register_pytree_node_class",
    "register_pytree_with_keys", "register_pytree_with_keys_class", "register_static",
    "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
    "treedef_children", "treedef_is_leaf", "treedef_tuple", "KeyEntry", "KeyPath", "keystr",
    "tree_all", "tree_broadcast", "tree_flatten", "tree_leaves", "tree_map", "tree_reduce",
    "tree_reduce_associative", "tree_structure", "tree_transpose", "tree_unflatten",
    "DictKey", "FlattenedIndexKey", "GetAttrKey", "PyTreeDef", "SequenceKey",
    "default_registry",
]
