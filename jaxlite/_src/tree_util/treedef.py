"""PyTreeDef, the registry object and the core flatten/unflatten functions.

Part of the pytree engine (see the package's ``__init__``); ``kinds`` explains the spec
representation.
"""
from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from jaxlite._src.tree_util.keys import KeyEntry
from jaxlite._src.tree_util.kinds import (
    _CustomKind, _DataclassKind, _DICT, _LEAF, _LIST, _NONE, _NONE_SPEC,
    _TUPLE, _LeafMarker, Leaf, _classify, _flat_child, _flat_is_leaf, _flat_path, _get_kind,
    _kind_of, _kinds, _registered)

# ----------------------------------------------------------------------------- spec helpers

def _count_leaves(spec):
    if spec is None:
        return 1
    return sum([_count_leaves(s) for s in spec[2]])


def _count_nodes(spec):
    if spec is None:
        return 1
    return 1 + sum([_count_nodes(s) for s in spec[2]])


def _repr_spec(spec):
    if spec is None:
        return "*"
    return spec[0].repr_node(spec[1], [_repr_spec(s) for s in spec[2]])


def _skeleton(spec):
    """A hashable stand-in for a spec whose aux data is unhashable (aux dropped)."""
    if spec is None:
        return None
    try:
        hash(spec[1])
        aux = spec[1]
    except TypeError:
        aux = None
    return (spec[0], aux, tuple([_skeleton(s) for s in spec[2]]))


def _up_to(spec, x, out):
    children = spec[0].check(spec, x)
    specs = spec[2]
    if specs.count(None) == len(specs):
        out.extend(children)
        return
    for s, c in zip(specs, children):
        if s is None:
            out.append(c)
        else:
            _up_to(s, c, out)


_BUILTIN_TOKENS = {_TUPLE: "tuple", _LIST: "list", _DICT: "dict", _NONE: "None"}
_TOKEN_KINDS = {v: k for k, v in _BUILTIN_TOKENS.items()}


def _portable(spec):
    if spec is None:
        return None
    k = spec[0]
    tok = _BUILTIN_TOKENS.get(k, k.type)
    return (tok, spec[1], tuple([_portable(s) for s in spec[2]]))


def _kind_for_type(t):
    k = _get_kind(t)
    if k is None and isinstance(t, type):
        k = _classify(t)
    return None if k is _LEAF else k


def _from_portable(p):
    if p is None:
        return None
    tok, aux, children = p
    k = _TOKEN_KINDS.get(tok) if isinstance(tok, str) else _kind_for_type(tok)
    if k is None:
        raise ValueError(f"Cannot unpickle PyTreeDef: {tok!r} is not a registered pytree "
                         "node type in this process.")
    return (k, aux, tuple([_from_portable(c) for c in children]))


def _treedef_from_portable(p):
    spec = _from_portable(p)
    return PyTreeDef(spec, _count_leaves(spec))


_SEEN_ONCE = _LeafMarker()   # _unflatteners values besides compiled functions
_GENERIC = _LeafMarker()
_MAX_COMPILED_LEAVES = 256
_MAX_COMPILED_DEPTH = 40
_MAX_UNFLATTENERS = 1024
# spec -> compiled unflattener (or _SEEN_ONCE / _GENERIC).  A compiled function depends only
# on the kinds and arities of the spec: the dict keys and aux data are read from the spec it
# is called with, so it is valid for every spec equal to the key.
_unflatteners: dict = {}


def _unflattener(spec):
    """The compiled unflattener for ``spec`` (compiled on the second sighting of an equal
    spec), ``None`` if not compiled yet, or ``_GENERIC`` if it never will be."""
    try:
        f = _unflatteners.get(spec)
    except Exception:  # unhashable aux data (or an aux whose == raises)
        return _GENERIC
    if f is None:
        if len(_unflatteners) >= _MAX_UNFLATTENERS:
            _unflatteners.clear()
        _unflatteners[spec] = _SEEN_ONCE
        return None
    if f is _SEEN_ONCE:
        f = _unflatteners[spec] = _compile_unflatten(spec)
    return f


