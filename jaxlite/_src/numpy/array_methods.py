"""Operators and methods of jaxlite arrays, installed on Array, ArrayImpl and Tracer.

Binary operators follow JAX's ``_defer_to_unrecognized_arg``: they accept Python scalars,
NumPy values and arrays (and objects with ``__jax_array__``) and return NotImplemented for
anything else, so ``x == None`` is False and ``x + "a"`` raises Python's TypeError. The
type check is one ``in`` test on the fast path.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.numpy import (cumulative, indexing, joining, linalg_ops, reductions, searching,
                                shape_ops, sorting, ufuncs)
from jaxlite._src.numpy.index_update import _IndexUpdateHelper
from jaxlite._src.numpy.indexing import getitem
from jaxlite._src.runtime.array import _IMMUTABLE, Array, ArrayImpl

__all__ = []

_FAST_TYPES = {ArrayImpl, int, float, complex, bool, np.ndarray}
_ACCEPTED = (int, float, complex, np.generic, np.ndarray, Array)


def _accept(other):
    """``other`` itself if a binary operator should take it, its ``__jax_array__()`` if it
    has one, else None."""
    if type(other) in _FAST_TYPES or isinstance(other, _ACCEPTED):
        return other
    m = getattr(other, "__jax_array__", None)
    if m is not None:
        return m()
    return None


def _binop(f, sym, swap=False, reject=()):
    """A binary operator calling ``f`` (operands swapped for reflected operators)."""
    def op(self, other):
        if type(other) not in _FAST_TYPES:
            o = _accept(other)
            if o is None:
                if type(other) in reject:
                    names = (type(other).__name__, type(self).__name__)
                    a, b = names if swap else names[::-1]
                    raise TypeError(f"unsupported operand type(s) for {sym}: {a!r} and {b!r}")
                return NotImplemented
            other = o
        return f(other, self) if swap else f(self, other)
    op.__name__ = f.__name__ if hasattr(f, "__name__") else sym
    op.__doc__ = f"The ``{sym}`` operator (``{op.__name__}``)."
    return op


_SEQ = (list, tuple)
_EQ_REJECT = (dict, list, set, tuple)


def _astype(self, dtype, copy=False, device=None):
    from jaxlite._src.lax.elementwise import _convert_element_type
    if dtypes.is_extended(self.dtype):   # key arrays: jnp.astype's rule
        from jaxlite._src.numpy.extra_creation import astype
        return astype(self, dtype)
    dtypes.check_user_dtype_supported(dtype, "astype")
    return _convert_element_type(self, dtype, False)


def _reshape(self, *shape, order="C", **kw):
    if "shape" in kw:
        shape = (kw["shape"],)
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
        shape = tuple(shape[0])
    return shape_ops.reshape(self, shape, order)


def _transpose(self, *axes):
    if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
        axes = axes[0]
    return shape_ops.transpose(self, axes or None)


def _view(self, dtype=None, type=None):
    if dtype is None:
        return self
    from jaxlite._src.numpy.creation import _bitcast
    return _bitcast(self, np.dtype(dtype))


def _round(self, decimals=0, out=None):
    return ufuncs.round(self, decimals)


def _operator_round(number, ndigits=None):
    """``round(x[, ndigits])``: an Array, as in JAX (integer dtype when ndigits is None)."""
    out = ufuncs.round(number, ndigits or 0)
    return _astype(out, int) if ndigits is None else out


def _contains(self, other):
    """``other in x`` for a 1-d ``x`` and a scalar ``other`` (JAX's rules)."""
    if other is None or isinstance(other, str):
        raise TypeError(f"Array.__contains__: unsupported operand type {type(other)}.")
    from jaxlite._src.numpy.creation import asarray
    query = asarray(other)
    if self.ndim != 1:
        raise ValueError("Array.__contains__: search array must be one-dimensional,"
                         f" got arr.shape={self.shape}.")
    if query.ndim != 0:
        raise ValueError(f"Array.__contains__: query value must be a scalar, got "
                         f"query.shape={query.shape}")
    return reductions.any(ufuncs.equal(self, query))


def _setitem(self, idx, value):
    raise TypeError(_IMMUTABLE)


def _install_ref_indexing(cls):
    """Tracers of refs (kernel arguments, scratch buffers) index by reading and writing the
    ref: ``r[idx]`` binds ``get``, ``r[idx] = v`` binds ``swap``, ``r.at[idx]`` is a view."""
    from jaxlite._src.prims import state

    def __getitem__(self, idx):
        if type(self.aval) is state.AbstractRef:
            return state.ref_get(self, idx)
        return getitem(self, idx)

    def __setitem__(self, idx, value):
        if type(self.aval) is state.AbstractRef:
            return state.ref_set(self, idx, value)
        raise TypeError(_IMMUTABLE)

    def at(self):
        if type(self.aval) is state.AbstractRef:
            return state.ref_at(self)
        return _IndexUpdateHelper(self)
    cls.__getitem__ = __getitem__
    cls.__setitem__ = __setitem__
    cls.at = property(at)


def _copy(self):
    from jaxlite._src.numpy.creation import copy
    return copy(self)


def _deepcopy(self, memo):
    return self.copy()


def _notimplemented_flat(self):
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: "
                              "consider arr.flatten() instead.")


