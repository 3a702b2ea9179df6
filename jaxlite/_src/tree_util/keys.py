"""Key-path entries for pytrees (``jax.tree_util.SequenceKey`` & co.) and ``keystr``.

A key path is a tuple of entries, one per level of nesting, that says how to reach a leaf
from the root: ``(DictKey('params'), SequenceKey(0), GetAttrKey('w'))`` prints as
``['params'][0].w``.  The entry classes are small immutable value objects: equal when they
have the same class and the same payload, hashable, picklable and usable in ``match``
statements (``case SequenceKey(idx=i)``).
"""
from __future__ import annotations

import operator
from typing import Any, TypeVar

__all__ = ["SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "KeyEntry", "KeyPath",
           "keystr"]

# The public typing aliases, as JAX spells them: an entry can be any object (user
# ``flatten_with_keys`` functions may return their own key types).
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyPath = tuple[KeyEntry, ...]


def _as_int(value, cls_name, arg):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{cls_name}(): argument '{arg}' must be an int, "
                        f"got {type(value).__name__}") from None


class SequenceKey:
    """Key-path entry for the ``idx``-th element of a tuple or list; prints as ``[idx]``."""
    __slots__ = ("_idx",)
    __match_args__ = ("idx",)

    def __init__(self, idx: int):
        object.__setattr__(self, "_idx", _as_int(idx, "SequenceKey", "idx"))

    @property
    def idx(self) -> int:
        """The position of the child in its parent sequence."""
        return self._idx

    def __str__(self):
        return f"[{self._idx!r}]"

    def __repr__(self):
        return f"SequenceKey(idx={self._idx!r})"

    def __eq__(self, other):
        if type(other) is not SequenceKey:
            return NotImplemented
        return self._idx == other._idx

    def __hash__(self):
        return hash((SequenceKey, self._idx))

    def __setattr__(self, name, value):
        raise AttributeError("property of 'SequenceKey' object has no setter")

    def __reduce__(self):
        return (SequenceKey, (self._idx,))


class DictKey:
    """Key-path entry for the value stored under ``key`` in a mapping; prints as ``[key!r]``."""
    __slots__ = ("_key",)
    __match_args__ = ("key",)

    def __init__(self, key: Any):
        object.__setattr__(self, "_key", key)

    @property
    def key(self) -> Any:
        """The mapping key of the child."""
        return self._key

    def __str__(self):
        return f"[{self._key!r}]"

    def __repr__(self):
        return f"DictKey(key={self._key!r})"

    def __eq__(self, other):
        if type(other) is not DictKey:
            return NotImplemented
        return self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __setattr__(self, name, value):
        raise AttributeError("property of 'DictKey' object has no setter")

    def __reduce__(self):
        return (DictKey, (self._key,))


class GetAttrKey:
    """Key-path entry for the attribute ``name`` of an object; prints as ``.name``."""
    __slots__ = ("_name",)
    __match_args__ = ("name",)

    def __init__(self, name: str):
        if not isinstance(name, str):
            raise TypeError(f"GetAttrKey(): argument 'name' must be a str, "
                            f"got {type(name).__name__}")
        object.__setattr__(self, "_name", name)

    @property
    def name(self) -> str:
        """The attribute name of the child."""
        return self._name

    def __str__(self):
        return f".{self._name}"

    def __repr__(self):
        return f"GetAttrKey(name={self._name!r})"

    def __eq__(self, other):
        if type(other) is not GetAttrKey:
            return NotImplemented
        return self._name == other._name

    def __hash__(self):
        return hash((GetAttrKey, self._name))

    def __setattr__(self, name, value):
        raise AttributeError("property of 'GetAttrKey' object has no setter")

    def __reduce__(self):
        return (GetAttrKey, (self._name,))


class FlattenedIndexKey:
    """Key-path entry for the ``key``-th child of a custom node registered without keys.

    Prints as ``[<flat index key>]``: the index is the position among the children the
    node's flatten function returned, not a real subscript of the object.
    """
    __slots__ = ("_key",)
    __match_args__ = ("key",)

    def __init__(self, key: int):
        object.__setattr__(self, "_key", _as_int(key, "FlattenedIndexKey", "key"))

    @property
    def key(self) -> int:
        """The position of the child in the flattened children."""
        return self._key

    def __str__(self):
        return f"[<flat index {self._key!r}>]"

    def __repr__(self):
        return f"FlattenedIndexKey(key={self._key!r})"

    def __eq__(self, other):
        if type(other) is not FlattenedIndexKey:
            return NotImplemented
        return self._key == other._key

    def __hash__(self):
        return hash((FlattenedIndexKey, self._key))

    def __setattr__(self, name, value):
        raise AttributeError("property of 'FlattenedIndexKey' object has no setter")

    def __reduce__(self):
        return (FlattenedIndexKey, (self._key,))


def _simple_str(entry) -> str:
    t = type(entry)
    if t is SequenceKey:
        return str(entry._idx)
    if t is DictKey or t is FlattenedIndexKey:
        return str(entry._key)
    if t is GetAttrKey:
        return entry._name
    return str(entry)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path as text.

    By default every entry is rendered with ``str`` (``[0]``, ``['a']``, ``.x``) and the
    pieces are concatenated, giving a Python-like accessor such as ``['a'][0].x``.  With
    ``simple=True`` only the bare payload of each entry is used (``a``, ``0``, ``x``), which
    is shorter but ambiguous; combine it with ``separator`` (e.g. ``'/'``) to get readable
    names such as ``a/0/x``.  Entries that are not one of the four key classes are
    rendered with ``str``.
    """
    fn = _simple_str if simple else str
    return separator.join([fn(k) for k in keys])


for _cls in (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey):
    _cls.__module__ = "jaxlite.tree_util"
del _cls
