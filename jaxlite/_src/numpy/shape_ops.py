"""jax.numpy shape manipulation: reshaping, transposing, broadcasting, flipping and the
shape queries. The base of the numpy package: it imports only ``util`` (and lax).

Joining, splitting, tiling and rolling live in ``joining.py``; padding, insertion and
deletion in ``array_edit.py``. Static shape arithmetic uses NumPy and Python; array data only
flows through lax operations (one jnp call gives the same jaxpr as in JAX, including JAX's
nested ``jit`` wrappers such as ``_flip`` and ``atleast_2d``).
"""
from __future__ import annotations

import builtins
import math
import operator
from functools import partial

import numpy as np

from jaxlite._src.api.sharding_types import place_as
from jaxlite._src.sharding.types import resolve_out_sharding
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.lax.generic_reduce import broadcast_shapes
from jaxlite._src.numpy.util import asarray_value, canonicalize_axis, check_arraylike
from jaxlite._src.runtime.array import Array, ArrayImpl

__all__ = ["reshape", "ravel", "transpose", "permute_dims", "matrix_transpose", "swapaxes",
           "moveaxis", "rollaxis", "expand_dims", "squeeze", "broadcast_to",
           "broadcast_arrays", "broadcast_shapes", "flip", "fliplr", "flipud", "rot90",
           "atleast_1d", "atleast_2d", "atleast_3d", "shape", "ndim", "size"]

_bmax, _bmin = builtins.max, builtins.min


# ----------------------------------------------------------------------------- helpers
def _arraylike(name, *args):
    check_arraylike(name, *args)
    return [asarray_value(a) for a in args]


def _arraylike_tuple(name, seq):
    seq = tuple(seq)
    check_arraylike(name, *seq)
    return [asarray_value(a) for a in seq]


def _index_tuple(x):
    """An int or a sequence of ints as a tuple of Python ints."""
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(operator.index(i) for i in x)


def _is_array(x):
    return isinstance(x, (ArrayImpl, Tracer, np.ndarray))


def _aval_str(shape, dt):
    return f"{np.dtype(dt).name}[{','.join(str(d) for d in shape)}]"


def _lax_broadcast_to(arr, shape):
    """Broadcast ``arr`` to ``shape`` (NumPy rules), emitting nothing when it already has
    that shape."""
    arr_shape = tuple(np.shape(arr))
    if arr_shape == shape:
        return asarray_value(arr)
    if len(shape) < len(arr_shape):
        raise ValueError("Cannot broadcast to shape with fewer dimensions: "
                         f"arr_shape={arr_shape} shape={shape}")
    nlead = len(shape) - len(arr_shape)
    ok = builtins.all(d in (1, s) for d, s in zip(arr_shape, shape[nlead:]))
    if not ok:
        dt = dtypes.dtype(arr)
        raise ValueError(f"Incompatible types for broadcasting: input type="
                         f"{_aval_str(arr_shape, dt)} and requested type="
                         f"{_aval_str(shape, dt)}")
    return lax_shape.broadcast_in_dim(arr, shape, tuple(range(nlead, len(shape))))


def _cast(x, dtype, weak_type=False):
    """Convert ``x`` to ``dtype`` with the given weak type (a no-op when it already matches,
    as lax's internal conversion)."""
    dtype = dtypes.canonicalize_dtype(dtype)
    if isinstance(x, (ArrayImpl, Tracer)) and x.dtype == dtype and x.weak_type == weak_type:
        return x
    return lax._convert_element_type(x, dtype, weak_type)


def _canonicalize_shape(shape):
    try:
        return tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None


