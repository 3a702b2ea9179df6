"""jax.numpy shape manipulation: reshape, transpose, stacking, splitting, broadcasting."""
from __future__ import annotations

import numpy as np

from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.util import asarray_value, canonicalize_axis, check_arraylike, \
    promote_dtypes

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes",
           "moveaxis", "expand_dims", "squeeze", "broadcast_to", "broadcast_arrays",
           "broadcast_shapes", "concatenate", "concat", "stack", "hstack", "vstack", "split",
           "flip", "fliplr", "flipud", "atleast_1d", "atleast_2d", "atleast_3d", "shape",
           "ndim", "size", "tile", "repeat", "roll", "column_stack", "dstack", "unstack"]


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """Give ``a`` a new shape (one dimension may be -1)."""
    a = asarray_value(a)
    shape = newshape if shape is None else shape
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        if known == 0 or a.size % known:
            raise TypeError(f"cannot reshape array of shape {a.shape} (size {a.size}) into "
                            f"shape {shape}")
        shape = tuple(a.size // known if d == -1 else d for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != a.size:
        raise TypeError(f"cannot reshape array of shape {a.shape} (size {a.size}) into shape "
                        f"{shape} (size {int(np.prod(shape, dtype=np.int64))})")
    if order == "F":
        return transpose(lax_shape.reshape(transpose(a), shape[::-1]))
    return lax_shape.reshape(a, shape)


def ravel(a, order="C"):
    """Flatten ``a`` to 1-D."""
    a = asarray_value(a)
    return reshape(a, (a.size,), order)


def transpose(a, axes=None):
    """Permute dimensions (reverse them by default)."""
    a = asarray_value(a)
    axes = tuple(range(a.ndim))[::-1] if axes is None else tuple(
        canonicalize_axis(i, a.ndim) for i in axes)
    return lax_shape.transpose(a, axes)


def permute_dims(a, /, axes):
    """Permute dimensions by ``axes``."""
    return transpose(a, axes)


def matrix_transpose(x, /):
    """Swap the last two dimensions."""
    x = asarray_value(x)
    if x.ndim < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={x.ndim}")
    return transpose(x, tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))


def swapaxes(a, axis1, axis2):
    """Interchange two axes."""
    a = asarray_value(a)
    p = list(range(a.ndim))
    i, j = canonicalize_axis(axis1, a.ndim), canonicalize_axis(axis2, a.ndim)
    p[i], p[j] = p[j], p[i]
    return lax_shape.transpose(a, p)


def moveaxis(a, source, destination):
    """Move axes to new positions."""
    a = asarray_value(a)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [canonicalize_axis(s, a.ndim) for s in src]
    dst = [canonicalize_axis(d, a.ndim) for d in dst]
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax_shape.transpose(a, order)


def expand_dims(a, axis):
    """Insert unit dimensions at ``axis``."""
    a = asarray_value(a)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = a.ndim + len(axes)
    return lax_shape.expand_dims(a, tuple(canonicalize_axis(x, nd) for x in axes))


def squeeze(a, axis=None):
    """Remove unit dimensions (all of them, or those in ``axis``)."""
    a = asarray_value(a)
    if axis is None:
        axes = tuple(i for i, s in enumerate(a.shape) if s == 1)
    else:
        axes = tuple(canonicalize_axis(x, a.ndim) for x in
                     ((axis,) if isinstance(axis, int) else axis))
    return lax_shape.squeeze(a, axes)


def broadcast_shapes(*shapes):
    """The NumPy broadcast of shapes."""
    try:
        return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") from None


def broadcast_to(array, shape):
    """Broadcast ``array`` to ``shape``."""
    a = asarray_value(array)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if a.shape == shape:
        return a
    nd = len(shape)
    if a.ndim > nd:
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape="
                         f"{a.shape} shape={shape}")
    lead = nd - a.ndim
    for s, t in zip(a.shape, shape[lead:]):
        if s != 1 and s != t:
            raise ValueError(f"Incompatible shapes for broadcasting: {a.shape} and requested "
                             f"shape {shape}")
    squeezed = [i for i, (s, t) in enumerate(zip(a.shape, shape[lead:])) if s == 1 and t != 1]
    if squeezed:
        a = lax_shape.squeeze(a, squeezed)
    dims = tuple(lead + i for i in range(len(shape) - lead) if i not in squeezed)
    return lax_shape.broadcast_in_dim(a, shape, dims)


def broadcast_arrays(*args):
    """Broadcast arrays against each other."""
    args = [asarray_value(a) for a in args]
    shape = broadcast_shapes(*[a.shape for a in args])
    return [broadcast_to(a, shape) for a in args]


def concatenate(arrays, axis=0, dtype=None):
    """Join arrays along ``axis`` (``axis=None`` flattens first)."""
    if isinstance(arrays, (np.ndarray,)) or hasattr(arrays, "aval"):
        arrays = list(arrays)
    if not len(arrays):
        raise ValueError("Need at least one array to concatenate.")
    check_arraylike("concatenate", *arrays)
    arrays = promote_dtypes(*arrays) if len(arrays) > 1 else [asarray_value(arrays[0])]
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    if arrays[0].ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    axis = canonicalize_axis(axis, arrays[0].ndim)
    out = lax_shape.concatenate(arrays, axis)
    if dtype is not None:
        out = out.astype(dtype)
    return out


