"""Summary statistics of jax.scipy.stats: ``mode``, ``rankdata`` and ``sem``.

Written for jaxlite on jnp/lax (so they trace, batch and, where it makes sense,
differentiate). Ties are found in one stable sort along the axis: the runs of equal values
are marked where a sorted element differs from its predecessor (NaNs count as equal to each
other, as SciPy's mode does), and a running maximum/minimum of the run boundaries gives
every element the first and last position of its run -- from which the run lengths (mode)
and the ranks (rankdata) follow without any quadratic comparison."""
from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.numpy.util import (canonicalize_axis, check_arraylike,
                                     promote_dtypes_inexact)

__all__ = ["ModeResult", "mode", "rankdata", "sem"]

_NAN_POLICIES = ("propagate", "omit", "raise")


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _check_propagate_only(name, nan_policy):
    """``nan_policy`` of mode/rankdata: only 'propagate' is implemented (as in JAX)."""
    if nan_policy not in _NAN_POLICIES:
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                         "{'propagate', 'omit', 'raise'}")
    if nan_policy == "omit":
        raise NotImplementedError(
            "Logic for `nan_policy` of omit is not implemented: drop the NaNs first "
            "(e.g. x[~jnp.isnan(x)], outside jit) and call it with nan_policy='propagate'.")
    if nan_policy == "raise":
        raise NotImplementedError(
            f"In order to best JIT compile `{name}`, we cannot know whether `x` contains "
            f"nans. Please check if nans exist in `x` outside of the `{name}` function.")


def _runs(sorted_vals):
    """For values sorted along the last axis: ``(first, last)``, the positions of the
    first and last element of the run of equal values each element belongs to."""
    from jaxlite._src.lax import reductions as lr
    from jaxlite._src.lax import shape as lsh
    jnp = _np()
    n = sorted_vals.shape[-1]
    left, right = sorted_vals[..., :-1], sorted_vals[..., 1:]
    same = left == right
    if jnp.issubdtype(sorted_vals.dtype, jnp.inexact):
        same = same | (jnp.isnan(left) & jnp.isnan(right))
    edge = jnp.ones(sorted_vals.shape[:-1] + (1,), bool)
    starts = jnp.concatenate([edge, ~same], axis=-1)    # a run starts here
    ends = jnp.concatenate([~same, edge], axis=-1)      # a run ends here
    pos = lsh.broadcasted_iota(np.int32, sorted_vals.shape, sorted_vals.ndim - 1)
    last_axis = sorted_vals.ndim - 1
    first = lr.cummax(jnp.where(starts, pos, 0), axis=last_axis)
    last = lr.cummin(jnp.where(ends, pos, n - 1), axis=last_axis, reverse=True)
    return first, last, starts


class ModeResult(NamedTuple):
    """Result of :func:`mode`: the modal values and how often each occurs."""
    mode: object
    count: object


