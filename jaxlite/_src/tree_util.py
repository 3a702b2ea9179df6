"""Pytrees: flattening nested containers to leaves and back (jax.tree_util's core)."""
from __future__ import annotations

import collections
import functools

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "tree_leaves", "tree_structure",
           "PyTreeDef", "register_pytree_node", "tree_flatten_with_path", "keystr",
           "SequenceKey", "DictKey", "GetAttrKey"]

_registry: dict = {}


def register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys_func=None):
    """Register ``nodetype`` as a pytree node with ``flatten_func(x) -> (children, aux)``
    and ``unflatten_func(aux, children) -> x``."""
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = (flatten_func, unflatten_func)


class SequenceKey:
    """Key path entry for a sequence index: prints ``[0]``."""
    __slots__ = ("idx",)

    def __init__(self, idx):
        self.idx = idx

    def __str__(self):
        return f"[{self.idx}]"

    def __repr__(self):
        return f"SequenceKey(idx={self.idx})"


class DictKey:
    """Key path entry for a dict key: prints ``['a']``."""
    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __str__(self):
        return f"[{self.key!r}]"

    def __repr__(self):
        return f"DictKey(key={self.key!r})"


class GetAttrKey:
    """Key path entry for an attribute: prints ``.name``."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f".{self.name}"

    def __repr__(self):
        return f"GetAttrKey(name={self.name!r})"


def keystr(keys):
    """A key path as a string, e.g. ``[0]['w']``."""
    return "".join(str(k) for k in keys)


class PyTreeDef:
    """The structure of a pytree: node type, auxiliary data and children structures."""
    __slots__ = ("kind", "aux", "children", "num_leaves", "_hash")

    def __init__(self, kind, aux, children):
        self.kind = kind
        self.aux = aux
        self.children = children
        if kind is None:
            self.num_leaves = 1
        else:
            self.num_leaves = sum(c.num_leaves for c in children)
        self._hash = None

    def __eq__(self, other):
        return (type(other) is PyTreeDef and self.kind is other.kind and self.aux == other.aux
                and self.children == other.children)

    def __hash__(self):
        h = self._hash
        if h is None:
            try:
                a = hash(self.aux)
            except TypeError:
                a = 0
            h = self._hash = hash((self.kind, a, self.children))
        return h

    def unflatten(self, leaves):
        """Rebuild a pytree of this structure from ``leaves``."""
        return tree_unflatten(self, leaves)

    def __repr__(self):
        return f"PyTreeDef({_repr(self)})"


def _repr(t):
    if t.kind is None:
        return "*"
    if t.kind is _NONE:
        return "None"
    if t.kind is tuple:
        inner = ", ".join(_repr(c) for c in t.children)
        return f"({inner},)" if len(t.children) == 1 else f"({inner})"
    if t.kind is list:
        return "[" + ", ".join(_repr(c) for c in t.children) + "]"
    if t.kind is dict:
        return "{" + ", ".join(f"{k!r}: {_repr(c)}" for k, c in zip(t.aux, t.children)) + "}"
    name = getattr(t.kind, "__name__", str(t.kind))
    return f"CustomNode({name}[{t.aux}], [{', '.join(_repr(c) for c in t.children)}])"


_NONE = type(None)
_LEAF = PyTreeDef(None, None, ())
_NONE_DEF = PyTreeDef(_NONE, None, ())


def _flatten(x, leaves, is_leaf):
    t = type(x)
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return _LEAF
    if t is tuple:
        return PyTreeDef(tuple, None, tuple(_flatten(c, leaves, is_leaf) for c in x))
    if t is list:
        return PyTreeDef(list, None, tuple(_flatten(c, leaves, is_leaf) for c in x))
    if t is dict:
        keys = sorted(x)
        return PyTreeDef(dict, tuple(keys), tuple(_flatten(x[k], leaves, is_leaf)
                                                  for k in keys))
    if x is None:
        return _NONE_DEF
    reg = _registry.get(t)
    if reg is not None:
        children, aux = reg[0](x)
        return PyTreeDef(t, aux, tuple(_flatten(c, leaves, is_leaf) for c in children))
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return PyTreeDef(t, None, tuple(_flatten(c, leaves, is_leaf) for c in x))
    leaves.append(x)
    return _LEAF


def tree_flatten(tree, is_leaf=None):
    """(leaves, treedef) of a pytree."""
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _unflatten(t, it):
    k = t.kind
    if k is None:
        return next(it)
    if k is _NONE:
        return None
    kids = [_unflatten(c, it) for c in t.children]
    if k is tuple:
        return tuple(kids)
    if k is list:
        return kids
    if k is dict:
        return dict(zip(t.aux, kids))
    reg = _registry.get(k)
    if reg is not None:
        return reg[1](t.aux, kids)
    return k(*kids)


def tree_unflatten(treedef, leaves):
    """Rebuild a pytree from its structure and leaves."""
    it = iter(leaves)
    out = _unflatten(treedef, it)
    return out


def tree_leaves(tree, is_leaf=None):
    """The leaves of a pytree, in order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    """The PyTreeDef of a pytree."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f, tree, *rest, is_leaf=None):
    """Apply ``f`` to corresponding leaves of ``tree`` and ``rest``."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [treedef.flatten_up_to(r) if hasattr(treedef, "flatten_up_to") else
              tree_flatten(r)[0] for r in rest]
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


def tree_flatten_with_path(tree, is_leaf=None):
    """([(key_path, leaf), ...], treedef)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    paths = []

    def walk(t, prefix):
        if t.kind is None:
            paths.append(prefix)
            return
        if t.kind is dict:
            for k, c in zip(t.aux, t.children):
                walk(c, prefix + (DictKey(k),))
        else:
            for i, c in enumerate(t.children):
                walk(c, prefix + (SequenceKey(i),))

    walk(treedef, ())
    return list(zip(paths, leaves)), treedef


register_pytree_node(collections.OrderedDict,
                     lambda d: (list(d.values()), tuple(d.keys())),
                     lambda keys, vals: collections.OrderedDict(zip(keys, vals)))
_ = functools
