"""lax's gather and scatter operators (``jax.lax.gather``, ``scatter``, ``scatter_add``, ...)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.prims import gather as gp
from jaxlite._src.prims.gather import (GatherDimensionNumbers, GatherScatterMode,
                                       ScatterDimensionNumbers)

__all__ = ["GatherDimensionNumbers", "ScatterDimensionNumbers", "GatherScatterMode", "gather",
           "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
           "scatter_max", "scatter_apply", "index_take"]


def _value(x):
    from jaxlite._src.numpy.util import asarray_value
    return asarray_value(x)


def _dims(t):
    return tuple(int(d) for d in t)


def _gather_dnums(dn):
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError("gather dimension_numbers must be a GatherDimensionNumbers; got "
                        f"{type(dn).__name__}.")
    return GatherDimensionNumbers(*(_dims(t) for t in dn))


def _scatter_dnums(dn):
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError("scatter dimension_numbers must be a ScatterDimensionNumbers; got "
                        f"{type(dn).__name__}.")
    return ScatterDimensionNumbers(*(_dims(t) for t in dn))


def gather(operand, start_indices, dimension_numbers, slice_sizes, *, unique_indices=False,
           indices_are_sorted=False, mode=None, fill_value=None):
    """Gather windows of ``slice_sizes`` from ``operand`` at ``start_indices`` (XLA gather).

    ``mode`` defaults to PROMISE_IN_BOUNDS (out-of-bounds starts are clamped); with 'fill',
    out-of-bounds windows read ``fill_value`` (NaN, the minimum signed / maximum unsigned
    integer, or True by default).
    """
    operand, start_indices = _value(operand), _value(start_indices)
    parsed = GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                        else mode)
    if parsed is GatherScatterMode.FILL_OR_DROP:
        if fill_value is None:
            fill_value = gp._default_fill(operand.dtype)
    else:
        fill_value = None
    return gp.gather_p.bind(operand, start_indices,
                            dimension_numbers=_gather_dnums(dimension_numbers),
                            slice_sizes=_dims(slice_sizes),
                            indices_are_sorted=bool(indices_are_sorted),
                            unique_indices=bool(unique_indices), mode=parsed,
                            fill_value=fill_value)


def _update_jaxpr(fn, dtype):
    """The scalar combiner ``fn`` traced to a jaxpr (JAX's ``update_jaxpr`` parameter)."""
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    aval = ShapedArray((), dtype)
    jaxpr, _, _ = trace_to_jaxpr(lambda a, b: [fn(a, b)], [aval, aval])
    return jaxpr


def _scatter(prim, combiner, operand, scatter_indices, updates, dimension_numbers,
             indices_are_sorted, unique_indices, mode):
    operand, scatter_indices, updates = (_value(operand), _value(scatter_indices),
                                         _value(updates))
    jaxpr = None if combiner is None else _update_jaxpr(combiner, operand.dtype)
    return prim.bind(operand, scatter_indices, updates,
                     dimension_numbers=_scatter_dnums(dimension_numbers),
                     indices_are_sorted=bool(indices_are_sorted),
                     unique_indices=bool(unique_indices),
                     mode=GatherScatterMode.from_any(mode), update_jaxpr=jaxpr,
                     update_consts=())


def _make_scatter(prim, combiner_name, doc):
    def fn(operand, scatter_indices, updates, dimension_numbers, *, indices_are_sorted=False,
           unique_indices=False, mode=None):
        from jaxlite._src.lax import elementwise as ew
        comb = None if combiner_name is None else getattr(ew, combiner_name)
        return _scatter(prim, comb, operand, scatter_indices, updates, dimension_numbers,
                        indices_are_sorted, unique_indices, mode)
    fn.__doc__ = doc
    return fn


scatter = _make_scatter(gp.scatter_p, None, """Overwrite windows of ``operand`` with
``updates`` at ``scatter_indices`` (XLA scatter; duplicate indices: one of them wins).
``mode`` defaults to FILL_OR_DROP: out-of-bounds windows are dropped.""")
scatter_add = _make_scatter(gp.scatter_add_p, "add", """Add ``updates`` into windows of
``operand`` at ``scatter_indices`` (duplicates accumulate).""")
scatter_sub = _make_scatter(gp.scatter_sub_p, "sub", """Subtract ``updates`` from windows of
``operand`` at ``scatter_indices`` (duplicates accumulate).""")
scatter_mul = _make_scatter(gp.scatter_mul_p, "mul", """Multiply windows of ``operand`` at
``scatter_indices`` by ``updates`` (duplicates accumulate).""")
scatter_min = _make_scatter(gp.scatter_min_p, "min", """Elementwise minimum of windows of
``operand`` at ``scatter_indices`` and ``updates``.""")
scatter_max = _make_scatter(gp.scatter_max_p, "max", """Elementwise maximum of windows of
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
