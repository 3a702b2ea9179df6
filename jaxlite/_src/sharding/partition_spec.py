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


def _canonical_entry(e):
    """JAX's canonical form of one entry: a list becomes a tuple, a 1-tuple its name, an
    empty tuple None."""
    if isinstance(e, list):
        e = tuple(e)
    if isinstance(e, tuple):
        if len(e) == 0:
            return None
        if len(e) == 1:
            return e[0]
    return e


class PartitionSpec:
    """One entry per array dimension: a mesh axis name, a tuple of names (split over several
    axes, major first), ``None`` (not split) or ``P.UNCONSTRAINED``.

    Trailing dimensions not mentioned are not split, but (as in JAX 0.10) ``P('x')`` and
    ``P('x', None)`` are different specs: equality compares the entries as written (after
    ``('x',)`` -> ``'x'`` and ``()`` -> ``None``). Not a tuple, yet indexable, iterable and
    concatenable with tuples like one. Printed as ``P('x', None)``.
    """
    __slots__ = ("_partitions", "_unreduced", "_reduced")
    UNCONSTRAINED = UNCONSTRAINED

    def __init__(self, *partitions, reduced=frozenset(), unreduced=frozenset()):
        self._partitions = tuple(_canonical_entry(p) for p in partitions)
        self._unreduced = frozenset(unreduced)
        self._reduced = frozenset(reduced)
        for what, axes in (("unreduced", self._unreduced), ("reduced", self._reduced)):
            used = {a for p in self._partitions for a in _axes(p)}
            if used & axes:
                raise ValueError(f"partitions cannot overlap with {what} axes passed to "
                                 f"PartitionSpec. Got partitions: {self._partitions} and "
                                 f"{what} axes: {axes}")

    @property
    def partitions(self):
        return self._partitions

    @property
    def unreduced(self):
        return self._unreduced

    @property
    def reduced(self):
        return self._reduced

    def __repr__(self):
        parts = self._partitions
        body = ", ".join(repr(p) for p in parts)
        if len(parts) == 1:
            body += ","
        for what, axes in (("unreduced", self._unreduced), ("reduced", self._reduced)):
            if axes:
                body += (", " if parts else "") + f"{what}={set(sorted(axes))!r}"
        return f"P({body})"

    __str__ = __repr__

    def __len__(self):
        return len(self._partitions)

    def __iter__(self):
        return iter(self._partitions)

    def __getitem__(self, i):
        return self._partitions[i]

    def __add__(self, other):
        if isinstance(other, PartitionSpec):
            return PartitionSpec(*self._partitions, *other._partitions,
                                 unreduced=self._unreduced | other._unreduced,
                                 reduced=self._reduced | other._reduced)
        if isinstance(other, tuple):
            return PartitionSpec(*self._partitions, *other, unreduced=self._unreduced,
                                 reduced=self._reduced)
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, tuple):
            return PartitionSpec(*other, *self._partitions, unreduced=self._unreduced,
                                 reduced=self._reduced)
        return NotImplemented

    def __eq__(self, other):
        if not isinstance(other, PartitionSpec):
            return False
        return (self._partitions == other._partitions and self._unreduced == other._unreduced
                and self._reduced == other._reduced)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(("P", self._partitions, self._unreduced, self._reduced))

    def __reduce__(self):
        return (_rebuild, (self._partitions, self._unreduced, self._reduced))

    def index(self, value):
        """Position of ``value`` among the entries."""
        return self._partitions.index(value)

    def count(self, value):
        """How many entries equal ``value``."""
        return self._partitions.count(value)

    def update(self, **kwargs):
        """A copy with ``partitions``, ``unreduced`` or ``reduced`` replaced."""
        return PartitionSpec(*kwargs.get("partitions", self._partitions),
                             unreduced=kwargs.get("unreduced", self._unreduced),
                             reduced=kwargs.get("reduced", self._reduced))

    def _normalized_spec_for_aval(self, ndim):
        """This spec padded with None to ``ndim`` entries."""
        parts = self._partitions + (None,) * (ndim - len(self._partitions))
        return PartitionSpec(*parts, unreduced=self._unreduced, reduced=self._reduced)


def _rebuild(parts, unreduced=frozenset(), reduced=frozenset()):
    return PartitionSpec(*parts, unreduced=unreduced, reduced=reduced)


def _axes(entry):
    """The mesh axes of one PartitionSpec entry, as a tuple."""
    if entry is None or entry is UNCONSTRAINED:
        return ()
    if isinstance(entry, tuple):
        return entry
    return (entry,)


def _normalized(spec):
    parts = [(_axes(p) if p is not UNCONSTRAINED else p) for p in spec]
    parts = [p[0] if isinstance(p, tuple) and len(p) == 1 else p for p in parts]
    parts = [None if p == () else p for p in parts]
    while parts and parts[-1] is None:
        parts.pop()
    return tuple(parts)


entry_axes = _axes
