"""Sharding visualisation: ``jax.debug.visualize_sharding`` and ``visualize_array_sharding``.

Draws which device holds which block of a 1-D or 2-D array as a ``rich`` table, cell for cell
the table JAX 0.10.2 prints (box drawing, cell sizes, labels such as ``CPU 0,1``, colours only
on a colour-capable console).

How a picture is laid out (observed from JAX and reproduced here):

* The blocks of the array are found from ``sharding.devices_indices_map(shape)``: a block is a
  distinct tuple of index ranges, labelled with the platform in upper case and the sorted ids
  of every device that holds it (``CPU 0,1``; ids are joined with commas, never collapsed
  into ranges).
* A 2-D array is a grid scaled so that the whole array is ``int(10 * scale)`` lines high and
  ``2.5`` characters wide per line of height times its aspect ratio (columns / rows).  A cell
  asks for ``int(fraction * base)`` of that; its width is then clamped to
  ``[min_width, max_width]``.  A 1-D array is one row of one-line cells, its "aspect ratio"
  being ``1 / length``.
* Without colour the cells are boxed (``rich.box.SQUARE`` with lines between rows); with
  colour there are no borders, each cell gets a background from ``color_map`` and one more
  character of padding on every side.
* ``max_width`` is also the console width: a table wider than that is squeezed by ``rich``.

Where jaxlite differs from JAX, on purpose:

* The default colour map is matplotlib's ``tab20b``, built in, so colours do not depend on
  matplotlib being installed (JAX silently prints no colours without matplotlib).
* Uneven shardings (blocks of different sizes, or empty blocks) are drawn, each cell sized by
  its own block; JAX fails on them with an internal ``AssertionError``/``KeyError``.
* Shapes with a zero-sized dimension raise a ``ValueError`` saying so (JAX: ZeroDivisionError).
"""
from __future__ import annotations

from typing import Callable, Sequence, Union

import numpy as np

__all__ = ["visualize_sharding", "visualize_array_sharding"]

Color = Union[tuple, str]
ColorMap = Callable[[float], tuple]

# matplotlib's "tab20b" colour map (d3's category20b): 20 colours, listed.
_TAB20B_HEX = (
    "393b79", "5254a3", "6b6ecf", "9c9ede", "637939", "8ca252", "b5cf6b", "cedb9c",
    "8c6d31", "bd9e39", "e7ba52", "e7cb94", "843c39", "ad494a", "d6616b", "e7969c",
    "7b4173", "a55194", "ce6dbd", "de9ed6",
)
_TAB20B = tuple(tuple(int(h[k:k + 2], 16) / 255 for k in (0, 2, 4)) + (1.0,)
                for h in _TAB20B_HEX)


def tab20b(x: float) -> tuple:
    """matplotlib's ``tab20b`` colour map: ``x`` in [0, 1] to an RGBA tuple of floats.

    Like a matplotlib ``ListedColormap`` of 20 colours, ``x`` picks colour ``int(x * 20)``
    (1.0 picks the last one; values outside [0, 1] are clipped to the ends)."""
    k = int(float(x) * len(_TAB20B))
    return _TAB20B[min(max(k, 0), len(_TAB20B) - 1)]


# Proportions of the drawing.
_LINES_PER_SCALE = 10          # the whole array is int(10 * scale) lines high
_CHARS_PER_LINE = 2.5          # a character is about 2.5 times higher than wide


def _bounds(index, extent: int) -> tuple[int, int]:
    """``(start, stop)`` of one dimension's entry in ``devices_indices_map``."""
    if isinstance(index, (int, np.integer)) and not isinstance(index, bool):
        return int(index), int(index) + 1
    if not isinstance(index, slice):
        raise TypeError(
            f"visualize_sharding: devices_indices_map gave the index {index!r}; expected a "
            "slice (or an int) per dimension. Pass a jax.sharding.Sharding.")
    if index.step not in (None, 1):
        raise ValueError(
            f"visualize_sharding: a shard is indexed by the strided slice {index!r}; only "
            "contiguous blocks (step 1) can be drawn.")
    start = 0 if index.start is None else index.start
    stop = extent if index.stop is None else index.stop
    return int(start), int(stop)


class _Block:
    """One cell of the picture: an index range per dimension and the devices that hold it."""
    __slots__ = ("ranges", "device_ids", "platform")

    def __init__(self, ranges, platform):
        self.ranges = ranges
        self.device_ids: set[int] = set()
        self.platform = platform

    def label(self) -> str:
        return f"{self.platform.upper()} " + ",".join(str(i) for i in sorted(self.device_ids))