# ----------------------------------------------------------------------------- reshaping
def _compute_newshape(a_shape, newshape):
    """Resolve a single ``-1`` in ``newshape`` and check the total size."""
    size = math.prod(a_shape)
    try:
        newshape = tuple(operator.index(d) for d in newshape)
    except TypeError:
        newshape = (operator.index(newshape),)
    if newshape.count(-1) > 1:
        raise TypeError("can only specify one unknown axis size with a `-1` value, got "
                        f"{newshape}")
    if -1 in newshape:
        rest = math.prod(d for d in newshape if d != -1)
        if rest == 0 or size % rest:
            raise TypeError(f"cannot reshape array of shape {tuple(a_shape)} (size {size}) "
                            f"into shape {newshape} because the product of specified axis "
                            f"sizes ({rest}) does not evenly divide {size}")
        newshape = tuple(size // rest if d == -1 else d for d in newshape)
    for d in newshape:
        if d < 0:
            raise TypeError(f"cannot reshape array of shape {tuple(a_shape)} (size {size}) "
                            f"into shape {newshape}")
    if math.prod(newshape) != size:
        raise TypeError(f"cannot reshape array of shape {tuple(a_shape)} (size {size}) into "
                        f"shape {newshape} (size {math.prod(newshape)})")
    return newshape


def reshape(a, shape, order="C", *, copy=None, out_sharding=None):
    """Return ``a`` with a new ``shape`` holding the same elements.

    One dimension may be ``-1`` (inferred). ``order="F"`` reads and writes the elements in
    column-major order; "A" and "K" are not supported. The result is always a new array
    (``copy`` is accepted for NumPy compatibility).

    As in JAX, a NumPy array (or any other non-jax array-like with a ``reshape`` method) is
    reshaped by its own method, so the result is a NumPy array even under ``jit``: code that
    checks ``isinstance(x, Tracer)`` (numpyro's argument validation) sees a concrete value.
    """
    check_arraylike("reshape", a)
    if out_sharding is None and not isinstance(a, Array):
        try:
            method = a.reshape
        except AttributeError:
            pass
        else:
            return method(shape, order=order)
    (a,) = _arraylike("reshape", a)
    newshape = _compute_newshape(np.shape(a), shape)
    if order == "C":
        return lax_shape.reshape(a, newshape, None, out_sharding=out_sharding)
    if out_sharding is not None:
        return place_as(reshape(a, shape, order), resolve_out_sharding(out_sharding))
    if order == "F":
        dims = tuple(range(np.ndim(a)))[::-1]
        return lax_shape.transpose(lax_shape.reshape(a, newshape[::-1], dims),
                                   tuple(range(len(newshape)))[::-1])
    if order == "A":
        raise NotImplementedError("np.reshape order=A is not implemented.")
    raise ValueError(f"Unexpected value for 'order' argument: {order}.")


def ravel(a, order="C", *, out_sharding=None):
    """The elements of ``a`` as a 1-D array, in C (row-major) or F (column-major) order."""
    (a,) = _arraylike("ravel", a)
    if order == "K":
        raise NotImplementedError("Ravel not implemented for order='K'.")
    return reshape(a, (np.size(a),), order, out_sharding=out_sharding)


def transpose(a, axes=None):
    """Permute the axes of ``a`` (reverse them when ``axes`` is None)."""
    (a,) = _arraylike("transpose", a)
    axes_ = list(range(a.ndim)[::-1]) if axes is None else axes
    return lax_shape.transpose(a, [canonicalize_axis(i, a.ndim) for i in axes_])


def permute_dims(a, /, axes):
    """Permute the axes of ``a`` by ``axes`` (array-API spelling of transpose)."""
    (a,) = _arraylike("permute_dims", a)
    return lax_shape.transpose(a, axes)


def matrix_transpose(x, /):
    """Swap the last two axes of ``x`` (which needs at least two dimensions)."""
    (x,) = _arraylike("matrix_transpose", x)
    nd = x.ndim
    if nd < 2:
        raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                         f"ndim={nd}")
    return lax_shape.transpose(x, (*range(nd - 2), nd - 1, nd - 2))


def swapaxes(a, axis1, axis2):
    """Exchange axes ``axis1`` and ``axis2``."""
    (a,) = _arraylike("swapaxes", a)
    perm = list(range(a.ndim))
    for ax in (axis1, axis2):   # JAX indexes its permutation: an IndexError out of range
        if not -a.ndim <= operator.index(ax) < a.ndim:
            raise IndexError(f"index {ax} is out of bounds for axis 0 with size {a.ndim}")
    i, j = canonicalize_axis(axis1, a.ndim), canonicalize_axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return lax_shape.transpose(a, perm)


def moveaxis(a, source, destination):
    """Move the axes ``source`` to positions ``destination`` keeping the others' order."""
    (a,) = _arraylike("moveaxis", a)
    nd = a.ndim
    src = tuple(canonicalize_axis(i, nd) for i in _index_tuple(source))
    dst = tuple(canonicalize_axis(i, nd) for i in _index_tuple(destination))
    if len(src) != len(dst):
        raise ValueError(f"Inconsistent number of elements: {len(src)} vs {len(dst)}")
    perm = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return lax_shape.transpose(a, perm)


@partial(jit, static_argnames=("axis", "start"))
def rollaxis(a, axis, start=0):
    """Move ``axis`` so that it sits before position ``start`` (older form of moveaxis)."""
    (a,) = _arraylike("rollaxis", a)
    start = operator.index(start)
    nd = a.ndim
    axis = canonicalize_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start += nd
    if start > axis:
        start -= 1
    return moveaxis(a, axis, start)


def expand_dims(a, axis):
    """Insert length-one axes at the positions ``axis`` (of the result)."""
    (a,) = _arraylike("expand_dims", a)
    dims = _index_tuple(axis)
    if len(set(dims)) != len(dims):
        raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
    nd_out = a.ndim + len(dims)
    canon = [canonicalize_axis(i, nd_out) for i in dims]
    if len(set(canon)) != len(canon):
        raise ValueError(f"repeated axis in lax.expand_dims: {canon}")
    return lax_shape.expand_dims(a, canon)


