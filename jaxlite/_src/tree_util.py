"""Pytrees: flattening nested containers to a list of leaves plus a structure, and back.

This is the implementation behind ``jaxlite.tree_util`` and ``jaxlite.tree`` (JAX's
``jax.tree_util`` and ``jax.tree``).  The engine is split in three modules:

* ``tree_util_kinds``: node kinds (tuple, list, dict, None, namedtuple, custom, dataclass)
  and the recursive flatteners, with the spec representation explained;
* ``tree_util_core``: ``PyTreeDef``, compiled unflatteners, the registry object,
  ``tree_flatten``/``tree_unflatten`` and the other core functions;
* this module: registration helpers, ``Partial``, mapping/reducing/transposing/broadcasting
  and the structure-mismatch error messages.

``tree_flatten(tree, is_leaf=None) -> (leaves, treedef)`` and ``treedef.unflatten(leaves)``
are what ``jit`` uses on every call; both are tuned for speed (about a microsecond for a
small tree).
"""
from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import operator
import textwrap
from collections.abc import Callable
from typing import Any, TypeVar

from jaxlite._src.tree_util_keys import (  # noqa: F401
    DictKey, FlattenedIndexKey, GetAttrKey, KeyEntry, KeyPath, SequenceKey, keystr)
from jaxlite._src.tree_util_kinds import (  # noqa: F401
    _DICT, _LEAF, Leaf, PyTree, _dict_items, _kind_of, _kinds, _registered)
from jaxlite._src.tree_util_core import (  # noqa: F401
    PyTreeDef, PyTreeRegistry, _RegistryEntry, _count_leaves, _registry, all_leaves,
    default_registry,
    flatten_one_level, flatten_one_level_with_keys, is_tree_node, tree_flatten, tree_leaves,
    tree_structure, tree_unflatten, treedef_children, treedef_is_leaf, treedef_is_strict_leaf,
    treedef_tuple)

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

T = TypeVar("T")


# ----------------------------------------------------------------------------- registration

def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable,
                         flatten_with_keys_func: Callable | None = None) -> None:
    """Make instances of ``nodetype`` pytree nodes instead of leaves.

    ``flatten_func(x)`` must return a tuple ``(children, aux_data)``: an iterable of child
    pytrees and hashable static data kept in the treedef.  ``unflatten_func(aux_data,
    children)`` rebuilds the object (``children`` is a tuple; it may hold objects other
    than the original leaves, e.g. tracers, so do not validate them).  The optional
    ``flatten_with_keys_func(x)`` returns ``([(key, child), ...], aux_data)`` and is used
    for key paths; without it children are keyed by :class:`FlattenedIndexKey`.

    Registration is by exact type (subclasses are not covered).  Registering a type twice
    raises ``ValueError``.
    """
    default_registry.register_node(nodetype, flatten_func, unflatten_func,
                                   flatten_with_keys_func)
    _registry[nodetype] = _RegistryEntry(flatten_func, unflatten_func)


def register_pytree_node_class(cls):
    """Class decorator: register ``cls`` using its methods ``tree_flatten(self) ->
    (children, aux_data)`` and classmethod ``tree_unflatten(cls, aux_data, children)``.
    Returns ``cls``."""
    register_pytree_node(cls, operator.methodcaller("tree_flatten"), cls.tree_unflatten)
    return cls


def register_pytree_with_keys(nodetype: type, flatten_with_keys: Callable,
                              unflatten_func: Callable,
                              flatten_func: Callable | None = None) -> None:
    """Register ``nodetype`` with a key-aware flatten function.

    ``flatten_with_keys(x)`` returns ``([(key, child), ...], aux_data)``; the keys appear
    in key paths (:func:`tree_flatten_with_path`).  ``flatten_func``, if given, must
    return the same children and aux data without keys; it makes plain flattening faster.
    """
    if not flatten_func:
        def flatten_func(x, _fk=flatten_with_keys):
            pairs, aux = _fk(x)
            return [c for _, c in pairs], aux
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_with_keys_class(cls):
    """Class decorator: register ``cls`` using its methods ``tree_flatten_with_keys(self)``,
    classmethod ``tree_unflatten(cls, aux_data, children)`` and, if defined,
    ``tree_flatten(self)``.  Returns ``cls``."""
    flat = operator.methodcaller("tree_flatten") if hasattr(cls, "tree_flatten") else None
    register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                              cls.tree_unflatten, flat)
    return cls


