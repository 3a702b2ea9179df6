"""NumPy-style indexing of jaxlite arrays (``x[idx]``) and the ``.at[]`` update property.

Static ints and slices lower to ``slice``/``rev``/``squeeze`` (as JAX prints them), ``None``
to ``broadcast_in_dim``, traced integers to ``dynamic_slice``. Integer-array ("advanced")
indexing is not built yet and raises NotImplementedError.
"""
from __future__ import annotations

import operator

import numpy as np

from jaxlite._src.core import errors
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.util import asarray_value

__all__ = []


def _is_int_scalar(i):
    return isinstance(i, (int, np.integer)) and not isinstance(i, bool)


def _normalize(idx, ndim):
    idx = idx if isinstance(idx, tuple) else (idx,)
    for i in idx:
        if isinstance(i, (list, np.ndarray)) or (hasattr(i, "shape") and getattr(
                i, "ndim", 0) > 0) or isinstance(i, bool):
            dt = getattr(i, "dtype", None)
            if dt is not None and dt == np.bool_ and isinstance(i, Tracer):
                raise errors.NonConcreteBooleanIndexError(i)
            raise NotImplementedError(
                "jaxlite: integer-array and boolean indexing are not implemented yet; use "
                "static ints, slices, None and Ellipsis (or lax.dynamic_slice).")
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            raise errors.NonConcreteBooleanIndexError(i)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if used > ndim:
        raise IndexError(f"Too many indices: {ndim}-dimensional array indexed with {used} "
                         "regular indices.")
    out = []
    for i in idx:
        if i is Ellipsis:
            out.extend([slice(None)] * (ndim - used))
        else:
            out.append(i)
    if n_ell == 0:
        out.extend([slice(None)] * (ndim - used))
    return out