def squeeze(a, axis=None):
    """Remove length-one axes (all of them when ``axis`` is None)."""
    (a,) = _arraylike("squeeze", a)
    if axis is None:
        dims = tuple(i for i, d in enumerate(a.shape) if d == 1)
    else:
        dims = tuple(canonicalize_axis(i, a.ndim) for i in _index_tuple(axis))
        for d in dims:
            if a.shape[d] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 f"equal to one, got shape={a.shape} and dimensions={dims}")
    return lax_shape.squeeze(a, dims)


# ----------------------------------------------------------------------------- broadcasting
def broadcast_to(array, shape, *, out_sharding=None):
    """Broadcast ``array`` to ``shape`` following NumPy's rules."""
    (array,) = _arraylike("broadcast_to", array)
    if not isinstance(shape, tuple) and np.ndim(shape) == 0:
        shape = (shape,)
    return _lax_broadcast_to(array, _canonicalize_shape(shape))


def broadcast_arrays(*args):
    """Broadcast the arguments against each other; returns a list of arrays."""
    args = _arraylike_tuple("broadcast_arrays", args)
    shapes = [tuple(np.shape(a)) for a in args]
    if not shapes or builtins.all(s == shapes[0] for s in shapes):
        return list(args)
    out = broadcast_shapes(*shapes)
    return [_lax_broadcast_to(a, out) for a in args]


def _atleast(arys, n, name):
    check_arraylike(name, *arys)

    def one(x):
        x = asarray_value(x)
        nd = x.ndim
        if nd >= n:
            return x
        if n == 3:
            dims = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}[nd]
        else:
            dims = tuple(range(n - nd))
        return lax_shape.expand_dims(x, dims)
    if len(arys) == 1:
        return one(arys[0])
    return [one(x) for x in arys]


@jit
def atleast_1d(*arys):
    """View each input with at least one dimension (a list when given several)."""
    return _atleast(arys, 1, "atleast_1d")


@jit
def atleast_2d(*arys):
    """Inputs with at least two dimensions (1-D arrays become rows)."""
    return _atleast(arys, 2, "atleast_2d")


@jit
def atleast_3d(*arys):
    """Inputs with at least three dimensions ((N,) -> (1, N, 1), (M, N) -> (M, N, 1))."""
    if len(arys) == 1:
        return _atleast(arys, 3, "atleast_3d")
    check_arraylike("atleast_3d", *arys)
    return [atleast_3d(x) for x in arys]


def _concretization(x, context):
    from jaxlite._src.core.errors import ConcretizationTypeError
    return ConcretizationTypeError(x, f"The problem arose {context}.")


# ----------------------------------------------------------------------------- flipping
@partial(jit, static_argnames=("axis",))
def _flip(m, axis=None):
    if axis is None:
        return lax_shape.rev(m, list(range(np.ndim(m))))
    return lax_shape.rev(m, [canonicalize_axis(ax, np.ndim(m)) for ax in _index_tuple(axis)])


def _optional_axes(axis):
    if axis is None:
        return None
    try:
        return operator.index(axis)
    except TypeError:
        return tuple(operator.index(i) for i in axis)


def flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (every axis when None)."""
    (m,) = _arraylike("flip", m)
    return _flip(m, _optional_axes(axis))


def fliplr(m):
    """Reverse the order of columns (axis 1)."""
    (m,) = _arraylike("fliplr", m)
    return _flip(m, 1)


def flipud(m):
    """Reverse the order of rows (axis 0)."""
    (m,) = _arraylike("flipud", m)
    return _flip(m, 0)


@partial(jit, static_argnames=("k", "axes"))
def rot90(m, k=1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (from the first axis
    towards the second)."""
    (m,) = _arraylike("rot90", m)
    if m.ndim < 2:
        raise ValueError("rot90 requires its first argument to have ndim at least two, but got "
                         f"first argument of shape {m.shape}, which has ndim {m.ndim}")
    ax1, ax2 = (canonicalize_axis(x, m.ndim) for x in axes)
    if ax1 == ax2:
        raise ValueError("Axes must be different")
    k = k % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, ax1), ax2)
    perm = list(range(m.ndim))
    perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
    if k == 1:
        return transpose(flip(m, ax2), perm)
    return flip(transpose(m, perm), ax2)


# ----------------------------------------------------------------------------- metadata
def shape(a):
    """The shape of ``a`` as a tuple (works for Python scalars and sequences too)."""
    if hasattr(a, "shape") and not isinstance(a, type):
        return tuple(a.shape)
    return np.shape(a)


def ndim(a):
    """The number of dimensions of ``a``."""
    if hasattr(a, "ndim") and not isinstance(a, type):
        return a.ndim
    return np.ndim(a)


def size(a, axis=None):
    """The number of elements of ``a`` (along ``axis`` — an int or tuple — if given)."""
    shp = shape(a)
    if axis is None:
        return math.prod(shp)
    axes = _index_tuple(axis)
    return math.prod(shp[canonicalize_axis(ax, len(shp))] for ax in axes)