def register_dataclass(nodetype, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass-like type whose fields split into data (children) and metadata.

    ``data_fields`` are flattened as children (key paths ``.name``); ``meta_fields`` are
    static: their values form the treedef's aux data, so they must be hashable and are
    part of ``jit`` cache keys.  Rebuilding calls ``nodetype(**fields)``.

    For a :func:`dataclasses.dataclass` both lists may be omitted: fields declared with
    ``field(metadata={'static': True})`` (or :func:`jaxlite.tree.static`) are meta fields,
    the other ``init`` fields are data fields.  When given, the two lists must together
    cover exactly the ``init=True`` fields not in ``drop_fields``.  Usable as a decorator;
    returns ``nodetype``.
    """
    if data_fields is None or meta_fields is None:
        if (data_fields is None) != (meta_fields is None):
            raise TypeError("register_dataclass: data_fields and meta_fields must both be "
                            "specified when either is specified. Got "
                            f"data_fields={data_fields!r} meta_fields={meta_fields!r}.")
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass: data_fields and meta_fields are required "
                            f"when nodetype is not a dataclass. Got nodetype={nodetype!r}.")
        fields = dataclasses.fields(nodetype)
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
    data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
        init_fields.difference_update(drop_fields)
        given = {*data_fields, *meta_fields}
        if given != init_fields:
            msg = ("data_fields and meta_fields must include all dataclass fields with "
                   "``init=True`` and only them.")
            missing = init_fields - given
            if missing:
                msg += (f" Missing fields: {missing}. Add them to drop_fields to suppress "
                        "this error.")
            unexpected = given - init_fields
            if unexpected:
                msg += f" Unexpected fields: {unexpected}."
            raise ValueError(msg)
    overlap = set(data_fields) & set(meta_fields)
    if overlap:
        raise ValueError("data_fields and meta_fields must not overlap. Overlapping fields: "
                         f"{overlap}.")
    default_registry.register_dataclass_node(nodetype, data_fields, meta_fields)
    kind = _registered[nodetype]
    _registry[nodetype] = _RegistryEntry(kind.one_level, kind.build)
    return nodetype


def register_static(cls):
    """Register ``cls`` as a pytree with no leaves: an instance is kept whole in the
    treedef's aux data, so ``jit`` treats it as static.  Instances must be hashable.
    Usable as a decorator; returns ``cls``."""
    register_pytree_with_keys(cls, _static_flatten, _static_unflatten)
    return cls


def _static_flatten(obj):
    return (), obj


def _static_unflatten(obj, children):
    return obj


def static(**kwargs):
    """A :func:`dataclasses.field` marked static for :func:`register_dataclass`: same
    arguments as ``dataclasses.field``, with ``'static': True`` added to ``metadata``."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)


# OrderedDict keeps insertion order (its keys are aux data); defaultdict sorts its keys like
# dict and also keeps the default factory.
register_pytree_with_keys(
    collections.OrderedDict,
    lambda d: (tuple([(DictKey(k), v) for k, v in d.items()]), tuple(d.keys())),
    lambda keys, values: collections.OrderedDict(zip(keys, values)),
    lambda d: (list(d.values()), tuple(d.keys())))


def _defaultdict_flatten_with_keys(d):
    keys, vals = _dict_items(d)
    return tuple([(DictKey(k), v) for k, v in zip(keys, vals)]), (d.default_factory, keys)


def _defaultdict_flatten(d):
    keys, vals = _dict_items(d)
    return list(vals), (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict, _defaultdict_flatten_with_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)),
    _defaultdict_flatten)


# ----------------------------------------------------------------------------- Partial

class _HashableCallableShim:
    """Wraps a callable so that ``functools.partial`` does not merge nested partials;
    delegates calls, hashing and equality to the wrapped callable."""

    def __init__(self, fun):
        self.fun = fun

    def __call__(self, *args, **kw):
        return self.fun(*args, **kw)

    def __hash__(self):
        return hash(self.fun)

    def __eq__(self, other):
        if isinstance(other, _HashableCallableShim):
            return self.fun == other.fun
        return self.fun == other

    def __repr__(self):
        return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
    """A :func:`functools.partial` that is a pytree.

    The wrapped function is static (part of the treedef, so it must be hashable and is
    compared by ``==``); the bound positional and keyword arguments are the children.  So
    ``Partial(f, x)`` can be passed to, and returned from, ``jit``-compiled functions, its
    bound arguments being traced like any other input.  ``Partial(f)`` wraps ``f`` with no
    leaves.  When ``func`` is itself a ``functools.partial``, it is kept whole (static)
    instead of being merged, so the pytree children are exactly the arguments given here.
    """

    def __new__(cls, func, *args, **kw):
        if isinstance(func, functools.partial):
            inner = func
            func = _HashableCallableShim(inner)
            out = super().__new__(cls, func, *args, **kw)
            # Look like a partial to code that inspects .func/.args/.keywords.
            func.func, func.args, func.keywords = inner.func, inner.args, inner.keywords
            return out
        return super().__new__(cls, func, *args, **kw)


Partial.__module__ = "jaxlite.tree_util"

register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]))


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


# ----------------------------------------------------------------------------- error helpers

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