def _compile_unflatten(spec):
    """Generate ``unflatten(l, s)`` for specs equal to ``spec``: straight-line code such as
    ``return ((l[0], l[1]), {s1[0]: l[2]})`` where ``s1`` is the dict node's key tuple taken
    from the spec ``s`` passed in.  Custom nodes call their kind's ``build``.  Returns
    ``_GENERIC`` for trees too big or too deep to be worth it."""
    ns = {}
    lines = []
    count = [0]

    def gen(s, path, depth):
        if s is None:
            i = count[0]
            count[0] = i + 1
            if i >= _MAX_COMPILED_LEAVES:
                raise OverflowError
            return f"l[{i}]"
        if depth > _MAX_COMPILED_DEPTH:
            raise OverflowError
        k = s[0]
        kids = [gen(c, f"{path}[2][{j}]", depth + 1) for j, c in enumerate(s[2])]
        if k is _TUPLE:
            return "(" + "".join([c + ", " for c in kids]) + ")"
        if k is _LIST:
            return "[" + ", ".join(kids) + "]"
        if k is _NONE:
            return "None"
        aux = f"a{len(lines)}"
        lines.append(f"    {aux} = {path}[1]\n")
        if k is _DICT:
            return "{" + ", ".join([f"{aux}[{j}]: {c}" for j, c in enumerate(kids)]) + "}"
        build = f"b{len(ns)}"
        ns[build] = k.build
        return f"{build}({aux}, (" + "".join([c + ", " for c in kids]) + "))"
    try:
        body = gen(spec, "s", 0)
    except OverflowError:
        return _GENERIC
    src = "def unflatten(l, s):\n" + "".join(lines) + f"    return {body}\n"
    exec(compile(src, "<jaxlite pytree unflatten>", "exec"), ns)
    return ns["unflatten"]


# ----------------------------------------------------------------------------- PyTreeDef

