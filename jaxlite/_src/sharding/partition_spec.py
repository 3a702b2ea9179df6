"""``PartitionSpec`` (``P``): how each array dimension is split over named mesh axes."""
from __future__ import annotations

__all__ = ["PartitionSpec", "UNCONSTRAINED"]


class _Unconstrained:
    """``P.UNCONSTRAINED``: the partitioner may choose this dimension's sharding."""
    __slots__ = ()

    def __repr__(self):
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_unconstrained, ())


UNCONSTRAINED = _Unconstrained()


def _unconstrained():
    return UNCONSTRAINED


def _check_entry(e):
    if e is None or e is UNCONSTRAINED or isinstance(e, str):
        return e
    if isinstance(e, (tuple, list)):
        if not all(isinstance(a, str) for a in e):
            raise TypeError(f"A tuple inside PartitionSpec must hold mesh axis names (str), "
                            f"got {tuple(e)!r}")
        return tuple(e)
    raise TypeError(f"PartitionSpec entries must be a mesh axis name (str), a tuple of names, "
                    f"None or P.UNCONSTRAINED; got {e!r} of type {type(e).__name__}")


class PartitionSpec(tuple):
    """One entry per array dimension: a mesh axis name, a tuple of names (split over several
    axes, major first), ``None`` (not split) or ``P.UNCONSTRAINED``.

    Trailing dimensions not mentioned are not split. Printed as ``P('x', None)``.
    """
    UNCONSTRAINED = UNCONSTRAINED

    def __new__(cls, *partitions, reduced=frozenset(), unreduced=frozenset()):
        parts = tuple(_check_entry(p) for p in partitions)
        self = super().__new__(cls, parts)
        self._unreduced = frozenset(unreduced)
        self._reduced = frozenset(reduced)
        used = [a for p in parts for a in _axes(p)]
        dup = {a for a in used if used.count(a) > 1}
        if dup:
            raise ValueError(f"A mesh axis may be used once in a PartitionSpec; "
                             f"{sorted(dup)} repeat in {self!r}")
        return self

    @property
    def unreduced(self):
        return self._unreduced

    @property
    def reduced(self):
        return self._reduced

    def __repr__(self):
        body = ", ".join(repr(p) for p in self)
        if len(self) == 1:
            body += ","
        return f"P({body})"

    __str__ = __repr__

    def __eq__(self, other):
        if isinstance(other, PartitionSpec):
            return _normalized(self) == _normalized(other) and \
                self._unreduced == other._unreduced
        return False

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(("P", _normalized(self), self._unreduced))

    def __reduce__(self):
        return (_rebuild, (tuple(self),))

    def index(self, value):
        """Position of ``value`` among the entries."""
        return tuple(self).index(value)

    def _normalized_spec_for_aval(self, ndim):
        parts = tuple(self) + (None,) * (ndim - len(self))
        return PartitionSpec(*parts)


def _rebuild(parts):
    return PartitionSpec(*parts)


def _axes(entry):
    """The mesh axes of one PartitionSpec entry, as a tuple."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    if isinstance(entry, str):
        return (entry,)
    return tuple(entry)


def _normalized(spec):
    parts = [(_axes(p) if p is not UNCONSTRAINED else p) for p in spec]
    parts = [p[0] if isinstance(p, tuple) and len(p) == 1 else p for p in parts]
    parts = [None if p == () else p for p in parts]
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


entry_axes = _axes
