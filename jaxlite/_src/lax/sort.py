"""lax sorting: sort, sort_key_val and top_k (mirrors ``jax.lax``)."""
from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.prims import sort as sp

__all__ = ["sort", "sort_key_val", "top_k"]


def _canonicalize_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Sort ``operand`` (an array, or a sequence of arrays of one shape) along
    ``dimension``. With several operands the first ``num_keys`` decide the order (the first
    most), and the rest follow the same permutation; a tuple comes back. Floats order -0.0
    and 0.0 as equal and put NaNs last; complex numbers order by real part, then imaginary
    part. ``is_stable`` keeps equal keys in their original order."""
    if isinstance(operand, Sequence):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(operand)}")
        dimension = _canonicalize_axis(dimension, np.ndim(operand[0]))
        return tuple(sp.sort_p.bind(*operand, dimension=dimension, is_stable=bool(is_stable),
                                    num_keys=int(num_keys)))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    dimension = _canonicalize_axis(dimension, np.ndim(operand))
    return sp.sort_p.bind(operand, dimension=dimension, is_stable=bool(is_stable),
                          num_keys=1)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts ``keys`` along ``dimension`` and applies the same permutation to ``values``."""
    dimension = _canonicalize_axis(dimension, np.ndim(keys))
    k, v = sp.sort_p.bind(keys, values, dimension=dimension, is_stable=bool(is_stable),
                          num_keys=1)
    return k, v


def top_k(operand, k, *, axis=-1):
    """The ``k`` largest entries of ``operand`` along ``axis`` (the last by default), largest
    first, and their indices: ``[values, indices]``. Of equal entries the one at the lower
    index comes first. Complex operands raise ValueError, as in JAX."""
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got [{k}].") from None
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    dt = getattr(operand, "dtype", None)
    if dtypes.issubdtype(np.result_type(operand) if dt is None else dt, np.complexfloating):
        raise ValueError("top_k is not compatible with complex inputs.")
    axis = _canonicalize_axis(axis, np.ndim(operand))
    return list(sp.top_k_p.bind(operand, k=k, axis=axis))
