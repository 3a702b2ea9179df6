"""Small helpers the primitives' JVP and transpose rules are written with.

They bind primitives directly (so rules work under every trace) and follow lax's rules: both
operands of a binary op share a dtype; rank-0 operands broadcast.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.interpreters.ad import UndefinedPrimal, Zero, instantiate
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["aval", "const", "mul", "add", "sub", "neg", "div", "select", "zeros", "ones",
           "unbroadcast", "bcast", "convert", "is_zero", "instantiate", "Zero",
           "UndefinedPrimal", "is_undefined", "reduce_sum", "real_part", "eq", "ew"]


def ew():
    from jaxlite._src.prims import elementwise
    return elementwise


def sp():
    from jaxlite._src.prims import shape
    return shape


def aval(x):
    return x.aval if hasattr(x, "aval") and not isinstance(x, np.ndarray) else \
        aval_of_value(x)


def const(x, v):
    """The rank-0 constant ``v`` with ``x``'s dtype and weak type (as JAX's ``_const``, so
    derivatives of weakly typed values stay weakly typed)."""
    a = aval(x)
    return ArrayImpl(np.asarray(v, a.dtype), bool(getattr(a, "weak_type", False)))


def zeros(a):
    """Zeros of the aval (or value) ``a``, keeping its weak type (JAX's ``full_like``)."""
    a = a if hasattr(a, "shape") and hasattr(a, "dtype") and not hasattr(a, "_value") and \
        not hasattr(a, "_trace") else aval(a)
    weak = bool(getattr(a, "weak_type", False))
    if not a.shape:
        return ArrayImpl(np.zeros((), a.dtype), weak)
    return sp().broadcast_in_dim_p.bind(ArrayImpl(np.zeros((), a.dtype), weak),
                                        shape=tuple(a.shape), broadcast_dimensions=(),
                                        sharding=None)


def ones(a):
    """Ones shaped like the value ``a``, keeping its weak type (JAX's ``full_like``)."""
    a = aval(a)
    weak = bool(getattr(a, "weak_type", False))
    if not a.shape:
        return ArrayImpl(np.ones((), a.dtype), weak)
    return sp().broadcast_in_dim_p.bind(ArrayImpl(np.ones((), a.dtype), weak),
                                        shape=tuple(a.shape), broadcast_dimensions=(),
                                        sharding=None)


def mul(a, b):
    return ew().mul_p.bind(a, b)


def add(a, b):
    return ew().add_p.bind(a, b)


def add_any(a, b):
    return ew().add_any_p.bind(a, b)


def sub(a, b):
    return ew().sub_p.bind(a, b)


def neg(a):
    return ew().neg_p.bind(a)


def div(a, b):
    return ew().div_p.bind(a, b)


def eq(a, b):
    return ew().eq_p.bind(a, b)


def select(pred, on_true, on_false):
    return ew().select_n_p.bind(pred, on_false, on_true)


def convert(x, dtype, weak_type=False):
    dtype = np.dtype(dtype)
    if aval(x).dtype == dtype:
        return x
    return ew().convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type,
                                            sharding=None)


def real_part(x):
    return ew().real_p.bind(x) if aval(x).dtype.kind == "c" else x


def reduce_sum(x, axes):
    from jaxlite._src.prims.reductions import reduce_sum_p
    if not axes:
        return x
    return reduce_sum_p.bind(x, axes=tuple(axes), out_sharding=None)


def bcast(t, shape):
    """``t`` broadcast to ``shape`` (t is rank-0, of equal rank with size-1 dims, or already
    of that shape)."""
    shape = tuple(shape)
    a = aval(t)
    if a.shape == shape:
        return t
    if a.ndim and a.ndim == len(shape):   # size-1 dims: squeeze them, then broadcast (JAX)
        dims = tuple(i for i, (m, n) in enumerate(zip(a.shape, shape)) if m == n)
        t = sp().reshape_p.bind(t, new_sizes=tuple(a.shape[i] for i in dims), dimensions=None,
                                sharding=None)
    else:
        dims = tuple(range(len(shape) - a.ndim, len(shape))) if a.ndim else ()
    return sp().broadcast_in_dim_p.bind(t, shape=shape, broadcast_dimensions=dims,
                                        sharding=None)


def unbroadcast(ct, target):
    """Sum the cotangent ``ct`` down to ``target``'s shape (lax's rank-0 and size-1
    broadcasting), and to its dtype's real part when the primal was real."""
    a = aval(ct)
    tshape = tuple(target.shape)
    if a.shape != tshape:
        if not tshape:
            ct = reduce_sum(ct, range(a.ndim))
        else:
            axes = [i for i, (n, m) in enumerate(zip(a.shape, tshape)) if n != m]
            ct = reduce_sum(ct, axes)
            ct = sp().reshape_p.bind(ct, new_sizes=tshape, dimensions=None, sharding=None)
    if aval(ct).dtype.kind == "c" and np.dtype(target.dtype).kind != "c":
        ct = ew().real_p.bind(ct)
    return ct


def is_zero(t):
    return type(t) is Zero


def is_undefined(x):
    return type(x) is UndefinedPrimal


def const_literal(lit):
    """The value of a jaxpr Literal as an array (keeping its weak type)."""
    return ArrayImpl(np.asarray(lit.val, lit.aval.dtype), lit.aval.weak_type)
