"""``jax.experimental.sparse.BCOO``: a sparse array in coordinate format.

A ``BCOO`` holds ``data`` (shape ``[nse]``, the stored values) and ``indices`` (shape
``[nse, ndim]``, their coordinates) for an array of ``shape``. This is the unbatched form
(``n_batch = n_dense = 0``) with the operations libraries use: conversion from and to
dense arrays and SciPy matrices, products with dense arrays (``@``, ``bcoo_dot_general`` for
matrix-vector, matrix-matrix and stacked matrix products), transposition, sums, scaling and ``astype``. The
operations are written with jnp gathers and segment sums, so a BCOO is a pytree whose
``data`` is traced, differentiated and batched like any array.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.trace import Tracer
from jaxlite._src.numpy import creation, joining, reductions, shape_ops
from jaxlite._src.numpy.segment import segment_sum
from jaxlite._src.tree_util import register_pytree_node_class

__all__ = ["BCOO", "bcoo_fromdense", "bcoo_todense", "bcoo_dot_general"]


@register_pytree_node_class
class BCOO:
    """A sparse array: ``BCOO((data, indices), shape=shape)``."""
    __array_priority__ = 2000

    def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
        data, indices = args
        self.data = creation.asarray(data)
        self.indices = creation.asarray(indices)
        self.shape = tuple(int(d) for d in shape)
        if self.indices.ndim != 2 or self.indices.shape[1] != len(self.shape) or \
                self.data.shape != self.indices.shape[:1]:
            raise ValueError(f"BCOO: data of shape (nse,) and indices of shape (nse, ndim) "
                             f"expected for shape {self.shape}; got data "
                             f"{tuple(self.data.shape)}, indices {tuple(self.indices.shape)}"
                             " (batched and dense BCOO dimensions are not supported)")
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices

    # -- pytree
    def tree_flatten(self):
        """Children: ``data`` and ``indices``; aux: the shape and flags."""
        return (self.data, self.indices), (self.shape, self.indices_sorted,
                                           self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux, children):
        """Rebuild from ``tree_flatten``'s output."""
        shape, srt, uniq = aux
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        obj.shape, obj.indices_sorted, obj.unique_indices = shape, srt, uniq
        return obj

    # -- properties
    @property
    def dtype(self):
        return self.data.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def nse(self):
        """The number of stored elements."""
        return self.indices.shape[0]

    @property
    def size(self):
        return int(np.prod(self.shape))

    n_batch = 0
    n_dense = 0

    @property
    def n_sparse(self):
        return self.ndim

    def __repr__(self):
        return f"BCOO({self.dtype.name}{list(self.shape)}, nse={self.nse})"

    # -- conversions
    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype=np.int32):
        """The BCOO of the nonzeros of the dense array ``mat`` (``nse`` is needed when
        ``mat`` is traced)."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None):
        """The BCOO of a SciPy sparse matrix (its stored entries, in COO order)."""
        coo = mat.tocoo()
        idx = np.stack([coo.row, coo.col], axis=1).astype(index_dtype or np.int32)
        return cls((creation.asarray(coo.data), creation.asarray(idx)), shape=coo.shape)

    def todense(self):
        """The dense array (duplicate coordinates add up)."""
        return bcoo_todense(self)

    def astype(self, dtype):
        """The same sparsity pattern with ``data`` cast to ``dtype``."""
        return BCOO((self.data.astype(dtype), self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def transpose(self, axes=None):
        """The transposed array (axes reversed by default)."""
        axes = tuple(range(self.ndim))[::-1] if axes is None else tuple(axes)
        if sorted(axes) != list(range(self.ndim)):
            raise ValueError(f"transpose: axes {axes} are not a permutation of "
                             f"{self.ndim} dimensions")
        return BCOO((self.data, self.indices[:, list(axes)]),
                    shape=tuple(self.shape[a] for a in axes))

    @property
    def T(self):
        return self.transpose()

    def sum(self, axis=None, keepdims=False):
        """Sum over ``axis``: a BCOO holding each stored value at its coordinates in the
        kept dimensions (duplicates add up when densified); over all axes (the default), a
        dense scalar."""
        if axis is None and not keepdims:
            return reductions.sum(self.data)
        axes = tuple(range(self.ndim)) if axis is None else (
            (axis,) if isinstance(axis, int) else tuple(axis))
        axes = tuple(a % self.ndim for a in axes)
        if keepdims:
            idx = self.indices * creation.asarray(
                [0 if d in axes else 1 for d in range(self.ndim)], self.indices.dtype)
            shape = tuple(1 if d in axes else n for d, n in enumerate(self.shape))
        else:
            keep = [d for d in range(self.ndim) if d not in axes]
            idx = self.indices[:, keep]
            shape = tuple(self.shape[d] for d in keep)
        return BCOO((self.data, idx), shape=shape)

    # -- arithmetic
    def __mul__(self, other):
        if np.ndim(other) == 0 and not isinstance(other, BCOO):
            return BCOO((self.data * other, self.indices), shape=self.shape)
        return NotImplemented

    __rmul__ = __mul__

    def __neg__(self):
        return BCOO((-self.data, self.indices), shape=self.shape)

    def __truediv__(self, other):
        if np.ndim(other) == 0:
            return BCOO((self.data / other, self.indices), shape=self.shape)
        return NotImplemented

    def __matmul__(self, other):
        return bcoo_dot_general(self, other)

    def __rmatmul__(self, other):
        other = creation.asarray(other)
        if other.ndim == 1:
            return bcoo_dot_general(self.T, other)
        return shape_ops.swapaxes(bcoo_dot_general(self.T, shape_ops.swapaxes(other, -1, -2)),
                                  -1, -2)


def _ravel_index(idx, shape):
    if not shape:
        return creation.zeros(idx.shape[:1], np.int32)
    flat = idx[:, 0]
    for k in range(1, len(shape)):
        flat = flat * shape[k] + idx[:, k]
    return flat


def bcoo_fromdense(mat, *, nse=None, index_dtype=np.int32):
    """The BCOO holding the nonzero entries of ``mat``."""
    mat = creation.asarray(mat)
    if nse is None:
        if isinstance(mat, Tracer):
            raise TypeError("bcoo_fromdense: pass nse=<int> for a traced matrix (the number "
                            "of stored elements must be known when tracing)")
        idx = np.argwhere(np.asarray(mat) != 0).astype(index_dtype)
    else:
        from jaxlite._src.numpy.searching import nonzero
        idx = joining.stack(nonzero(mat, size=nse, fill_value=0), axis=1).astype(index_dtype)
    idx = creation.asarray(idx)
    data = mat[tuple(idx[:, k] for k in range(mat.ndim))]
    return BCOO((data, idx), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_todense(mat):
    """The dense array of the BCOO ``mat``."""
    flat = _ravel_index(mat.indices, mat.shape)
    out = segment_sum(mat.data, flat, num_segments=int(np.prod(mat.shape)))
    return out.reshape(mat.shape)


def bcoo_dot_general(lhs, rhs, *, dimension_contraction=None, preferred_element_type=None):
    """``lhs @ rhs`` for a 2-D BCOO ``lhs`` and a dense ``rhs``: a vector, a matrix, or a
    stack of matrices (``rhs[..., j, k]``, batch dimensions leading, as ``jnp.matmul``)."""
    rhs = creation.asarray(rhs)
    if lhs.ndim != 2 or rhs.ndim == 0:
        raise TypeError(f"bcoo_dot_general: shapes {lhs.shape} and {tuple(rhs.shape)} are "
                        "not aligned for a matrix product (a 2-D sparse matrix times a dense "
                        "vector, matrix or stack of matrices)")
    axis = 0 if rhs.ndim == 1 else rhs.ndim - 2      # the contracted dimension of rhs
    if rhs.shape[axis] != lhs.shape[1]:
        raise TypeError(f"dot_general requires contracting dimensions to have the same "
                        f"shape, got ({lhs.shape[1]},) and ({rhs.shape[axis]},): the sparse "
                        f"{lhs.shape} matrix times a dense {tuple(rhs.shape)} array")
    moved = shape_ops.moveaxis(rhs, axis, 0) if axis else rhs
    rows, cols = lhs.indices[:, 0], lhs.indices[:, 1]
    vals = lhs.data.reshape((-1,) + (1,) * (moved.ndim - 1)) * moved[cols]
    out = segment_sum(vals, rows, num_segments=lhs.shape[0])
    return shape_ops.moveaxis(out, 0, axis) if axis else out
