"""``jax.ops``: segment reductions (``segment_sum``, ``segment_prod``, ``segment_max``,
``segment_min``), written as scatters into an array of the reduction's identity, so they
trace, differentiate and batch as scatters do.

Segment ids out of ``[0, num_segments)`` are dropped (JAX's default ``FILL_OR_DROP``
mode); empty segments hold the identity (0, 1, -inf / the smallest integer, +inf / the
largest integer).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.numpy import creation, ufuncs
from jaxlite._src.numpy.util import check_arraylike

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _num_segments(segment_ids, num_segments, name):
    if num_segments is not None:
        try:
            n = int(num_segments)
        except Exception:  # noqa: BLE001 - a traced value
            raise TypeError(f"{name}: num_segments must be a concrete int, got "
                            f"{num_segments!r}") from None
        if n < 0:
            raise ValueError(f"{name}: num_segments must be non-negative, got {n}")
        return n
    if isinstance(segment_ids, Tracer):
        from jaxlite._src.core.errors import ConcretizationTypeError
        raise ConcretizationTypeError(
            segment_ids, f"{name} needs num_segments when segment_ids is traced (inside jit, "
                         "vmap, ...): pass num_segments=<int>.")
    ids = np.asarray(segment_ids)
    return int(ids.max()) + 1 if ids.size else 0


def _segment(name, method, identity, data, segment_ids, num_segments, indices_are_sorted,
             unique_indices, mode):
    check_arraylike(name, data, segment_ids)
    data = creation.asarray(data)
    segment_ids = creation.asarray(segment_ids)
    if not dtypes.issubdtype(segment_ids.dtype, np.integer):
        raise TypeError(f"{name}: segment_ids must be integers, got {segment_ids.dtype}")
    if segment_ids.ndim != 1 or data.ndim < 1 or segment_ids.shape[0] != data.shape[0]:
        raise ValueError(f"{name}: segment_ids must be 1-D with one id per row of data; got "
                         f"segment_ids of shape {tuple(segment_ids.shape)} for data of shape "
                         f"{tuple(data.shape)}")
    n = _num_segments(segment_ids, num_segments, name)
    init = identity(data.dtype)
    out = creation.full((n,) + tuple(data.shape[1:]), init, dtype=data.dtype)
    # negative ids are out of range (dropped), not counted from the end as in indexing
    segment_ids = ufuncs.where(segment_ids < 0, n, segment_ids)
    ref = out.at[segment_ids]
    return getattr(ref, method)(data, indices_are_sorted=indices_are_sorted,
                                unique_indices=unique_indices,
                                mode="drop" if mode is None else mode)


def _low(dt):
    return -np.inf if dtypes.issubdtype(dt, np.inexact) else (
        False if dt == np.bool_ else np.iinfo(dt).min)


def _high(dt):
    return np.inf if dtypes.issubdtype(dt, np.inexact) else (
        True if dt == np.bool_ else np.iinfo(dt).max)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Sum the rows of ``data`` sharing a segment id: ``out[i] = sum(data[segment_ids ==
    i])`` for ``i < num_segments`` (default: ``max(segment_ids) + 1``, which needs concrete
    ids)."""
    return _segment("segment_sum", "add", lambda dt: 0, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False,
                 unique_indices=False, bucket_size=None, mode=None):
    """Product of the rows of ``data`` sharing a segment id (1 for empty segments)."""
    return _segment("segment_prod", "multiply", lambda dt: 1, data, segment_ids,
                    num_segments, indices_are_sorted, unique_indices, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Maximum of the rows of ``data`` sharing a segment id (-inf, or the smallest integer,
    for empty segments)."""
    return _segment("segment_max", "max", _low, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False,
                unique_indices=False, bucket_size=None, mode=None):
    """Minimum of the rows of ``data`` sharing a segment id (+inf, or the largest integer,
    for empty segments)."""
    return _segment("segment_min", "min", _high, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, mode)