def _blocks(shape: tuple[int, ...], sharding) -> dict[tuple[int, int], _Block]:
    """The blocks of ``shape`` keyed by (row, column) in the drawing.

    A block's row (column) is the rank of its start among the distinct starts in dimension 0
    (the last dimension); a 1-D array is one row."""
    by_range: dict[tuple, _Block] = {}
    for device, index in sharding.devices_indices_map(shape).items():
        if index is None or len(index) != len(shape):
            raise ValueError(
                f"visualize_sharding: devices_indices_map({shape}) gave {index!r} for device "
                f"{device!r}; expected one slice per dimension of the shape.")
        ranges = tuple(_bounds(i, n) for i, n in zip(index, shape))
        block = by_range.get(ranges)
        if block is None:
            block = by_range[ranges] = _Block(ranges, device.platform)
        block.device_ids.add(device.id)
    if not by_range:
        raise ValueError(f"visualize_sharding: {sharding!r} places the array on no device.")
    # Rank of each start among the distinct starts of dimension 0 and of the last dimension.
    ranks = [{s: k for k, s in enumerate(sorted({b.ranges[d][0] for b in by_range.values()}))}
             for d in range(len(shape))]
    if len(shape) == 1:
        key = lambda b: (0, ranks[0][b.ranges[0][0]])
    else:
        key = lambda b: (ranks[0][b.ranges[0][0]], ranks[1][b.ranges[1][0]])
    grid: dict[tuple[int, int], _Block] = {}
    for block in by_range.values():
        k = key(block)
        if k in grid:
            raise ValueError(
                f"visualize_sharding: the shards of this sharding overlap without coinciding "
                f"({grid[k].ranges} and {block.ranges}), so they do not form a grid that can be "
                "drawn.")
        grid[k] = block
    n_rows = 1 + max(r for r, _ in grid)
    n_cols = 1 + max(c for _, c in grid)
    if len(grid) != n_rows * n_cols:
        raise ValueError(
            "visualize_sharding: the shards of this sharding do not tile the array as a grid "
            f"({len(grid)} blocks for {n_rows} rows and {n_cols} columns), so it cannot be drawn.")
    return grid


def _color_order(n: int) -> list[int]:
    """The order in which the cells (row-major) take the ``n`` evenly spaced colour-map values.

    Consecutive cells are about half the colour map apart: cell k takes value
    ``k * (n // 2 + (n even)) mod n``."""
    step = n // 2 + (1 if n % 2 == 0 else 0)
    return [(k * step) % n for k in range(n)]


def _hex(color: Color) -> str:
    """An RGB(A) tuple of floats in [0, 1] (or a colour string, kept) as ``#RRGGBB``."""
    if isinstance(color, str):
        return color
    r, g, b = (int(c * 255) for c in tuple(color)[:3])
    return f"#{r:02X}{g:02X}{b:02X}"


def _text_color(background: str) -> str:
    """Black text on light backgrounds, white on dark ones."""
    if not (isinstance(background, str) and len(background) == 7 and background[0] == "#"):
        return "#ffffff"
    r, g, b = (int(background[k:k + 2], 16) for k in (1, 3, 5))
    return "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"