def getitem(x, idx):
    """``x[idx]`` for basic indices (ints, slices, None, Ellipsis) and traced int scalars."""
    x = asarray_value(x)
    items = _normalize(idx, x.ndim)
    starts, limits, strides, rev_dims, squeeze_dims, dyn = [], [], [], [], [], []
    new_axes = []
    axis = 0
    out_pos = 0
    for i in items:
        if i is None:
            new_axes.append(out_pos)
            out_pos += 1
            continue
        n = x.shape[axis]
        if isinstance(i, Tracer) or (hasattr(i, "aval") and not _is_int_scalar(i)):
            dyn.append((axis, i))
            starts.append(0)
            limits.append(n)
            strides.append(1)
            squeeze_dims.append(axis)
        elif _is_int_scalar(i) or hasattr(i, "__index__") and not isinstance(i, slice):
            k = operator.index(i)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            k = k + n if k < 0 else k
            starts.append(k)
            limits.append(k + 1)
            strides.append(1)
            squeeze_dims.append(axis)
        elif isinstance(i, slice):
            a, b, s = i.indices(n)
            if s > 0:
                cnt = max(0, -(-(b - a) // s))
                starts.append(a)
                limits.append(a + (cnt - 1) * s + 1 if cnt else a)
                strides.append(s)
            else:
                cnt = max(0, -(-(a - b) // -s))
                rev_dims.append(axis)
                ra = n - 1 - a
                starts.append(ra if cnt else 0)
                limits.append(ra + (cnt - 1) * (-s) + 1 if cnt else 0)
                strides.append(-s)
            out_pos += 1
        else:
            raise TypeError(f"Indexing mode not supported: {i!r} of type {type(i)}")
        axis += 1
    out = x
    if rev_dims:
        out = lax_shape.rev(out, rev_dims)
    if any(st != 0 or lim != n or sd != 1 for st, lim, sd, n in
           zip(starts, limits, strides, out.shape)):
        out = lax_shape.slice(out, starts, limits,
                              None if all(sd == 1 for sd in strides) else strides)
    for ax, i in dyn:
        i = asarray_value(i)
        n = out.shape[ax]
        from jaxlite._src.lax import elementwise as lax_ew
        zero = asarray_value(np.zeros((), i.dtype))
        i = lax_ew.select(lax_ew.lt(i, zero), lax_ew.add(i, asarray_value(
            np.asarray(n, i.dtype))), i)
        out = lax_shape.dynamic_slice_in_dim(out, i, 1, ax)
    if squeeze_dims:
        out = lax_shape.squeeze(out, squeeze_dims)
    if new_axes:
        out = lax_shape.expand_dims(out, new_axes)
    return out


class _IndexUpdateHelper:
    """``x.at``: indexable; ``x.at[idx]`` gives the update methods."""
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

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None):
        """``x[idx]``."""
        return getitem(self.array, self.index)

    def _update(self, fn, values):
        from jaxlite._src.lax import elementwise as lax_ew
        x = asarray_value(self.array)
        cur = getitem(x, self.index)
        vals = lax_ew._convert_element_type(values, x.dtype, False) if not hasattr(
            values, "aval") or values.dtype != x.dtype else values
        from jaxlite._src.numpy.shape_ops import broadcast_to
        new = fn(cur, broadcast_to(vals, cur.shape))
        return _write_block(x, self.index, new)

    def set(self, values, **_):
        """Copy of ``x`` with ``x[idx] = values``."""
        return self._update(lambda c, v: v, values)

    def add(self, values, **_):
        """Copy of ``x`` with ``x[idx] += values``."""
        from jaxlite._src.numpy.ufuncs import add
        return self._update(add, values)

    def subtract(self, values, **_):
        """Copy of ``x`` with ``x[idx] -= values``."""
        from jaxlite._src.numpy.ufuncs import subtract
        return self._update(subtract, values)

    def multiply(self, values, **_):
        """Copy of ``x`` with ``x[idx] *= values``."""
        from jaxlite._src.numpy.ufuncs import multiply
        return self._update(multiply, values)

    mul = multiply

    def divide(self, values, **_):
        """Copy of ``x`` with ``x[idx] /= values``."""
        from jaxlite._src.numpy.ufuncs import true_divide
        return self._update(lambda c, v: true_divide(c, v).astype(c.dtype), values)

    def power(self, values, **_):
        """Copy of ``x`` with ``x[idx] **= values``."""
        from jaxlite._src.numpy.ufuncs import power
        return self._update(power, values)

    def min(self, values, **_):
        """Copy of ``x`` with ``x[idx] = minimum(x[idx], values)``."""
        from jaxlite._src.numpy.ufuncs import minimum
        return self._update(minimum, values)

    def max(self, values, **_):
        """Copy of ``x`` with ``x[idx] = maximum(x[idx], values)``."""
        from jaxlite._src.numpy.ufuncs import maximum
        return self._update(maximum, values)

    def apply(self, func, **_):
        """Copy of ``x`` with ``func`` applied to ``x[idx]``."""
        return self._update(lambda c, v: func(c), 0)


def _write_block(x, index, new):
    """Write ``new`` (shaped like ``x[index]``) back into a copy of ``x`` (basic indices)."""
    items = _normalize(index, x.ndim)
    starts, shape_full = [], []
    axis = 0
    for i in items:
        if i is None:
            continue
        n = x.shape[axis]
        if isinstance(i, slice):
            a, b, s = i.indices(n)
            if s != 1:
                raise NotImplementedError("jaxlite: .at[] with strided slices is not "
                                          "implemented yet")
            starts.append(a)
            shape_full.append(max(0, b - a))
        elif isinstance(i, Tracer):
            starts.append(i)
            shape_full.append(1)
        else:
            k = operator.index(i)
            starts.append(k + n if k < 0 else k)
            shape_full.append(1)
        axis += 1
    from jaxlite._src.numpy.shape_ops import reshape
    upd = reshape(new, tuple(shape_full))
    return lax_shape.dynamic_update_slice(x, upd, [asarray_value(np.int32(s)) if not
                                                   isinstance(s, Tracer) else s
                                                   for s in starts])