class PyTreeDef:
    """The structure of a pytree: its node types, their static data, and where leaves go.

    Obtained from :func:`tree_flatten` / :func:`tree_structure`, never constructed directly.
    Immutable, hashable (hash cached) and cheap to compare, so it can be part of cache keys.
    ``num_leaves``/``num_nodes`` count leaves and nodes (a leaf counts as a node);
    :meth:`unflatten` rebuilds a tree from leaves, :meth:`flatten_up_to` takes apart another
    tree down to this structure, :meth:`children`, :meth:`node_data` and :meth:`compose`
    inspect and combine structures.
    """
    __slots__ = ("_spec", "_nl", "_hash", "_fast", "__weakref__")

    def __init__(self, spec, num_leaves):
        self._spec = spec
        self._nl = num_leaves
        self._hash = None
        self._fast = None

    @property
    def num_leaves(self) -> int:
        """Number of leaves in the structure."""
        return self._nl

    @property
    def num_nodes(self) -> int:
        """Number of nodes in the structure, leaves and ``None`` included."""
        return _count_nodes(self._spec)

    def unflatten(self, leaves: Iterable[Leaf]) -> Any:
        """Build the pytree of this structure whose leaves, in order, are ``leaves``."""
        n = self._nl
        if type(leaves) is not list and type(leaves) is not tuple:
            leaves = list(itertools.islice(leaves, n + 1))
        if len(leaves) != n:
            if len(leaves) > n:
                raise ValueError(f"Too many leaves for PyTreeDef; expected {n}.")
            raise ValueError(f"Too few leaves for PyTreeDef; expected {n}, got {len(leaves)}")
        spec = self._spec
        if spec is None:
            return leaves[0]
        f = self._fast
        if f is None:
            # Structures unflattened repeatedly (jit outputs, tree_map in a training loop)
            # get straight-line code, generated once per structure.
            f = _unflattener(spec)
            if f is None:
                return spec[0].unflat(spec, iter(leaves))
            self._fast = f
        if f is _GENERIC:
            return spec[0].unflat(spec, iter(leaves))
        return f(leaves, spec)

    def flatten_up_to(self, tree: Any) -> list:
        """Take ``tree`` apart down to this structure.

        ``tree`` must have this structure as a prefix: every node of ``self`` must be matched
        by a node of the same type and static data in ``tree``.  Returns the subtrees of
        ``tree`` found at the positions of this structure's leaves.  Mismatches raise
        ``ValueError`` naming the offending node.
        """
        spec = self._spec
        if spec is None:
            return [tree]
        out = []
        _up_to(spec, tree, out)
        return out

    def children(self) -> list:
        """The structures of the root node's children (empty for a leaf)."""
        spec = self._spec
        if spec is None:
            return []
        return [PyTreeDef(s, _count_leaves(s)) for s in spec[2]]

    def node_data(self):
        """``None`` for a leaf, else ``(node_type, static_data)`` of the root node."""
        spec = self._spec
        if spec is None:
            return None
        return spec[0].node_data(spec[1])

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The structure obtained by putting a copy of ``inner`` at every leaf of ``self``."""
        if type(inner) is not PyTreeDef:
            raise TypeError(f"compose() expects a PyTreeDef, got {type(inner).__name__}")
        ispec = inner._spec

        def sub(s):
            if s is None:
                return ispec
            return (s[0], s[1], tuple([sub(c) for c in s[2]]))
        return PyTreeDef(sub(self._spec), self._nl * inner._nl)

    def walk(self, f_node: Callable, f_leaf: Callable | None, leaves: Iterable[Any]):
        """Fold over the structure: ``f_leaf(leaf)`` at leaves and
        ``f_node(tuple_of_child_results, node_data)`` at nodes, bottom-up."""
        leaves = list(leaves)
        if len(leaves) != self._nl:
            raise ValueError(f"walk(): expected {self._nl} leaves, got {len(leaves)}")
        it = iter(leaves)

        def go(s):
            if s is None:
                x = next(it)
                return x if f_leaf is None else f_leaf(x)
            return f_node(tuple([go(c) for c in s[2]]), s[0].walk_data(s[1]))
        return go(self._spec)

    def from_iterable_tree(self, tree: Any) -> Any:
        """Build a pytree of this structure from nested iterables: each node of ``tree``
        is iterated to get that node's children; leaf positions are taken as they are."""
        def go(s, x):
            if s is None:
                return x
            kids = list(x)
            if len(kids) != len(s[2]):
                raise ValueError("Arity mismatch between trees")
            return s[0].build(s[1], tuple([go(c, k) for c, k in zip(s[2], kids)]))
        return go(self._spec, tree)

    @staticmethod
    def from_node_data_and_children(registry, node_data, children) -> PyTreeDef:
        """Inverse of :meth:`node_data` / :meth:`children`: a structure whose root node is
        described by ``node_data`` (``None`` for a leaf) with the given child structures."""
        if not isinstance(registry, PyTreeRegistry):
            raise TypeError("from_node_data_and_children() expects a PyTreeRegistry")
        if node_data is None:
            return _LEAF_TREEDEF
        typ, data = node_data
        kind = _kind_for_type(typ)
        if kind is None:
            raise RuntimeError(f"Could not find type: {typ!r}.")
        kids = list(children)
        for c in kids:
            if type(c) is not PyTreeDef:
                raise TypeError("from_node_data_and_children() expects PyTreeDef children")
        if kind is _DICT:
            aux = tuple(data)
            if len(aux) != len(kids):
                raise RuntimeError("Number of keys and entries does not match.")
        elif kind is _NONE:
            return _NONE_TREEDEF
        elif isinstance(kind, (_CustomKind, _DataclassKind)):
            aux = data
        else:
            aux = None
        return PyTreeDef((kind, aux, tuple([c._spec for c in kids])),
                         sum([c._nl for c in kids]))

    def __repr__(self):
        return f"PyTreeDef({_repr_spec(self._spec)})"

    __str__ = __repr__

    def __eq__(self, other):
        if self is other:
            return True
        if type(other) is not PyTreeDef:
            return NotImplemented
        if self._nl != other._nl:
            return False
        try:
            return self._spec == other._spec
        except Exception as e:
            raise ValueError(
                "Exception raised while checking equality of metadata fields of pytree. "
                "Make sure that metadata fields are hashable and have simple equality "
                "semantics. (Note: arrays cannot be passed as metadata fields!)") from e

    def __ne__(self, other):
        r = self.__eq__(other)
        return r if r is NotImplemented else not r

    def __hash__(self):
        h = self._hash
        if h is None:
            try:
                h = hash(self._spec)
            except TypeError:
                h = hash(_skeleton(self._spec))
            self._hash = h
        return h

    def __reduce__(self):
        return (_treedef_from_portable, (_portable(self._spec),))