concat = concatenate


def stack(arrays, axis=0, out=None, dtype=None):
    """Join arrays along a new axis."""
    arrays = [asarray_value(a) for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    shape0 = arrays[0].shape
    for a in arrays:
        if a.shape != shape0:
            raise ValueError("All input arrays must have the same shape.")
    axis = canonicalize_axis(axis, len(shape0) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis, dtype)


def hstack(tup, dtype=None):
    """Stack horizontally (along axis 1, or 0 for 1-D)."""
    arrs = atleast_1d(*tup) if len(tup) > 1 else [atleast_1d(tup[0])]
    return concatenate(arrs, 0 if arrs[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None):
    """Stack vertically (along axis 0, promoting 1-D to rows)."""
    arrs = atleast_2d(*tup) if len(tup) > 1 else [atleast_2d(tup[0])]
    return concatenate(arrs, 0, dtype)


def dstack(tup, dtype=None):
    """Stack along the third axis."""
    arrs = atleast_3d(*tup) if len(tup) > 1 else [atleast_3d(tup[0])]
    return concatenate(arrs, 2, dtype)


def column_stack(tup):
    """Stack 1-D arrays as columns."""
    arrs = [asarray_value(a) for a in tup]
    arrs = [reshape(a, (-1, 1)) if a.ndim < 2 else a for a in arrs]
    return concatenate(arrs, 1)


def unstack(x, /, *, axis=0):
    """Split ``x`` into a tuple of arrays along ``axis``."""
    x = asarray_value(x)
    axis = canonicalize_axis(axis, x.ndim)
    return tuple(lax_shape.index_in_dim(x, i, axis, keepdims=False)
                 for i in range(x.shape[axis]))


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections or at indices."""
    a = asarray_value(ary)
    axis = canonicalize_axis(axis, a.ndim)
    n = a.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if n % k:
            raise ValueError("array split does not result in an equal division: "
                             f"{n} into {k} sections")
        points = [i * (n // k) for i in range(1, k)]
    else:
        points = [int(i) for i in indices_or_sections]
    bounds = [0] + points + [n]
    return [lax_shape.slice_in_dim(a, lo, max(lo, hi), 1, axis)
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (all axes by default)."""
    m = asarray_value(m)
    axes = range(m.ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    return lax_shape.rev(m, tuple(canonicalize_axis(a, m.ndim) for a in axes))


def fliplr(m):
    """Reverse along axis 1."""
    return flip(m, 1)


def flipud(m):
    """Reverse along axis 0."""
    return flip(m, 0)


def atleast_1d(*arys):
    """Views with at least one dimension."""
    out = [asarray_value(a) if np.ndim(a) >= 1 else reshape(asarray_value(a), (1,))
           for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    """Views with at least two dimensions."""
    out = []
    for a in arys:
        a = asarray_value(a)
        out.append(a if a.ndim >= 2 else lax_shape.broadcast_to_rank(a, 2))
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    """Views with at least three dimensions."""
    out = []
    for a in arys:
        a = asarray_value(a)
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = reshape(a, a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def shape(a):
    """The shape of ``a``."""
    return np.shape(a) if not hasattr(a, "shape") else tuple(a.shape)


def ndim(a):
    """The number of dimensions of ``a``."""
    return len(shape(a))


def size(a, axis=None):
    """The number of elements (along ``axis``)."""
    s = shape(a)
    return int(np.prod(s, dtype=np.int64)) if axis is None else s[axis]


def tile(A, reps):
    """Repeat ``A`` the number of times given by ``reps`` per axis."""
    A = asarray_value(A)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    nd = max(A.ndim, len(reps))
    A = lax_shape.broadcast_to_rank(A, nd)
    reps = (1,) * (nd - len(reps)) + reps
    shp = []
    dims = []
    for i, (r, s) in enumerate(zip(reps, A.shape)):
        shp += [r, s]
        dims.append(2 * i + 1)
    b = lax_shape.broadcast_in_dim(A, tuple(shp), tuple(dims))
    return reshape(b, tuple(r * s for r, s in zip(reps, A.shape)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """Repeat each element ``repeats`` times (static integer repeats)."""
    a = asarray_value(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, a.ndim)
    if not isinstance(repeats, (int, np.integer)):
        raise NotImplementedError("jaxlite: repeat with per-element repeats is not supported "
                                  "yet; pass an integer")
    r = int(repeats)
    shp = list(a.shape)
    b = lax_shape.broadcast_in_dim(a, tuple(shp[:axis + 1] + [r] + shp[axis + 1:]),
                                   tuple(i if i <= axis else i + 1 for i in range(a.ndim)))
    shp[axis] *= r
    return reshape(b, tuple(shp))


def roll(a, shift, axis=None):
    """Roll elements along ``axis`` (static shift)."""
    a = asarray_value(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, int) else tuple(shift)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for s, ax in zip(shifts, axes):
        ax = canonicalize_axis(ax, a.ndim)
        n = a.shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            a = concatenate([lax_shape.slice_in_dim(a, n - s, n, 1, ax),
                             lax_shape.slice_in_dim(a, 0, n - s, 1, ax)], ax)
    return a
