"""The ``x.at[idx]`` property: functional updates lowered to ``scatter`` as JAX does.

``x.at[idx].set(v)`` returns a copy of ``x`` with ``x[idx] = v``; ``add``, ``subtract``,
``multiply``, ``divide``, ``power``, ``min``, ``max`` and ``apply`` combine instead, and
``get`` reads with gather options. Out-of-bounds updates are dropped by default
(``mode='drop'``); ``mode='clip'`` clamps the indices.
"""
from __future__ import annotations

import warnings

import numpy as np

from jaxlite._src.api.sharding_types import compute_with_out_sharding
from jaxlite._src.core import dtypes
from jaxlite._src.lax import indexing as lax_idx
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.indexing import _expand, index_to_gather, rewriting_take
from jaxlite._src.numpy.util import _convert, asarray_value, promote_dtypes

__all__ = []


def _scatter_update(x, idx, y, scatter_fn, indices_are_sorted, unique_indices, mode,
                    normalize=True):
    """Apply ``scatter_fn`` for ``x[idx] <op>= y`` (y broadcast to the indexed shape)."""
    x = asarray_value(x)
    y = asarray_value(y)
    dtype, weak = x.dtype, dtypes.is_weakly_typed(x)
    if y.dtype != dtype and dtypes.result_type(y, dtype) != dtype:
        warnings.warn(
            "scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={y.dtype} to dtype={dtype} with jax_numpy_dtype_promotion=standard. "
            "In future JAX releases this will result in an error.", FutureWarning,
            stacklevel=4)
    entries = _expand(idx, x.shape)
    ix = index_to_gather(x.shape, entries, normalize=normalize)
    # as JAX: combine in the promoted type, then cast back to x's dtype and weak type
    x, y = promote_dtypes(x, y)
    # broadcast y to x[idx]'s shape (with the new axes), then drop the new axes
    full_shape = list(ix.gather_shape)
    for d in ix.newaxis_dims:
        full_shape.insert(d, 1)
    for d in ix.empty_dims:
        full_shape[d] = 0
    ys = tuple(y.shape)
    if len(ys) > len(full_shape) or any(
            a not in (1, b) for a, b in zip(ys[::-1], full_shape[::-1])):
        raise ValueError(f"Incompatible shapes for broadcasting: {ys} and "
                         f"requested shape {tuple(full_shape)}")
    y = lax_shape.broadcast_in_dim(y, tuple(full_shape),
                                   tuple(range(len(full_shape) - len(ys), len(full_shape))))
    if ix.newaxis_dims:
        if ix.empty_dims:
            return x
        y = lax_shape.reshape(y, ix.gather_shape)
    dn = lax_idx.ScatterDimensionNumbers(
        update_window_dims=ix.dnums.offset_dims,
        inserted_window_dims=ix.dnums.collapsed_slice_dims,
        scatter_dims_to_operand_dims=ix.dnums.start_index_map)
    out = scatter_fn(x, ix.indices, y, dn,
                     indices_are_sorted=indices_are_sorted or ix.sorted_unique,
                     unique_indices=unique_indices or ix.sorted_unique, mode=mode)
    return _convert(out, dtype, weak)


class _IndexUpdateHelper:
    """``x.at``: index it to get the update methods (``x.at[idx].set(v)``)."""
    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
    """``x.at[idx]``: ``set/add/multiply/...`` return an updated copy of ``x``."""
    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array = array
        self.index = index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, out_sharding=None, wrap_negative_indices=True):
        """``x[idx]``; ``mode='fill'`` reads ``fill_value`` (default NaN / extreme int) out
        of bounds, ``'clip'`` clamps. With ``wrap_negative_indices=False`` negative indices
        are out of bounds instead of counting from the end. ``out_sharding`` lays out the
        result (which a split dimension indexed into needs over Explicit mesh axes)."""
        return rewriting_take(self.array, self.index, indices_are_sorted=indices_are_sorted,
                              unique_indices=unique_indices, mode=mode,
                              fill_value=fill_value, normalize=wrap_negative_indices,
                              out_sharding=out_sharding)

    def _do(self, fn, values, indices_are_sorted, unique_indices, mode, wrap=True,
            out_sharding=None):
        if out_sharding is not None:   # (run with the Explicit axes dropped from types)
            return compute_with_out_sharding(
                lambda x, y: _scatter_update(x, self.index, y, fn, indices_are_sorted,
                                             unique_indices, mode, normalize=wrap),
                (self.array, values), out_sharding)
        return _scatter_update(self.array, self.index, values, fn, indices_are_sorted,
                               unique_indices, mode, normalize=wrap)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
        """Copy of ``x`` with ``x[idx] = values`` (a repeated index: one write wins)."""
        return self._do(lax_idx.scatter, values, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices,
                        out_sharding=out_sharding)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
        """Copy of ``x`` with ``x[idx] += values`` (repeated indices accumulate)."""
        return self._do(lax_idx.scatter_add, values, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices,
                        out_sharding=out_sharding)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 out_sharding=None, wrap_negative_indices=True):
        """Copy of ``x`` with ``x[idx] -= values`` (repeated indices accumulate)."""
        return self._do(lax_idx.scatter_sub, values, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices,
                        out_sharding=out_sharding)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 out_sharding=None, wrap_negative_indices=True):
        """Copy of ``x`` with ``x[idx] *= values`` (repeated indices accumulate)."""
        return self._do(lax_idx.scatter_mul, values, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices,
                        out_sharding=out_sharding)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
        """Copy of ``x`` with ``x[idx] /= values``."""
        from jaxlite._src.numpy.ufuncs import divide
        x = asarray_value(self.array)
        ones = _convert(lax_shape.full(x.shape, 1, x.dtype), x.dtype, x.weak_type)
        return divide(x, _scatter_update(ones, self.index, values, lax_idx.scatter_mul,
                                         indices_are_sorted, unique_indices, mode,
                                         wrap_negative_indices))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
              out_sharding=None, wrap_negative_indices=True):
        """Copy of ``x`` with ``x[idx] **= values``."""
        from jaxlite._src.numpy.ufuncs import power
        x = asarray_value(self.array)
        ones = _convert(lax_shape.full(x.shape, 1, x.dtype), x.dtype, x.weak_type)
        return power(x, _scatter_update(ones, self.index, values, lax_idx.scatter_mul,
                                        indices_are_sorted, unique_indices, mode,
                                        wrap_negative_indices))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
        """Copy of ``x`` with ``x[idx] = minimum(x[idx], values)``."""
        return self._do(lax_idx.scatter_min, values, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices,
                        out_sharding=out_sharding)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
        """Copy of ``x`` with ``x[idx] = maximum(x[idx], values)``."""
        return self._do(lax_idx.scatter_max, values, indices_are_sorted, unique_indices, mode,
                        wrap_negative_indices,
                        out_sharding=out_sharding)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        """Copy of ``x`` with the unary ``func`` applied once to each indexed element."""
        x = asarray_value(self.array)

        def fn(operand, indices, y, dn, **kw):
            return lax_idx.scatter_apply(operand, indices, func, dn, update_shape=y.shape,
                                         **kw)
        return _scatter_update(x, self.index, np.zeros((), x.dtype), fn, indices_are_sorted,
                               unique_indices, mode, wrap_negative_indices)