PyTreeDef.__module__ = "jaxlite.tree_util"

_LEAF_TREEDEF = PyTreeDef(None, 1)
_NONE_TREEDEF = PyTreeDef(_NONE_SPEC, 0)


# ----------------------------------------------------------------------------- registry

class PyTreeRegistry:
    """The table of pytree node types.

    jaxlite has a single registry, :data:`default_registry`, whose methods mirror JAX's
    (``flatten``, ``flatten_one_level``, ``flatten_with_path``, ``is_node``,
    ``register_node``, ``register_dataclass_node``).  Prefer the module-level functions.
    """

    def flatten(self, tree, leaf_predicate=None):
        """Same as :func:`tree_flatten`."""
        return tree_flatten(tree, leaf_predicate)

    def flatten_one_level(self, tree):
        """``(children, aux_data)`` of a node, or ``None`` if ``tree`` is a leaf."""
        k = _kind_of(tree)
        return None if k is _LEAF else k.fol(tree)

    def flatten_one_level_with_keys(self, tree):
        """``([(key, child), ...], aux_data)`` of a node, or ``None`` for a leaf."""
        k = _kind_of(tree)
        return None if k is _LEAF else k.folk(tree)

    def flatten_with_path(self, tree, leaf_predicate=None):
        """Like :func:`tree_flatten_with_path`; ``leaf_predicate(path, x)`` takes the path."""
        pairs = []
        spec = _flat_path(tree, (), pairs, leaf_predicate)
        return pairs, (_LEAF_TREEDEF if spec is None else PyTreeDef(spec, len(pairs)))

    def is_node(self, type):  # noqa: A002 (JAX's parameter name)
        """Whether instances of ``type`` are pytree nodes (registered, builtin, namedtuple)."""
        if type is None:
            raise TypeError("is_node() expects a type, got None")
        try:
            return _kind_for_type(type) is not None
        except TypeError:  # unhashable non-type
            return False

    def register_node(self, type, to_iterable, from_iterable,  # noqa: A002
                      to_iterable_with_keys=None):
        """Register ``type`` as a custom node (see :func:`register_pytree_node`)."""
        if type in _registered:
            raise ValueError(f"Duplicate custom PyTreeDef type registration for {type!r}.")
        k = _CustomKind(type, to_iterable, from_iterable, to_iterable_with_keys)
        _registered[type] = k
        _kinds[type] = k

    def register_dataclass_node(self, type, data_fields, meta_fields):  # noqa: A002
        """Register ``type`` as a dataclass-like node with the given field names."""
        if type in _registered:
            raise ValueError(
                f"Duplicate custom dataclass PyTreeDef type registration for {type!r}.")
        k = _DataclassKind(type, data_fields, meta_fields)
        _registered[type] = k
        _kinds[type] = k


default_registry = PyTreeRegistry()

