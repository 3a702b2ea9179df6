"""lax's gather and scatter operators (``jax.lax.gather``, ``scatter``, ``scatter_add``, ...)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.prims import gather as gp
from jaxlite._src.prims import scatter as sp
from jaxlite._src.prims.gather import (GatherDimensionNumbers, GatherScatterMode,
                                       ScatterDimensionNumbers)
from jaxlite._src.prims.operands import asarray_value

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
           "scatter_max", "scatter_apply", "index_take"]

_value = asarray_value


def _dims(t):
    return tuple(int(d) for d in t)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """Gather windows of ``slice_sizes`` from ``operand`` at ``start_indices`` (XLA gather).

    ``mode`` defaults to PROMISE_IN_BOUNDS (out-of-bounds starts are clamped); with 'fill',
    out-of-bounds windows read ``fill_value`` (NaN, the minimum signed / maximum unsigned
    integer, or True by default).
    """
    return gp.bind_gather(_value(operand), _value(start_indices), dimension_numbers,
                          slice_sizes, unique_indices=unique_indices,
                          indices_are_sorted=indices_are_sorted, mode=mode,
                          fill_value=fill_value)


def _make_scatter(prim, doc):
    def fn(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        return sp.bind_scatter(prim, _value(operand), _value(scatter_indices), _value(updates),
                               dimension_numbers, indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)
    fn.__doc__ = doc
    return fn


scatter = _make_scatter(sp.scatter_p, """Overwrite windows of ``operand`` with
``updates`` at ``scatter_indices`` (XLA scatter; duplicate indices: one of them wins).
``mode`` defaults to FILL_OR_DROP: out-of-bounds windows are dropped.""")
scatter_add = _make_scatter(sp.scatter_add_p, """Add ``updates`` into windows of
``operand`` at ``scatter_indices`` (duplicates accumulate).""")
scatter_sub = _make_scatter(sp.scatter_sub_p, """Subtract ``updates`` from windows of
``operand`` at ``scatter_indices`` (duplicates accumulate).""")
scatter_mul = _make_scatter(sp.scatter_mul_p, """Multiply windows of ``operand`` at
``scatter_indices`` by ``updates`` (duplicates accumulate).""")
scatter_min = _make_scatter(sp.scatter_min_p, """Elementwise minimum of windows of
``operand`` at ``scatter_indices`` and ``updates``.""")
scatter_max = _make_scatter(sp.scatter_max_p, """Elementwise maximum of windows of
``operand`` at ``scatter_indices`` and ``updates``.""")
for _f, _n in [(scatter, "scatter"), (scatter_add, "scatter_add"), (scatter_sub, "scatter_sub"),
               (scatter_mul, "scatter_mul"), (scatter_min, "scatter_min"),
               (scatter_max, "scatter_max")]:
    _f.__name__ = _f.__qualname__ = _n


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
    """Apply the unary ``func`` to the windows of ``operand`` at ``scatter_indices``
    (each element at most once, however often it is indexed)."""
    from jaxlite._src.lax import elementwise as ew
    from jaxlite._src.lax import shape as ls
    operand = _value(operand)
    zeros = ls.full(operand.shape, False, np.bool_)
    touched = scatter(zeros, scatter_indices, ls.full(update_shape, True, np.bool_),
                      dimension_numbers, indices_are_sorted=indices_are_sorted,
                      unique_indices=unique_indices, mode=mode)
    return ew.select(touched, func(operand), operand)


def index_take(src, idxs, axes):
    """``src`` gathered at the integer index arrays ``idxs`` along ``axes``."""
    from jaxlite._src.lax import shape as ls
    src = _value(src)
    idxs = [_value(i) for i in idxs]
    axes = _dims(axes)
    cols = [ls.expand_dims(i, (i.ndim,)) for i in idxs]
    indices = ls.concatenate(cols, len(idxs[0].shape)) if len(cols) > 1 else cols[0]
    slice_sizes = [1 if d in axes else n for d, n in enumerate(src.shape)]
    nb = idxs[0].ndim
    offset = tuple(range(nb, nb + src.ndim - len(axes)))
    dn = GatherDimensionNumbers(offset_dims=offset, collapsed_slice_dims=tuple(sorted(axes)),
                                start_index_map=axes)
    return gather(src, indices, dn, slice_sizes)
