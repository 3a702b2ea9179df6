"""Operators and methods of jaxlite arrays, installed on both ArrayImpl and Tracer.

Each operator binds the corresponding jnp function directly (no extra wrapper on the eager
hot path)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.numpy import linalg_ops, reductions, shape_ops, ufuncs
from jaxlite._src.numpy.index_update import _IndexUpdateHelper
from jaxlite._src.numpy.indexing import getitem
from jaxlite._src.runtime.array import ArrayImpl

__all__ = []


def _swap(f):
    def r(self, other):
        return f(other, self)
    return r


def _astype(self, dtype, copy=False, device=None):
    from jaxlite._src.lax.elementwise import _convert_element_type
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


def _item_round(self, ndigits=None):
    return round(self.item(), ndigits) if ndigits is not None else round(self.item())


_OPS = {
    "__add__": ufuncs.add, "__radd__": _swap(ufuncs.add),
    "__sub__": ufuncs.subtract, "__rsub__": _swap(ufuncs.subtract),
    "__mul__": ufuncs.multiply, "__rmul__": _swap(ufuncs.multiply),
    "__truediv__": ufuncs.true_divide, "__rtruediv__": _swap(ufuncs.true_divide),
    "__floordiv__": ufuncs.floor_divide, "__rfloordiv__": _swap(ufuncs.floor_divide),
    "__mod__": ufuncs.remainder, "__rmod__": _swap(ufuncs.remainder),
    "__divmod__": ufuncs.divmod, "__rdivmod__": _swap(ufuncs.divmod),
    "__pow__": ufuncs.power, "__rpow__": _swap(ufuncs.power),
    "__matmul__": linalg_ops.matmul, "__rmatmul__": _swap(linalg_ops.matmul),
    "__and__": ufuncs.bitwise_and, "__rand__": _swap(ufuncs.bitwise_and),
    "__or__": ufuncs.bitwise_or, "__ror__": _swap(ufuncs.bitwise_or),
    "__xor__": ufuncs.bitwise_xor, "__rxor__": _swap(ufuncs.bitwise_xor),
    "__lshift__": ufuncs.left_shift, "__rlshift__": _swap(ufuncs.left_shift),
    "__rshift__": ufuncs.right_shift, "__rrshift__": _swap(ufuncs.right_shift),
    "__eq__": ufuncs.equal, "__ne__": ufuncs.not_equal, "__lt__": ufuncs.less,
    "__le__": ufuncs.less_equal, "__gt__": ufuncs.greater, "__ge__": ufuncs.greater_equal,
    "__neg__": ufuncs.negative, "__pos__": ufuncs.positive, "__abs__": ufuncs.absolute,
    "__invert__": ufuncs.invert, "__getitem__": getitem,
}

_METHODS = {
    "sum": reductions.sum, "prod": reductions.prod, "max": reductions.max,
    "min": reductions.min, "mean": reductions.mean, "var": reductions.var,
    "std": reductions.std, "all": reductions.all, "any": reductions.any,
    "argmax": reductions.argmax, "argmin": reductions.argmin, "cumsum": reductions.cumsum,
    "cumprod": reductions.cumprod, "ptp": reductions.ptp,
    "reshape": _reshape, "transpose": _transpose, "ravel": shape_ops.ravel,
    "flatten": shape_ops.ravel, "squeeze": shape_ops.squeeze, "swapaxes": shape_ops.swapaxes,
    "repeat": shape_ops.repeat, "astype": _astype, "view": _view, "round": _round,
    "clip": ufuncs.clip, "conj": ufuncs.conjugate, "conjugate": ufuncs.conjugate,
    "dot": linalg_ops.dot, "trace": linalg_ops.trace, "nonzero": None,
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
    cls.copy = lambda self: self if cls is Tracer else ArrayImpl(np.array(self._value),
                                                                 self.weak_type)
    cls.__round__ = _item_round if cls is ArrayImpl else _round

    def nonzero(self, *, size=None, fill_value=None):
        from jaxlite._src.numpy.sorting import nonzero as nz
        return nz(self, size=size, fill_value=fill_value)
    cls.nonzero = nonzero


_install(ArrayImpl)
_install(Tracer)