# A Python-side view of the registry as old JAX exposed it: type -> (to_iter, from_iter).
_RegistryEntry = collections.namedtuple("_RegistryEntry", ["to_iter", "from_iter"])
_registry: dict = {
    tuple: _RegistryEntry(lambda xs: (xs, None), lambda _, xs: tuple(xs)),
    list: _RegistryEntry(lambda xs: (xs, None), lambda _, xs: list(xs)),
    dict: _RegistryEntry(lambda d: _DICT.one_level(d), lambda keys, xs: dict(zip(keys, xs))),
    type(None): _RegistryEntry(lambda z: ((), None), lambda _, xs: None),
}


# ----------------------------------------------------------------------------- core API

def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Leaf], PyTreeDef]:
    """Split a pytree into ``(leaves, treedef)``.

    Leaves come out in a fixed depth-first, left-to-right order (dicts by sorted key).
    ``is_leaf``, if given, is called on every subtree before it is taken apart (root
    first); when it returns ``True`` the whole subtree is kept as a single leaf.
    ``treedef.unflatten(leaves)`` / :func:`tree_unflatten` inverts this.

    This is on the hot path of every ``jit`` call: a tree of a few containers flattens in
    about a microsecond.
    """
    leaves = []
    if is_leaf is None:
        k = _get_kind(type(tree))
        if k is _LEAF:
            return [tree], _LEAF_TREEDEF
        if k is None:
            k = _classify(type(tree))
            if k is _LEAF:
                return [tree], _LEAF_TREEDEF
        spec = k.flatten(tree, leaves)
    else:
        spec = _flat_is_leaf(tree, leaves, is_leaf)
        if spec is None:
            return leaves, _LEAF_TREEDEF
    return leaves, PyTreeDef(spec, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Leaf]) -> Any:
    """Rebuild the pytree described by ``treedef`` from its ``leaves`` (in flatten order).

    Raises ``ValueError`` if the number of leaves does not match ``treedef.num_leaves``.
    """
    return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Leaf]:
    """The leaves of a pytree, in flatten order (see :func:`tree_flatten`)."""
    if is_leaf is None:
        k = _get_kind(type(tree))
        if k is _LEAF:
            return [tree]
        leaves = []
        _flat_child(tree, k, leaves)
        return leaves
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The :class:`PyTreeDef` of a pytree (see :func:`tree_flatten`)."""
    return tree_flatten(tree, is_leaf)[1]


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The structure of a tuple whose elements have the given structures."""
    tds = list(treedefs)
    return PyTreeDef((_TUPLE, None, tuple([t._spec for t in tds])), sum([t._nl for t in tds]))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root node's children (``[]`` for a leaf)."""
    return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """Whether the structure has a single node: a leaf, ``None`` or an empty container."""
    return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    """Whether the structure is exactly one leaf (``*``)."""
    return treedef._spec is None


def all_leaves(iterable: Iterable[Any],
               is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """Whether every element of ``iterable`` is a leaf (not a pytree node).

    ``None`` is a node, so it is not a leaf unless ``is_leaf`` says so.  With ``is_leaf``,
    an element counts as a leaf when flattening it yields exactly that element.
    """
    if is_leaf is None:
        return all(_kind_of(x) is _LEAF for x in iterable)
    items = list(iterable)
    leaves = tree_leaves(items, is_leaf)
    return len(leaves) == len(items) and all(a is b for a, b in zip(items, leaves))


def is_tree_node(typ: type) -> bool:
    """Whether instances of ``typ`` are pytree nodes: builtin containers, ``None``'s type,
    namedtuple classes and registered types.  Takes a type, not an instance."""
    return default_registry.is_node(typ)


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """``(children, aux_data)`` of a pytree node, without recursing into the children.

    Raises ``ValueError`` if ``tree`` is a leaf.
    """
    out = default_registry.flatten_one_level(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """``([(key, child), ...], aux_data)`` of a pytree node, one level deep.

    Raises ``ValueError`` if ``tree`` is a leaf.
    """
    out = default_registry.flatten_one_level_with_keys(tree)
    if out is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    return out
