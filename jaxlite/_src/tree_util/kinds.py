"""Pytree node kinds: how each node type is flattened, rebuilt and checked.

Part of the pytree engine behind ``jaxlite.tree_util`` / ``jaxlite.tree`` (see the package's
``__init__`` for the module order).  Flattening sits
on the hot path of every ``jit`` call, so this code is written for speed.

Representation
--------------
A structure is held as a *spec*, built from plain Python tuples so that hashing and equality
run in C:

* ``None`` stands for a leaf;
* a node is ``(kind, aux, child_specs)`` where ``kind`` is the ``_Kind`` object that knows how
  to take apart and rebuild that node type, ``aux`` its static data (sorted keys for dicts,
  the user's auxiliary data for custom nodes, ``None`` for tuples/lists/namedtuples) and
  ``child_specs`` a tuple of specs.

``PyTreeDef`` wraps a spec together with its leaf count and caches its hash.  Node kinds are
found by a single ``dict`` lookup on ``type(x)``; every type ever seen is cached there
(mapped to ``_LEAF`` when it is not a node), so classifying a leaf costs one lookup.

Semantics follow JAX exactly: ``None`` is a node without children, dict keys are sorted,
subclasses of tuple/list/dict are leaves unless registered, namedtuples are nodes, an
``is_leaf`` predicate is consulted (pre-order) at every node and must return a bool.
"""
from __future__ import annotations

import operator
from typing import Any

from jaxlite._src.tree_util.keys import DictKey, FlattenedIndexKey, GetAttrKey, SequenceKey

Leaf = Any
PyTree = Any

# type -> _Kind (a node type) or _LEAF.  Registered types, namedtuple classes and leaf types
# seen so far all live here, so that classification is one dict lookup.
_kinds: dict = {}
_get_kind = _kinds.get
# Types registered as nodes (builtins included): these may not be registered again.
_registered: dict = {}
# One kind object per namedtuple class, kept for good: specs compare kinds by identity.
_namedtuple_kinds: dict = {}
_MAX_CACHED_TYPES = 20000


class _LeafMarker:
    __slots__ = ()

    def __repr__(self):
        return "<leaf>"


_LEAF = _LeafMarker()


def _classify(t):
    """Kind of a type not yet in ``_kinds``: a namedtuple node, or a leaf.  Cached."""
    if issubclass(t, tuple) and hasattr(t, "_fields"):
        k = _namedtuple_kinds.get(t)
        if k is None:
            k = _namedtuple_kinds[t] = _NamedTupleKind(t)
    else:
        k = _LEAF
    if len(_kinds) > _MAX_CACHED_TYPES:  # forget the leaf types cached so far
        _kinds.clear()
        _kinds.update(_namedtuple_kinds)
        _kinds.update(_registered)
    _kinds[t] = k
    return k


def _kind_of(x):
    k = _get_kind(type(x))
    if k is None:
        k = _classify(type(x))
    return k


def _flat_child(x, k, leaves):
    """Flatten ``x`` whose ``_kinds`` entry ``k`` is not ``_LEAF`` (it may be unknown)."""
    if k is None:
        k = _classify(type(x))
        if k is _LEAF:
            leaves.append(x)
            return None
    return k.flatten(x, leaves)


def _flat_seq(children, leaves, _get=_get_kind, _LEAF=_LEAF):
    """Child specs of a node whose children (a sequence) are not all known leaves."""
    specs = []
    for c in children:
        k = _get(type(c))
        if k is _LEAF:
            leaves.append(c)
            specs.append(None)
        else:
            if k is None:
                k = _classify(type(c))
                if k is _LEAF:
                    leaves.append(c)
                    specs.append(None)
                    continue
            specs.append(k.flatten(c, leaves))
    return tuple(specs)


def _check_is_leaf_result(r):
    if r is not False and r is not None:
        raise ValueError(f"is_leaf predicate returned a non-boolean value {r!r}; "
                         "expected a boolean")


def _flat_is_leaf(x, leaves, is_leaf):
    """Flatten with a leaf predicate called on every subtree, root first."""
    r = is_leaf(x)
    if r is True:
        leaves.append(x)
        return None
    _check_is_leaf_result(r)
    k = _kind_of(x)
    if k is _LEAF:
        leaves.append(x)
        return None
    children, aux = k.one_level(x)
    return (k, aux, tuple([_flat_is_leaf(c, leaves, is_leaf) for c in children]))


def _flat_path(x, path, pairs, is_leaf):
    """Flatten collecting ``(key_path, leaf)`` pairs; ``is_leaf(path, x)`` if given."""
    if is_leaf is not None:
        r = is_leaf(path, x)
        if r is True:
            pairs.append((path, x))
            return None
        _check_is_leaf_result(r)
    k = _kind_of(x)
    if k is _LEAF:
        pairs.append((path, x))
        return None
    keyed, aux = k.keyed(x)
    return (k, aux, tuple([_flat_path(c, (*path, key), pairs, is_leaf) for key, c in keyed]))