def mode(a, axis=0, nan_policy="propagate", keepdims=False):
    """The most common value along ``axis`` and its count (``scipy.stats.mode``).

    Among equally common values the smallest wins; NaNs are counted as one value (and sort
    above every number). ``axis=None`` uses the flattened array. Along an empty axis the
    mode is NaN and the count 0 (both of the default float type), as in JAX. Only
    ``nan_policy='propagate'`` is supported. Returns ``ModeResult(mode, count)``."""
    check_arraylike("mode", a)
    _check_propagate_only("mode", nan_policy)
    jnp = _np()
    x = jnp.asarray(a)
    in_ndim = x.ndim
    flat = axis is None
    if flat:
        x = jnp.ravel(x)
        axis = 0
    x = jnp.atleast_1d(x)
    axis = canonicalize_axis(operator.index(axis), x.ndim)
    moved = jnp.moveaxis(x, axis, -1)
    n = moved.shape[-1]
    if n == 0:
        shape = moved.shape[:-1]
        val = jnp.full(shape, np.nan, dtype=dtypes.default_float_dtype())
        cnt = jnp.zeros(shape, dtype=dtypes.default_float_dtype())
    elif moved.size == 0:                          # nothing to reduce over
        val = jnp.zeros(moved.shape[:-1], dtype=moved.dtype)
        cnt = jnp.zeros(moved.shape[:-1], dtype=dtypes.default_int_dtype())
    else:
        order = jnp.argsort(moved, axis=-1)
        ranked = jnp.take_along_axis(moved, order, axis=-1)
        first, last, _ = _runs(ranked)
        counts = (last - first + 1).astype(dtypes.default_int_dtype())
        best = jnp.argmax(counts, axis=-1, keepdims=True)   # start of the smallest modal run
        where = jnp.take_along_axis(order, best, axis=-1)
        val = jnp.take_along_axis(moved, where, axis=-1)[..., 0]
        if x.weak_type and not val.weak_type:     # the modal value keeps a weak type
            from jaxlite._src.lax.elementwise import _convert_element_type
            val = _convert_element_type(val, val.dtype, weak_type=True)
        cnt = jnp.max(counts, axis=-1)
    if keepdims:
        shape = (1,) * max(in_ndim, 1) if flat else x.shape[:axis] + (1,) + x.shape[axis + 1:]
        val, cnt = jnp.reshape(val, shape), jnp.reshape(cnt, shape)
    return ModeResult(val, cnt)


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
    """Ranks of the data along ``axis`` (the flattened array when None), starting at 1
    (``scipy.stats.rankdata``). ``method`` says how ties are ranked: 'average' (mean of
    the positions they occupy), 'min', 'max', 'dense' (consecutive ranks for distinct
    values) or 'ordinal' (order of appearance). A slice holding a NaN ranks as all NaN.
    The ranks are of the default float type. Only ``nan_policy='propagate'`` is
    supported."""
    check_arraylike("rankdata", a)
    _check_propagate_only("rankdata", nan_policy)
    if method not in _RANK_METHODS:
        raise ValueError(f"unknown method '{method}'; use one of {', '.join(_RANK_METHODS)}")
    jnp = _np()
    x = jnp.asarray(a)
    if axis is None:
        x = jnp.ravel(x)
        axis = 0
    axis = canonicalize_axis(operator.index(axis), x.ndim)
    moved = jnp.moveaxis(x, axis, -1)
    float_dt = dtypes.default_float_dtype()
    if moved.size == 0:
        return jnp.zeros(x.shape, dtype=float_dt)
    order = jnp.argsort(moved, axis=-1)
    inverse = jnp.argsort(order, axis=-1)            # position of each element once sorted
    if method == "ordinal":
        ranks = (inverse + 1).astype(float_dt)
    else:
        ranked = jnp.take_along_axis(moved, order, axis=-1)
        first, last, starts = _runs(ranked)
        if method == "min":
            ranks_sorted = first + 1
        elif method == "max":
            ranks_sorted = last + 1
        elif method == "dense":
            ranks_sorted = jnp.cumsum(starts.astype(dtypes.default_int_dtype()), axis=-1)
        else:
            ranks_sorted = (first + last + 2).astype(float_dt) * 0.5
        ranks = jnp.take_along_axis(ranks_sorted.astype(float_dt), inverse, axis=-1)
    if jnp.issubdtype(moved.dtype, jnp.inexact):
        has_nan = jnp.any(jnp.isnan(moved), axis=-1, keepdims=True)
        ranks = jnp.where(has_nan, np.nan, ranks)
    return jnp.moveaxis(ranks, -1, axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """Standard error of the mean, ``std(a, ddof=ddof) / sqrt(n)`` along ``axis`` (all
    axes when None) (``scipy.stats.sem``). With ``nan_policy='omit'`` NaNs are left out
    (``n`` counts the others); with 'propagate' a NaN makes the result NaN. 'raise' is not
    supported (it would need the values at trace time)."""
    check_arraylike("sem", a)
    jnp = _np()
    (b,) = promote_dtypes_inexact(jnp.asarray(a))
    if axis is not None and not isinstance(axis, (int, np.integer)):
        raise TypeError(f"sem: axis must be an integer or None, got {axis!r}")
    if nan_policy == "propagate":
        if axis is not None and not -b.ndim <= axis < b.ndim:
            raise IndexError(f"sem: axis {axis} is out of range for an array of dimension "
                             f"{b.ndim}; pass axis=None to use all elements.")
        size = b.size if axis is None else b.shape[axis]
        spread = jnp.std(b, axis=axis, ddof=ddof, keepdims=keepdims)
        return spread / jnp.sqrt(size).astype(b.dtype)
    if nan_policy == "omit":
        count = jnp.sum(~jnp.isnan(b), axis=axis, keepdims=keepdims)
        spread = jnp.nanstd(b, axis=axis, ddof=ddof, keepdims=keepdims)
        return spread / jnp.sqrt(count).astype(b.dtype)
    raise ValueError(f"{nan_policy} is not supported; use nan_policy='propagate' or "
                     "'omit'.")
