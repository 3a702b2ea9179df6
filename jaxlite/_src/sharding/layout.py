"""``jax.experimental.layout``: ``Layout`` (a memory order of an array's dimensions) and
``Format`` (a layout together with a sharding).

jaxlite stores every array in C order (NumPy's row-major layout), so the only layout it
produces is the default one; these classes describe layouts and formats for code that passes
them around (``Format(layout, sharding)``), and ``Layout.AUTO`` stands for "let the compiler
choose", which jaxlite resolves to row-major.
"""
from __future__ import annotations

__all__ = ["Layout", "Format"]


class Layout:
    """The order of an array's dimensions in memory, from major to minor (None: default)."""
    __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")

    def __init__(self, major_to_minor=None, tiling=None, sub_byte_element_size_in_bits=0,
                 _tiling=None):
        self.major_to_minor = None if major_to_minor is None else tuple(major_to_minor)
        self.tiling = tiling if tiling is not None else _tiling
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    @classmethod
    def row_major(cls, ndim):
        """The C-order layout of a rank-``ndim`` array (jaxlite's layout)."""
        return cls(tuple(range(ndim)))

    def __eq__(self, other):
        return isinstance(other, Layout) and self.major_to_minor == other.major_to_minor \
            and self.tiling == other.tiling

    def __hash__(self):
        return hash((self.major_to_minor, self.tiling))

    def __repr__(self):
        return f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling})"


Layout.AUTO = Layout()   # "compiler's choice" (row-major in jaxlite)


class Format:
    """A layout and a sharding: how an array is laid out in memory and across devices."""
    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        self.layout = layout
        self.sharding = sharding

    def __eq__(self, other):
        return isinstance(other, Format) and self.layout == other.layout and \
            self.sharding == other.sharding

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format({self.layout!r}, {self.sharding!r})"