def _unflat_children(spec, it):
    return tuple([next(it) if s is None else s[0].unflat(s, it) for s in spec[2]])


# ----------------------------------------------------------------------------- node kinds

class _Kind:
    """How one node type is taken apart and rebuilt.  Subclasses specialise the hot paths.

    Interface (``spec`` is ``(self, aux, child_specs)``):
      flatten(x, leaves) -> spec            full recursive flatten, appending leaves
      one_level(x) -> (children, aux)       one level, children in flattening order
      keyed(x) -> (pairs, aux)              one level with key entries: [(key, child)]
      build(aux, children) -> node          rebuild from already-built children (a tuple)
      unflat(spec, it) -> node              recursive rebuild pulling leaves from ``it``
      check(spec, x) -> children            children of ``x`` if its node matches ``spec``
                                            (for flatten_up_to), else JAX's ValueError
      repr_node(aux, kids) -> str           the node's part of the PyTreeDef repr
      node_data(aux), walk_data(aux)        what PyTreeDef.node_data / walk report
      fol(x), folk(x)                       flatten_one_level(_with_keys) results
    """
    __slots__ = ("type",)

    def flatten(self, x, leaves):
        children, aux = self.one_level(x)
        return (self, aux, _flat_seq(children, leaves))

    def unflat(self, spec, it):
        return self.build(spec[1], _unflat_children(spec, it))

    def keys(self, aux, n):
        return [FlattenedIndexKey(i) for i in range(n)]

    def node_data(self, aux):
        return (self.type, aux)

    def walk_data(self, aux):
        return aux

    def fol(self, x):
        return self.one_level(x)

    def folk(self, x):
        return self.keyed(x)


class _TupleKind(_Kind):
    __slots__ = ()
    _seq_type = tuple

    def flatten(self, x, leaves, _get=_get_kind, _LEAF=_LEAF):
        for c in x:
            if _get(type(c)) is not _LEAF:
                return (self, None, _flat_seq(x, leaves))
        leaves.extend(x)
        return (self, None, (None,) * len(x))

    def one_level(self, x):
        return x, None

    def keyed(self, x):
        return tuple([(SequenceKey(i), c) for i, c in enumerate(x)]), None

    def build(self, aux, children):
        return children

    def unflat(self, spec, it):
        return tuple([next(it) if s is None else s[0].unflat(s, it) for s in spec[2]])

    def keys(self, aux, n):
        return [SequenceKey(i) for i in range(n)]

    def check(self, spec, x):
        t = self._seq_type
        if type(x) is not t:
            raise ValueError(f"Expected {t.__name__}, got {x!r}.")
        if len(x) != len(spec[2]):
            raise ValueError(f"{t.__name__.capitalize()} arity mismatch: {len(x)} != "
                             f"{len(spec[2])}; {t.__name__}: {x!r}.")
        return x

    def repr_node(self, aux, kids):
        if len(kids) == 1:
            return f"({kids[0]},)"
        return "(" + ", ".join(kids) + ")"


class _ListKind(_TupleKind):
    """Lists flatten, key and check like tuples; they rebuild and print as lists."""
    __slots__ = ()
    _seq_type = list

    def build(self, aux, children):
        return list(children)

    def unflat(self, spec, it):
        return [next(it) if s is None else s[0].unflat(s, it) for s in spec[2]]

    def repr_node(self, aux, kids):
        return "[" + ", ".join(kids) + "]"


def _sorted_keys(d):
    try:
        return sorted(d)
    except Exception as e:
        raise ValueError(
            "Comparator raised exception while sorting pytree dictionary keys.") from e


# Insertion-order key tuple -> itemgetter putting it (and the values) in sorted-key order,
# or None when it is already sorted.  A permutation, not the sorted keys themselves, is
# cached so that equal-but-different keys (1 and 1.0) are taken from the dict at hand.
_dict_orders: dict = {}
_MAX_DICT_ORDERS = 4096


def _dict_order(keys):
    sk = _sorted_keys(keys)
    if all(a is b for a, b in zip(sk, keys)):
        perm = None
    else:
        pos = {id(k): i for i, k in enumerate(keys)}
        perm = operator.itemgetter(*[pos[id(k)] for k in sk])
    if len(_dict_orders) >= _MAX_DICT_ORDERS:
        _dict_orders.clear()
    _dict_orders[keys] = perm
    return perm


def _dict_items(x, _orders=_dict_orders):
    """``(keys, values)`` of a dict as tuples, in sorted-key order."""
    keys = tuple(x)
    vals = tuple(x.values())
    if len(keys) > 1:
        try:
            perm = _orders[keys]
        except KeyError:
            perm = _dict_order(keys)
        if perm is not None:
            return perm(keys), perm(vals)
    return keys, vals


