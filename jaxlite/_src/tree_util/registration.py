"""Registering pytree node types: custom classes, dataclasses, static types, and the
standard-library containers (``OrderedDict``, ``defaultdict``) and ``Partial``."""
from __future__ import annotations

import collections
import dataclasses
import functools
import operator
from collections.abc import Callable

from jaxlite._src.tree_util.keys import DictKey
from jaxlite._src.tree_util.kinds import _dict_items, _registered
from jaxlite._src.tree_util.treedef import _RegistryEntry, _registry, default_registry

__all__ = ["register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
           "register_pytree_with_keys_class", "register_dataclass", "register_static",
           "static", "Partial"]


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
