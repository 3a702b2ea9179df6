"""The values autodiff works with, and small helpers the primitives' rules are written with.

``Zero`` (a symbolic zero tangent or cotangent) and ``UndefinedPrimal`` (a linear input of a
transpose rule) live here, below both the rules that take them and the AD interpreter
(``interpreters/ad.py``) that makes them, so the rules never import the interpreter.

The helpers bind primitives directly (so rules work under every trace, and prims never import
the ``lax`` wrappers above them) and follow lax's rules: both operands of a binary op share a
dtype; rank-0 operands broadcast.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.dtypes import float0
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["aval", "const", "mul", "add", "sub", "neg", "div", "select", "zeros", "ones",
           "unbroadcast", "bcast", "convert", "is_zero", "instantiate", "Zero",
           "UndefinedPrimal", "is_undefined", "reduce_sum", "real_part", "eq", "ew",
           "tangent_aval", "zeros_like_aval", "add_tangents", "jvp_apply"]


# ----------------------------------------------------------------------------- AD values

def tangent_aval(aval):
    """The aval of tangents of values of ``aval`` (float0 for integers and booleans)."""
    if aval.dtype.kind in "fcV" or aval.dtype.name in ("bfloat16",) or \
            aval.dtype.name.startswith("float"):
        return ShapedArray(aval.shape, aval.dtype, aval.weak_type)
    return ShapedArray(aval.shape, float0, False)


class Zero:
    """A symbolic zero tangent or cotangent of abstract value ``aval`` (never materialised
    unless a rule needs it)."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Zero({self.aval})"

    @staticmethod
    def like(x):
        return Zero(tangent_aval(aval_of_value(x)))


class UndefinedPrimal:
    """A linear input of a transpose rule: only its abstract value is known."""
    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def zeros_like_aval(aval):
    """A concrete array of zeros for ``aval`` (bound in the current trace if needed)."""
    if aval.dtype == float0:
        return np.zeros(aval.shape, float0)
    if not aval.shape:
        return ArrayImpl(np.zeros((), aval.dtype), aval.weak_type)
    return sp().broadcast_in_dim_p.bind(ArrayImpl(np.zeros((), aval.dtype), False),
                                        shape=tuple(aval.shape), broadcast_dimensions=(),
                                        sharding=None)


def instantiate(t):
    """``t`` with a symbolic Zero replaced by real zeros."""
    return zeros_like_aval(t.aval) if type(t) is Zero else t


def add_tangents(a, b):
    """Sum of two tangents, either possibly Zero."""
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return ew().add_any_p.bind(a, b)


def jvp_apply(prim, primals, tangents, **params):
    """One application of the single-result ``prim`` differentiated forward, as the JVP
    trace applies it (for rules that differentiate a fixed composite of primitives):
    ``tangents`` may hold None or Zero. Returns (primal out, tangent out or Zero)."""
    rule = prim.jvp
    if rule is NOT_DIFFERENTIABLE or all(t is None or type(t) is Zero for t in tangents):
        out = prim.bind(*primals, **params)
        return out, Zero.like(out)
    out, t = rule(primals, [Zero.like(p) if t is None else t
                            for p, t in zip(primals, tangents)], **params)
    if type(t) is not Zero and aval_of_value(t).dtype == float0:
        t = Zero.like(out)
    return out, t


# ----------------------------------------------------------------------------- op helpers

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