class _DictKind(_Kind):
    __slots__ = ()

    def flatten(self, x, leaves, _get=_get_kind, _LEAF=_LEAF, _orders=_dict_orders):
        if not x:  # e.g. the kwargs of most calls
            return (self, (), ())
        keys = tuple(x)
        vals = tuple(x.values())
        if len(keys) > 1:
            try:
                perm = _orders[keys]
            except KeyError:
                perm = _dict_order(keys)
            if perm is not None:
                keys = perm(keys)
                vals = perm(vals)
        for c in vals:
            if _get(type(c)) is not _LEAF:
                return (self, keys, _flat_seq(vals, leaves))
        leaves.extend(vals)
        return (self, keys, (None,) * len(vals))

    def one_level(self, x):
        keys, vals = _dict_items(x)
        return vals, keys

    def keyed(self, x):
        keys, vals = _dict_items(x)
        return tuple([(DictKey(k), v) for k, v in zip(keys, vals)]), keys

    def build(self, aux, children):
        return dict(zip(aux, children))

    def unflat(self, spec, it):
        return dict(zip(spec[1], [next(it) if s is None else s[0].unflat(s, it)
                                  for s in spec[2]]))

    def keys(self, aux, n):
        return [DictKey(k) for k in aux]

    def check(self, spec, x):
        if type(x) is not dict:
            raise ValueError(f"Expected dict, got {x!r}.")
        keys, vals = _dict_items(x)
        if keys != spec[1]:
            raise ValueError(f"Dict key mismatch; expected keys: {list(spec[1])!r}; "
                             f"present keys: {list(keys)!r}.")
        return vals

    def repr_node(self, aux, kids):
        return "{" + ", ".join([f"{k!r}: {c}" for k, c in zip(aux, kids)]) + "}"

    def node_data(self, aux):
        return (dict, list(aux))

    def walk_data(self, aux):
        return list(aux)


class _NoneKind(_Kind):
    __slots__ = ()

    def flatten(self, x, leaves):
        return _NONE_SPEC

    def one_level(self, x):
        return (), None

    def keyed(self, x):
        return (), None

    def build(self, aux, children):
        return None

    def unflat(self, spec, it):
        return None

    def check(self, spec, x):
        if x is not None:
            raise ValueError(
                f"Expected None, got {x!r}.\n\n"
                "In previous releases of JAX, flatten-up-to used to consider None to be a "
                "tree-prefix of non-None values. To obtain the previous behavior, you can "
                "usually write:\n"
                "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
                "is_leaf=lambda x: x is None)")
        return ()

    def repr_node(self, aux, kids):
        return "None"


class _NamedTupleKind(_Kind):
    __slots__ = ()

    def __init__(self, t):
        self.type = t

    def flatten(self, x, leaves, _get=_get_kind, _LEAF=_LEAF):
        for c in x:
            if _get(type(c)) is not _LEAF:
                return (self, None, _flat_seq(x, leaves))
        leaves.extend(x)
        return (self, None, (None,) * len(x))

    def one_level(self, x):
        return x, None

    def keyed(self, x):
        return [(GetAttrKey(f), c) for f, c in zip(self.type._fields, x)], None

    def build(self, aux, children):
        return self.type(*children)

    def keys(self, aux, n):
        return [GetAttrKey(f) for f in self.type._fields[:n]]

    def check(self, spec, x):
        if not isinstance(x, tuple) or not hasattr(x, "_fields"):
            raise ValueError(f"Expected named tuple, got {x!r}.")
        if type(x) is not self.type:
            raise ValueError(f"Named tuple type mismatch: expected type: {self.type!r}, "
                             f"tuple: {x!r}.")
        if len(x) != len(spec[2]):
            raise ValueError(f"Named tuple arity mismatch: {len(x)} != {len(spec[2])}; "
                             f"tuple: {x!r}.")
        return x

    def repr_node(self, aux, kids):
        return f"CustomNode(namedtuple[{self.type.__name__}], [{', '.join(kids)}])"

    def walk_data(self, aux):
        return self.type

    def fol(self, x):
        return list(x), self.type

    def folk(self, x):
        return self.keyed(x)[0], self.type


def _type_name(t):
    return getattr(t, "__name__", None) or repr(t)


