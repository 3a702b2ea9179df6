"""Explaining structure mismatches: why a tree is not a prefix of another
(``prefix_errors``) and where two trees differ (``equality_errors``), as JAX words them."""
from __future__ import annotations

import difflib
import textwrap
from collections.abc import Callable
from typing import Any

from jaxlite._src.tree_util.keys import keystr
from jaxlite._src.tree_util.kinds import _kind_of
from jaxlite._src.tree_util.treedef import PyTreeDef, flatten_one_level, tree_structure

__all__ = ["prefix_errors", "equality_errors", "equality_errors_pytreedef"]


def _child_keys(tree):
    return tuple([k for k, _ in _kind_of(tree).keyed(tree)[0]])


def _key_payload(k):
    for attr in ("key", "idx", "name"):
        if hasattr(k, attr):
            return getattr(k, attr)
    return k


def _sorted_for_display(items):
    items = list(items)
    try:
        return sorted(items)
    except Exception:
        try:
            return sorted(items, key=repr)
        except Exception:
            return items


def prefix_errors(prefix_tree: Any, full_tree: Any,
                  is_leaf: Callable[[Any], bool] | None = None) -> list:
    """Describe why ``prefix_tree`` is not a prefix of ``full_tree``: a list of functions
    ``name -> ValueError`` (empty when it is a prefix)."""
    return list(_prefix_error((), prefix_tree, full_tree, is_leaf))


def _prefix_error(key_path, prefix_tree, full_tree, is_leaf=None):
    # A leaf (as flattening with is_leaf would see it) is a prefix of anything.
    if tree_structure(prefix_tree, is_leaf=is_leaf)._spec is None:
        return
    if type(prefix_tree) is not type(full_tree):
        yield lambda name: ValueError(
            "pytree structure error: different types at key path\n"
            f"    {name}{keystr(key_path)}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            "but at the same key path the full pytree has a subtree of different type\n"
            f"    {type(full_tree)}.")
        return
    p_children, p_meta = flatten_one_level(prefix_tree)
    f_children, f_meta = flatten_one_level(full_tree)
    p_children, f_children = tuple(p_children), tuple(f_children)
    p_keys, f_keys = _child_keys(prefix_tree), _child_keys(full_tree)
    if isinstance(prefix_tree, (list, tuple)):
        if len(prefix_tree) != len(full_tree):
            ty = type(prefix_tree)
            yield lambda name: ValueError(
                f"pytree structure error: different lengths of {ty.__name__} at key path\n"
                f"    {name}{keystr(key_path)}\n"
                f"At that key path, the prefix pytree {name} has a subtree of type "
                f"{ty.__name__} of length {len(prefix_tree)}, but the full pytree has a "
                f"subtree of the same type but of length {len(full_tree)}.")
            return
    elif len(p_children) != len(f_children):
        try:
            diff = _sorted_for_display(
                _key_payload(k) for k in set(p_keys).symmetric_difference(f_keys))
        except Exception:
            diff = None
        yield lambda name: ValueError(
            "pytree structure error: different numbers of pytree children at key path\n"
            f"    {name}{keystr(key_path)}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            f"with {len(p_children)} child keys\n"
            f"    {' '.join(str(_key_payload(k)) for k in p_keys)}\n"
            "but at the same key path the full pytree has a subtree of the same type but "
            f"with {len(f_children)} child keys\n"
            f"    {' '.join(str(_key_payload(k)) for k in f_keys)}\n"
            + ("" if diff is None else
               "so the symmetric difference on key sets is\n"
               f"    {' '.join(str(k) for k in diff)}"))
        return
    if p_meta != f_meta:
        p_str, f_str = str(p_meta), str(f_meta)
        diff = textwrap.indent("\n".join(difflib.ndiff(p_str.splitlines(),
                                                       f_str.splitlines())), prefix="    ")
        yield lambda name: ValueError(
            "pytree structure error: different pytree metadata at key path\n"
            f"    {name}{keystr(key_path)}\n"
            f"At that key path, the prefix pytree {name} has a subtree of type\n"
            f"    {type(prefix_tree)}\n"
            "with metadata\n"
            f"    {p_str}\n"
            "but at the same key path the full pytree has a subtree of the same type but "
            "with metadata\n"
            f"    {f_str}\n"
            "so the diff in the metadata at these pytree nodes is\n"
            f"{diff}")
        return
    # Same node at the root: the disagreement is further down.  (As in JAX, is_leaf is
    # only applied at the top level of this search.)
    for k, c1, c2 in zip(p_keys, p_children, f_children):
        yield from _prefix_error((*key_path, k), c1, c2)


def equality_errors(tree1: Any, tree2: Any, is_leaf: Callable[[Any], bool] | None = None):
    """Yield ``(key_path, thing1, thing2, explanation)`` for each place where two pytrees
    known to differ in structure disagree (at most one per branch)."""
    yield from _equality_errors((), tree1, tree2, is_leaf)


def equality_errors_pytreedef(tree1: PyTreeDef, tree2: PyTreeDef):
    """:func:`equality_errors` for two structures."""
    leaf = type("LeafMeta", (type,), dict(__repr__=lambda _: "pytree leaf"))("Leaf", (), {})()
    return equality_errors(tree1.unflatten([leaf] * tree1.num_leaves),
                           tree2.unflatten([leaf] * tree2.num_leaves))


def _equality_errors(path, t1, t2, is_leaf):
    if (tree_structure(t1, is_leaf=is_leaf)._spec is None
            and tree_structure(t2, is_leaf=is_leaf)._spec is None):
        return
    if type(t1) is not type(t2):
        yield path, str(type(t1)), str(type(t2)), "their Python types differ"
        return
    if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
        yield (path, f"{type(t1).__name__} of length {len(t1)}",
               f"{type(t2).__name__} of length {len(t2)}", "the lengths do not match")
        return
    c1, m1 = flatten_one_level(t1)
    c2, m2 = flatten_one_level(t2)
    c1, c2 = tuple(c1), tuple(c2)
    k1, k2 = _child_keys(t1), _child_keys(t2)
    try:
        diff = " ".join(repr(_key_payload(k)) for k in
                        _sorted_for_display(set(k1).symmetric_difference(k2)))
    except Exception:
        diff = ""
    if len(c1) != len(c2):
        yield (path,
               f"{type(t1)} with {len(c1)} child{'ren' if len(c1) > 1 else ''}",
               f"{type(t2)} with {len(c2)} child{'ren' if len(c2) > 1 else ''}",
               "the numbers of children do not match"
               + (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
        return
    if m1 != m2:
        yield (path, f"{type(t1)} with pytree metadata {m1}",
               f"{type(t2)} with pytree metadata {m2}",
               "the pytree node metadata does not match")
        return
    for k, a, b in zip(k1, c1, c2):
        yield from _equality_errors((*path, k), a, b, is_leaf)
