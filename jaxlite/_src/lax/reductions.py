"""lax reductions and cumulative scans."""
from __future__ import annotations

import numpy as np

from jaxlite._src.api.sharding_types import place_as
from jaxlite._src.sharding.types import resolve_out_sharding
from jaxlite._src.core import dtypes
from jaxlite._src.prims import reductions as rp

__all__ = ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or",
           "reduce_xor", "argmax", "argmin", "cumsum", "cumprod", "cummax", "cummin"]


def _axes(axes):
    return tuple(int(a) for a in axes)


def reduce_sum(operand, axes, *, out_sharding=None):
    """Sum over ``axes``."""
    s = resolve_out_sharding(out_sharding)
    out = rp.reduce_sum_p.bind(operand, axes=_axes(axes), out_sharding=s)
    return out if s is None else place_as(out, s)


def reduce_prod(operand, axes):
    """Product over ``axes``."""
    return rp.reduce_prod_p.bind(operand, axes=_axes(axes), out_sharding=None)


def reduce_max(operand, axes):
    """Maximum over ``axes``."""
    return rp.reduce_max_p.bind(operand, axes=_axes(axes), out_sharding=None)


def reduce_min(operand, axes):
    """Minimum over ``axes``."""
    return rp.reduce_min_p.bind(operand, axes=_axes(axes), out_sharding=None)


def reduce_and(operand, axes):
    """Logical/bitwise AND over ``axes``."""
    return rp.reduce_and_p.bind(operand, axes=_axes(axes), out_sharding=None)


def reduce_or(operand, axes):
    """Logical/bitwise OR over ``axes``."""
    return rp.reduce_or_p.bind(operand, axes=_axes(axes), out_sharding=None)


def reduce_xor(operand, axes):
    """Logical/bitwise XOR over ``axes``."""
    return rp.reduce_xor_p.bind(operand, axes=_axes(axes), out_sharding=None)


def argmax(operand, axis, index_dtype):
    """Index of the maximum along ``axis``."""
    return rp.argmax_p.bind(operand, axes=(int(axis),),
                            index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """Index of the minimum along ``axis``."""
    return rp.argmin_p.bind(operand, axes=(int(axis),),
                            index_dtype=dtypes.canonicalize_dtype(index_dtype))


def _scan_axis(operand, axis):
    """``axis`` of a cumulative reduction, checked against the operand's rank (JAX's
    ValueError) before any transformation's rule reads the shape."""
    axis = int(axis)
    if axis < 0:
        raise ValueError("XLA operations do not allow negative axes")
    if axis >= np.ndim(operand):
        raise ValueError(f"axis {axis} is out of bounds for array of shape "
                         f"{tuple(np.shape(operand))}")
    return axis


def cumsum(operand, axis=0, reverse=False):
    """Cumulative sum along ``axis``."""
    return rp.cumsum_p.bind(operand, axis=_scan_axis(operand, axis), reverse=bool(reverse))


def cumprod(operand, axis=0, reverse=False):
    """Cumulative product along ``axis``."""
    return rp.cumprod_p.bind(operand, axis=_scan_axis(operand, axis), reverse=bool(reverse))


def cummax(operand, axis=0, reverse=False):
    """Cumulative maximum along ``axis``."""
    return rp.cummax_p.bind(operand, axis=_scan_axis(operand, axis), reverse=bool(reverse))


def cummin(operand, axis=0, reverse=False):
    """Cumulative minimum along ``axis``."""
    return rp.cummin_p.bind(operand, axis=_scan_axis(operand, axis), reverse=bool(reverse))