def _argsort(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    return sorting.argsort(self, axis, kind=kind, order=order, stable=stable,
                           descending=descending)


def _sort(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    return sorting.sort(self, axis, kind=kind, order=order, stable=stable,
                        descending=descending)


def _argpartition(self, kth, axis=-1, kind="introselect", order=None):
    if kind != "introselect":
        raise ValueError(f"{kind=!r} is not supported. Only kind='introselect' is supported.")
    if order is not None:
        raise ValueError("The 'order' argument to argpartition is not supported.")
    return sorting.argpartition(self, kth, axis)


def _searchsorted(self, v, side="left", sorter=None, *, method="scan"):
    return sorting.searchsorted(self, v, side, sorter, method=method)


def _take(self, indices, axis=None, out=None, mode=None, unique_indices=False,
          indices_are_sorted=False, fill_value=None):
    return indexing.take(self, indices, axis, out, mode, unique_indices=unique_indices,
                         indices_are_sorted=indices_are_sorted, fill_value=fill_value)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    return searching.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def _diagonal(self, offset=0, axis1=0, axis2=1):
    return linalg_ops.diagonal(self, offset, axis1, axis2)


def _choose(self, choices, out=None, mode="raise"):
    """``jnp.choose(self, choices, mode=...)`` (JAX supports mode 'wrap' and 'clip')."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.choose is not supported.")
    if mode not in ("wrap", "clip"):
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    a, *cs = shape_ops.broadcast_arrays(self, *choices)
    n = len(cs)
    a = ufuncs.remainder(a, n) if mode == "wrap" else ufuncs.clip(a, 0, n - 1)
    stacked = joining.stack(cs)
    return indexing.take_along_axis(stacked, shape_ops.expand_dims(a, 0), 0)[0]


def _byteswap(self, inplace=False):
    """The array with the bytes of each element reversed (shifts and masks on the same-width
    unsigned integer view, so only same-width bitcasts are needed)."""
    if inplace:
        raise ValueError("Inplace byteswapping not supported.")
    k = np.dtype(self.dtype).itemsize
    if k == 1:
        return self
    from jaxlite._src.numpy.creation import asarray
    ut = np.dtype(f"uint{8 * k}")
    u = _view(self, ut)
    mask = asarray(np.array(0xFF, ut), dtype=ut)
    out = None
    for i in range(k):
        byte = ufuncs.bitwise_and(ufuncs.right_shift(u, asarray(np.array(8 * i, ut), ut)), mask)
        moved = ufuncs.left_shift(byte, asarray(np.array(8 * (k - 1 - i), ut), ut))
        out = moved if out is None else ufuncs.bitwise_or(out, moved)
    return _view(out, self.dtype)


def _to_device(self, device, *, stream=None):
    """The array placed on ``device`` (``jax.device_put``)."""
    if stream is not None:
        raise NotImplementedError("stream argument of array.to_device()")
    from jaxlite._src.api.placement import device_put
    return device_put(self, device)


def _array_namespace(self, *, api_version=None):
    """The Array API namespace: ``jaxlite.numpy``."""
    if api_version is not None and api_version not in ("2023.12", "2024.12"):
        raise ValueError(f"{api_version=!r} is not available; available versions are: "
                         "['2023.12', '2024.12']")
    import jaxlite.numpy
    return jaxlite.numpy


def _numpy_dtype(self):
    import warnings
    warnings.warn("Implicit conversion of an array to a dtype is deprecated; rather than "
                  "dtype=arr use dtype=arr.dtype. In the future this will result in an "
                  "error.", DeprecationWarning, stacklevel=2)
    return self.dtype


_OPS = {
    "__add__": _binop(ufuncs.add, "+", reject=_SEQ),
    "__radd__": _binop(ufuncs.add, "+", True, reject=_SEQ),
    "__sub__": _binop(ufuncs.subtract, "-"), "__rsub__": _binop(ufuncs.subtract, "-", True),
    "__mul__": _binop(ufuncs.multiply, "*", reject=_SEQ),
    "__rmul__": _binop(ufuncs.multiply, "*", True, reject=_SEQ),
    "__truediv__": _binop(ufuncs.true_divide, "/"),
    "__rtruediv__": _binop(ufuncs.true_divide, "/", True),
    "__floordiv__": _binop(ufuncs.floor_divide, "//"),
    "__rfloordiv__": _binop(ufuncs.floor_divide, "//", True),
    "__mod__": _binop(ufuncs.remainder, "%"), "__rmod__": _binop(ufuncs.remainder, "%", True),
    "__divmod__": _binop(ufuncs.divmod, "divmod()"),
    "__rdivmod__": _binop(ufuncs.divmod, "divmod()", True),
    "__pow__": _binop(ufuncs.power, "**"), "__rpow__": _binop(ufuncs.power, "**", True),
    "__matmul__": _binop(linalg_ops.matmul, "@"),
    "__rmatmul__": _binop(linalg_ops.matmul, "@", True),
    "__and__": _binop(ufuncs.bitwise_and, "&"), "__rand__": _binop(ufuncs.bitwise_and, "&", True),
    "__or__": _binop(ufuncs.bitwise_or, "|"), "__ror__": _binop(ufuncs.bitwise_or, "|", True),
    "__xor__": _binop(ufuncs.bitwise_xor, "^"), "__rxor__": _binop(ufuncs.bitwise_xor, "^", True),
    "__lshift__": _binop(ufuncs.left_shift, "<<"),
    "__rlshift__": _binop(ufuncs.left_shift, "<<", True),
    "__rshift__": _binop(ufuncs.right_shift, ">>"),
    "__rrshift__": _binop(ufuncs.right_shift, ">>", True),
    "__eq__": _binop(ufuncs.equal, "==", reject=_EQ_REJECT),
    "__ne__": _binop(ufuncs.not_equal, "==", reject=_EQ_REJECT),
    "__lt__": _binop(ufuncs.less, "<"), "__le__": _binop(ufuncs.less_equal, "<="),
    "__gt__": _binop(ufuncs.greater, ">"), "__ge__": _binop(ufuncs.greater_equal, ">="),
    "__neg__": ufuncs.negative, "__pos__": ufuncs.positive, "__abs__": ufuncs.absolute,
    "__invert__": ufuncs.invert, "__getitem__": getitem, "__setitem__": _setitem,
    "__contains__": _contains, "__round__": _operator_round, "__deepcopy__": _deepcopy,
    "__array_namespace__": _array_namespace,
}

_METHODS = {
    "sum": reductions.sum, "prod": reductions.prod, "max": reductions.max,
    "min": reductions.min, "mean": reductions.mean, "var": reductions.var,
    "std": reductions.std, "all": reductions.all, "any": reductions.any,
    "argmax": reductions.argmax, "argmin": reductions.argmin, "cumsum": cumulative.cumsum,
    "cumprod": cumulative.cumprod, "ptp": reductions.ptp,
    "reshape": _reshape, "transpose": _transpose, "ravel": shape_ops.ravel,
    "flatten": shape_ops.ravel, "squeeze": shape_ops.squeeze, "swapaxes": shape_ops.swapaxes,
    "repeat": joining.repeat, "astype": _astype, "view": _view, "round": _round,
    "clip": ufuncs.clip, "conj": ufuncs.conjugate, "conjugate": ufuncs.conjugate,
    "dot": linalg_ops.dot, "trace": linalg_ops.trace, "nonzero": None,
    "argsort": _argsort, "sort": _sort, "argpartition": _argpartition,
    "searchsorted": _searchsorted, "take": _take, "compress": _compress,
    "diagonal": _diagonal, "choose": _choose, "byteswap": _byteswap, "to_device": _to_device,
    "_split": joining.split,
}


def _install(cls):
    for name, fn in _OPS.items():
        setattr(cls, name, fn)
    for name, fn in _METHODS.items():
        if fn is not None:
            setattr(cls, name, fn)
    cls.T = property(lambda self: shape_ops.transpose(self))
    cls.mT = property(lambda self: shape_ops.matrix_transpose(self))
    cls.real = property(lambda self: ufuncs.real(self))
    cls.imag = property(lambda self: ufuncs.imag(self))
    cls.at = property(lambda self: _IndexUpdateHelper(self))
    cls.flat = property(_notimplemented_flat)
    if cls is not ArrayImpl:   # ArrayImpl has its own (a property that warns)
        cls.__numpy_dtype__ = property(_numpy_dtype)
    if cls is Tracer:
        _install_ref_indexing(cls)
        cls.copy = lambda self: self
        cls.__copy__ = lambda self: self
        cls.itemsize = property(lambda self: np.dtype(self.dtype).itemsize)
        cls.nbytes = property(lambda self: self.size * np.dtype(self.dtype).itemsize)
    elif cls is ArrayImpl:
        cls.copy = lambda self: self.clone()   # (keeps the placement, as JAX)
    else:
        cls.copy = _copy

    def nonzero(self, *, size=None, fill_value=None):
        from jaxlite._src.numpy.searching import nonzero as nz
        return nz(self, size=size, fill_value=fill_value)
    cls.nonzero = nonzero


_install(Array)
_install(ArrayImpl)
_install(Tracer)
