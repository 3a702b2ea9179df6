"""Functions over whole pytrees: mapping (with or without key paths), reducing,
transposing and broadcasting a prefix tree."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from jaxlite._src.tree_util.errors import _prefix_error, prefix_errors
from jaxlite._src.tree_util.keys import KeyPath
from jaxlite._src.tree_util.treedef import (
    PyTreeDef, _count_leaves, default_registry, tree_flatten, tree_leaves, tree_structure)

__all__ = ["tree_map", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path",
           "tree_reduce", "tree_reduce_associative", "tree_all", "tree_transpose",
           "broadcast_prefix", "tree_broadcast", "broadcast_flattened_prefix_with_treedef"]

T = TypeVar("T")


# ----------------------------------------------------------------------------- mapping

def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``f`` leaf-wise and rebuild a tree of the same structure as ``tree``.

    With extra trees ``rest``, ``f`` receives the corresponding leaf of each; those trees
    must have ``tree``'s structure as a prefix (a leaf of ``tree`` may face a whole
    subtree, which is then passed to ``f`` as is).  Structure mismatches raise
    ``ValueError`` describing the key path where the trees differ.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return treedef.unflatten(list(map(f, leaves)))
    others = []
    for r in rest:
        try:
            others.append(treedef.flatten_up_to(r))
        except Exception as e:
            err = next(_prefix_error((), tree, r, is_leaf), None)
            raise (err("tree_map tree") if err is not None else e) from None
    return treedef.unflatten(list(map(f, leaves, *others)))


def tree_flatten_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                           is_leaf_takes_path: bool = False
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like :func:`tree_flatten`, but each leaf comes with its key path:
    returns ``([(key_path, leaf), ...], treedef)``.

    A key path is a tuple of :class:`SequenceKey`, :class:`DictKey`, :class:`GetAttrKey`,
    :class:`FlattenedIndexKey` (or user keys), see :func:`keystr`.  With
    ``is_leaf_takes_path=True`` the predicate is called as ``is_leaf(key_path, x)``.
    """
    pred = is_leaf
    if is_leaf is not None and not is_leaf_takes_path:
        def pred(_, x):
            return is_leaf(x)
    return default_registry.flatten_with_path(tree, pred)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[..., bool] | None = None,
                          is_leaf_takes_path: bool = False) -> list[tuple[KeyPath, Any]]:
    """The ``(key_path, leaf)`` pairs of a pytree, in flatten order."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
    """Like :func:`tree_map`, but ``f`` is called as ``f(key_path, leaf, *other_leaves)``."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    paths = [p for p, _ in pairs]
    leaves = [x for _, x in pairs]
    others = []
    for r in rest:
        try:
            others.append(treedef.flatten_up_to(r))
        except Exception as e:
            err = next(_prefix_error((), tree, r, is_leaf), None)
            raise (err("tree_map_with_path tree") if err is not None else e) from None
    return treedef.unflatten(list(map(f, paths, leaves, *others)))


class Unspecified:
    """Default for an omitted ``initializer``/``identity`` (``None`` is a valid value)."""


def tree_reduce(function: Callable[[T, Any], T], tree: Any,
                initializer: Any = Unspecified(),
                is_leaf: Callable[[Any], bool] | None = None) -> T:
    """``functools.reduce(function, leaves[, initializer])`` over the leaves of ``tree``."""
    if isinstance(initializer, Unspecified):
        return functools.reduce(function, tree_leaves(tree, is_leaf))
    return functools.reduce(function, tree_leaves(tree, is_leaf), initializer)


def _reduce_balanced(xs, op, identity):
    n = len(xs)
    if n == 0:
        if isinstance(identity, Unspecified):
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    if n == 1:
        return xs[0]
    mid = n // 2
    return op(_reduce_balanced(xs[:mid], op, identity), _reduce_balanced(xs[mid:], op, identity))


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: Any = Unspecified(),
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
    """Reduce the leaves with an associative ``operation`` as a balanced binary tree
    (logarithmic depth).  ``identity`` is returned for a tree without leaves and is
    required in that case."""
    return _reduce_balanced(tree_leaves(tree, is_leaf), operation, identity)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every leaf of ``tree`` is truthy (``True`` for a tree without leaves)."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
    """Turn an outer-structure tree of inner-structure trees inside out.

    ``pytree_to_transpose`` must be ``outer_treedef`` with a tree of ``inner_treedef`` at
    each leaf; the result is ``inner_treedef`` with a tree of ``outer_treedef`` at each
    leaf.  ``inner_treedef=None`` infers it from the first outer leaf.  Raises
    ``TypeError`` when the leaf counts do not fit.
    """
    flat, treedef = tree_flatten(pytree_to_transpose)
    if inner_treedef is None:
        inner_treedef = tree_structure(outer_treedef.flatten_up_to(pytree_to_transpose)[0])
    inner_n, outer_n = inner_treedef.num_leaves, outer_treedef.num_leaves
    if treedef.num_leaves != inner_n * outer_n:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
    rows = [flat[i * inner_n:(i + 1) * inner_n] for i in range(outer_n)]
    columns = [outer_treedef.unflatten(col) for col in zip(*rows)] if rows else \
        [outer_treedef.unflatten([]) for _ in range(inner_n)]
    return inner_treedef.unflatten(columns)


def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``full_tree``'s structure, each taken from the ``prefix_tree`` leaf
    that covers it (a prefix leaf is repeated once per leaf of the subtree it faces)."""
    result = []
    try:
        tree_map(lambda x, sub: result.extend([x] * _leaf_count(sub)),
                 prefix_tree, full_tree, is_leaf=is_leaf)
    except ValueError:
        errs = prefix_errors(prefix_tree, full_tree)
        if not errs:
            raise
        raise errs[0]("broadcast_prefix prefix_tree") from None
    return result


def _leaf_count(tree):
    return len(tree_leaves(tree))


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Expand ``prefix_tree`` (a prefix of ``full_tree``'s structure) to ``full_tree``'s
    structure by copying each prefix leaf over the subtree it covers."""
    leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf=is_leaf)
    return tree_structure(full_tree).unflatten(leaves)


def broadcast_flattened_prefix_with_treedef(prefix_leaves: list, prefix_treedef: PyTreeDef,
                                            full_treedef: PyTreeDef) -> list:
    """:func:`broadcast_prefix` on already flattened trees (used for ``in_axes`` &c.)."""
    out = []
    it = iter(prefix_leaves)

    def go(p, f):
        if p is None:
            out.extend([next(it)] * _count_leaves(f))
            return
        if f is None:
            raise ValueError("`prefix_treedef` is not a prefix of `full_treedef`")
        pd, fd = p[0].node_data(p[1]), f[0].node_data(f[1])
        if p[0] is not f[0] or pd != fd or len(p[2]) != len(f[2]):
            raise ValueError(f"expected {fd}, got {pd}")
        for pc, fc in zip(p[2], f[2]):
            go(pc, fc)
    go(prefix_treedef._spec, full_treedef._spec)
    return out
