"""lax sorting: sort, sort_key_val and top_k (mirrors ``jax.lax``)."""
from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from jaxlite._src.prims import sort as sp

__all__ = ["sort", "sort_key_val", "top_k"]


def _canonicalize_axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """Wraps XLA's `Sort
  <https://www.openxla.org/xla/operation_semantics#sort>`_ operator.

  For floating point inputs, -0.0 and 0.0 are treated as equivalent, and NaN values
  are sorted to the end of the array. For complex inputs, the sort order is
  lexicographic over the real and imaginary parts, with the real part primary.

  Args:
    operand : Array or sequence of arrays
    dimension : integer dimension along which to sort. Default: -1.
    is_stable : boolean specifying whether to use a stable sort. Default: True.
    num_keys : number of operands to treat as sort keys. Default: 1.
      For num_keys > 1, the sort order will be determined lexicographically using
      the first `num_keys` arrays, with the first key being primary.
      The remaining operands will be returned with the same permutation.

  Returns:
    operand : sorted version of the input or inputs.
  """
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
    """Returns top ``k`` values and their indices along the specified axis of ``operand``.

  Args:
    operand: N-dimensional array of non-complex type.
    k: integer specifying the number of top entries.
    axis: optional integer specifying the axis along which to compute the top
      ``k`` entries. Default is -1, indicating the last axis.

  Returns:
    A tuple ``(values, indices)`` where

    - ``values`` is an array containing the top k values along the last axis.
    - ``indices`` is an array containing the indices corresponding to values.

  ``values[..., i, ...]`` is the ``i``-th largest entry in ``operand`` along the
  specified axis, and its index is ``indices[..., i, ...]``.

  If two elements are equal, the lower-index element appears first.

  See also:
    - :func:`jax.lax.approx_max_k`
    - :func:`jax.lax.approx_min_k`

  Examples:
    Find the largest three values, and their indices, within an array:

    >>> x = jnp.array([9., 3., 6., 4., 10.])
    >>> values, indices = jax.lax.top_k(x, 3)
    >>> values
    Array([10.,  9.,  6.], dtype=float32)
    >>> indices
    Array([4, 0, 2], dtype=int32)
  """
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got [{k}].") from None
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    axis = _canonicalize_axis(axis, np.ndim(operand))
    return list(sp.top_k_p.bind(operand, k=k, axis=axis))