def visualize_sharding(shape: Sequence[int], sharding, *, use_color: bool = True,
                       scale: float = 1., min_width: int = 9, max_width: int = 80,
                       color_map: ColorMap | None = None):
    """Prints which device holds which block of an array of ``shape`` under ``sharding``.

    Prints to standard output the ``rich`` table JAX prints: one cell per block of the array,
    sized in proportion to the block and labelled with the devices holding it, e.g.::

        ┌──────────┬──────────┐
        │  CPU 0   │  CPU 1   │
        ├──────────┼──────────┤
        │  CPU 2   │  CPU 3   │
        └──────────┴──────────┘

    Args:
      shape: the array's shape; it must have 1 or 2 dimensions.
      sharding: a ``jax.sharding.Sharding`` (anything with ``devices_indices_map(shape)``
        returning, for each device with ``.id`` and ``.platform``, one slice per dimension).
      use_color: colour the cells (without borders) when the console supports colour (a
        terminal, Jupyter, or ``FORCE_COLOR`` set); otherwise cells are boxed in lines.
      scale: size of the drawing; the whole array is ``int(10 * scale)`` lines high.
      min_width, max_width: bounds of a cell's width in characters; ``max_width`` is also the
        console width, beyond which ``rich`` squeezes the table.
      color_map: a function from a float in [0, 1] to an RGB(A) tuple of floats in [0, 1],
        such as a matplotlib colour map; defaults to matplotlib's ``tab20b`` (built in).

    Raises:
      ValueError: if ``shape`` does not have 1 or 2 dimensions, or has a zero-sized dimension.
    """
    try:
        import rich.align
        import rich.box
        import rich.console
        import rich.padding
        import rich.style
        import rich.table
    except ModuleNotFoundError:
        raise ValueError("`visualize_sharding` requires `rich` to be installed: "
                         "pip install rich") from None

    shape = tuple(int(n) for n in shape)
    if len(shape) not in (1, 2):
        raise ValueError(
            "`visualize_sharding` only works for shapes with 1 and 2 dimensions. "
            f"Got shape {shape} ({len(shape)} dimensions); reshape the array to 1 or 2 "
            "dimensions first, e.g. x.reshape(x.shape[0], -1), and visualize that.")
    if 0 in shape:
        raise ValueError(
            f"`visualize_sharding` cannot draw shape {shape}: it has no elements. "
            "Every dimension must have at least one element.")

    console = rich.console.Console(width=max_width)
    use_color = bool(use_color) and console.color_system is not None
    if use_color and not color_map:
        color_map = tab20b

    grid = _blocks(shape, sharding)
    n_rows = 1 + max(r for r, _ in grid)
    n_cols = 1 + max(c for _, c in grid)

    # The whole array is base_height lines high and base_width * 2.5 characters wide (its
    # aspect ratio, a character being about 2.5 times higher than wide); a cell gets its
    # fraction of each.
    base_height = int(_LINES_PER_SCALE * scale)
    base_width = int(base_height * ((shape[1] if len(shape) == 2 else 1) / shape[0]))

    if use_color:
        values = np.linspace(0, 1, n_rows * n_cols)
        colors = iter([color_map(values[k]) for k in _color_order(n_rows * n_cols)])
    table = rich.table.Table(
        show_header=False, show_lines=not use_color, padding=0, highlight=not use_color,
        pad_edge=False, box=None if use_color else rich.box.SQUARE)
    for r in range(n_rows):
        row = []
        for c in range(n_cols):
            block = grid[r, c]
            label = block.label()
            (start, stop) = block.ranges[-1]
            width = int((stop - start) / shape[-1] * base_width * _CHARS_PER_LINE)
            width = min(max(width, min_width), max_width)
            if len(shape) == 2:
                (start, stop) = block.ranges[0]
                height = int((stop - start) / shape[0] * base_height)
            else:
                height = 1
            left = (width - len(label) - 2) // 2
            right = width - len(label) - 2 - left
            top = (height - 2) // 2
            bottom = height - 2 - top
            if use_color:
                background = _hex(next(colors))
                style = rich.style.Style(bgcolor=background, color=_text_color(background))
                top, right, bottom, left = top + 1, right + 1, bottom + 1, left + 1
            else:
                style = rich.style.Style()
            pad = tuple(max(p, 0) for p in (top, right, bottom, left))
            row.append(rich.padding.Padding(
                rich.align.Align(label, "center", vertical="middle"), pad, style=style))
        table.add_row(*row)
    console.print(table)


def visualize_array_sharding(arr, **kwargs):
    """Prints how the array ``arr`` is sharded over devices.

    The same as ``visualize_sharding(arr.shape, arr.sharding, **kwargs)``; see
    :func:`visualize_sharding` for the keyword arguments.

    Raises:
      TypeError: if ``arr`` has no sharding (a NumPy array, or a traced value inside ``jit``).
    """
    try:
        sharding = arr.sharding
    except AttributeError:
        if hasattr(arr, "aval"):
            raise TypeError(
                "visualize_array_sharding got a traced value (inside jit, vmap, grad, ...), "
                "which has no sharding yet in jaxlite. Call it on the concrete array, outside "
                "the transformation (e.g. on the jitted function's result).") from None
        raise TypeError(
            f"visualize_array_sharding needs a jax Array, got {type(arr).__name__}, which has "
            "no sharding. Put it on devices first, e.g. jax.device_put(x, sharding).") from None
    return visualize_sharding(arr.shape, sharding, **kwargs)


def inspect_array_sharding(value, *, callback):
    """Call ``callback(sharding)`` with the sharding of ``value`` (a pytree's leaves each),
    eagerly or from inside ``jit`` (then at trace time, as JAX calls it at compile time).
    Returns None. Inside ``jit`` the sharding is known from the value's type when it is laid
    out over Explicit mesh axes, and trivially with one device; other traced layouts are only
    decided when jaxlite partitions the program, so they raise NotImplementedError."""
    from jaxlite._src import tree_util
    from jaxlite._src.runtime.devices import devices
    from jaxlite._src.sharding.shardings import SingleDeviceSharding
    for leaf in tree_util.tree_leaves(value):
        sharding = getattr(leaf, "sharding", None) if not hasattr(leaf, "_trace") else None
        if sharding is None:
            aval = getattr(leaf, "aval", None)
            s = getattr(aval, "sharding", None)
            mesh = getattr(s, "mesh", None)
            if s is not None and mesh is not None and getattr(mesh, "shape_tuple", ()) and \
                    any(p is not None for p in getattr(s, "spec", ())):
                sharding = s
            elif len(devices()) == 1:
                sharding = SingleDeviceSharding(devices()[0])
            elif aval is None:
                raise TypeError(f"inspect_array_sharding: {type(leaf).__name__} is not an "
                                "array")
            else:
                raise NotImplementedError(
                    "inspect_array_sharding inside jit with several devices: jaxlite decides "
                    "the layout of this traced value only when it partitions the program. "
                    "Inspect the jitted function's result (its .sharding), or lay the value "
                    "out over Explicit mesh axes (jax.sharding.reshard) so its type holds "
                    "the sharding.")
        callback(sharding)
    return None