class _CustomKind(_Kind):
    """A type registered with ``register_pytree_node`` (or the keyed variants)."""
    __slots__ = ("to_iter", "from_iter", "to_iter_keys")

    def __init__(self, t, to_iter, from_iter, to_iter_keys):
        self.type = t
        self.to_iter = to_iter
        self.from_iter = from_iter
        self.to_iter_keys = to_iter_keys

    def _call_flatten(self, x):
        r = self.to_iter(x)
        if not isinstance(r, tuple) or len(r) != 2:
            raise ValueError("The to_iterable function for a custom PyTree node should return "
                             f"a (children, aux_data) tuple, got {r!r}")
        try:
            iter(r[0])
        except TypeError:
            raise ValueError("The to_iterable function for a custom PyTree node should return "
                             "a (children, aux_data) tuple where 'children' is iterable, "
                             f"got {r!r}") from None
        return r

    def flatten(self, x, leaves):
        children, aux = self._call_flatten(x)
        return (self, aux, _flat_seq(children, leaves))

    def one_level(self, x):
        children, aux = self._call_flatten(x)
        return list(children), aux

    def keyed(self, x):
        if self.to_iter_keys is None:
            children, aux = self.one_level(x)
            return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], aux
        r = self.to_iter_keys(x)
        msg = ("The to_iterable_with_keys function for a custom PyTree node should return a "
               "(key_leaf_pairs, aux_data) tuple")
        if not isinstance(r, tuple) or len(r) != 2:
            raise ValueError(f"{msg}, got {r!r}")
        try:
            pairs = list(r[0])
        except TypeError:
            raise ValueError(f"{msg} where 'key_leaf_pairs' is iterable, got {r!r}") from None
        for p in pairs:
            if not isinstance(p, tuple) or len(p) != 2:
                raise ValueError(f"{msg} where each element of 'key_leaf_pairs' is a "
                                 f"(key, child) pair, got {p!r}")
        return pairs, r[1]

    def build(self, aux, children):
        return self.from_iter(aux, children)

    def check(self, spec, x):
        if type(x) is not self.type:
            raise ValueError(f"Custom node type mismatch: expected type: {self.type!r}, "
                             f"value: {x!r}.")
        children, aux = self._call_flatten(x)
        if spec[1] != aux:
            raise ValueError(f"Mismatch custom node data: {spec[1]!r} != {aux!r}; "
                             f"value: {x!r}.")
        children = list(children)
        if len(children) != len(spec[2]):
            raise ValueError(f"Custom type arity mismatch: {len(children)} != "
                             f"{len(spec[2])}; value: {x!r}.")
        return children

    def repr_node(self, aux, kids):
        return f"CustomNode({_type_name(self.type)}[{aux}], [{', '.join(kids)}])"

    def fol(self, x):
        return self._call_flatten(x)

    def folk(self, x):
        return self.keyed(x)


class _DataclassKind(_Kind):
    """A type registered with ``register_dataclass``: data fields are children, meta fields
    (a tuple, in ``meta_fields`` order) are the static auxiliary data."""
    __slots__ = ("data_fields", "meta_fields")

    def __init__(self, t, data_fields, meta_fields):
        self.type = t
        self.data_fields = tuple(data_fields)
        self.meta_fields = tuple(meta_fields)

    def flatten(self, x, leaves):
        children = [getattr(x, n) for n in self.data_fields]
        return (self, tuple([getattr(x, n) for n in self.meta_fields]),
                _flat_seq(children, leaves))

    def one_level(self, x):
        return ([getattr(x, n) for n in self.data_fields],
                tuple([getattr(x, n) for n in self.meta_fields]))

    def keyed(self, x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in self.data_fields],
                tuple([getattr(x, n) for n in self.meta_fields]))

    def build(self, aux, children):
        kwargs = dict(zip(self.meta_fields, aux))
        kwargs.update(zip(self.data_fields, children))
        return self.type(**kwargs)

    def keys(self, aux, n):
        return [GetAttrKey(f) for f in self.data_fields]

    def check(self, spec, x):
        if type(x) is not self.type:
            raise ValueError(f"Custom dataclass node type mismatch: expected type: "
                             f"{self.type!r}, value: {x!r}.")
        aux = tuple([getattr(x, n) for n in self.meta_fields])
        if spec[1] != aux:
            raise ValueError(f"Mismatch custom dataclass node data: {spec[1]!r} != {aux!r}; "
                             f"value: {x!r}.")
        return [getattr(x, n) for n in self.data_fields]

    def repr_node(self, aux, kids):
        return f"CustomNode({_type_name(self.type)}[{aux}], [{', '.join(kids)}])"


_TUPLE = _TupleKind()
_TUPLE.type = tuple
_LIST = _ListKind()
_LIST.type = list
_DICT = _DictKind()
_DICT.type = dict
_NONE = _NoneKind()
_NONE.type = type(None)
_NONE_SPEC = (_NONE, None, ())

for _k in (_TUPLE, _LIST, _DICT, _NONE):
    _registered[_k.type] = _k
_kinds.update(_registered)
for _t in (int, float, complex, bool, str, bytes):
    _kinds[_t] = _LEAF
del _k, _t
