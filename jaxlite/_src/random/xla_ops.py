"""The random samplers' elementwise operations with XLA:CPU's float32 arithmetic.

JAX compiles every sampler with XLA, whose CPU backend has its own float32 ``exp``, ``log``,
``log1p``, ``lgamma`` (and calls the C library's ``tan``/``pow``), and contracts a multiply
feeding an add into one fused multiply-add. To give JAX's samples bit for bit, the samplers
use the operations of this module instead of lax's: each is a primitive that *shares its
name, parameters and rules with the lax primitive* (``exp``, ``log``, ``mul``, ``add``, ...),
so a traced sampler prints exactly as before and as JAX prints it, and transformations
treat it as the lax operation; only its ``impl`` differs, computing float32 (and, through
float32, float16/bfloat16) with ``xla_math``'s kernels. Other dtypes use lax's NumPy
implementation. These primitives are not in the primitive registry (the lax primitive of
the same name is), and nothing outside ``jaxlite._src.random`` uses them, so ``jnp.exp``
and the rest of the library keep NumPy's arithmetic.

Contraction (XLA's fused multiply-add of a product feeding an add): ``mul``/``add``/``sub``
are ``prims/xla_fma.py``'s twins with this module's numba-accelerated multiply-add.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.prims import elementwise as ew
from jaxlite._src.prims import reductions as red
from jaxlite._src.prims import special as sp
from jaxlite._src.prims.xla_fma import (XlaCpu as _XlaCpu, add_f32, arith_twin,
                                        exact_product as _exact, mul_f32)
from jaxlite._src.random import xla_math as X

__all__ = ["exp", "log", "log1p", "tan", "pow", "lgamma", "mul", "add", "sub",
           "div_by_broadcast", "sum_last3"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _twin(prim, kernel):
    cls = type(f"XlaCpu{type(prim).__name__}", (_XlaCpu, type(prim)),
               {"_lax": prim, "_f32": staticmethod(kernel),
                "__doc__": f"``{prim.name}`` with XLA:CPU's float32 arithmetic."})
    return cls()


def _shaped(kernel):
    def run(*args):
        shape = np.broadcast_shapes(*[np.shape(a) for a in args])
        return np.asarray(kernel(*args), _F32).reshape(shape)
    return run


exp_p = _twin(ew.exp_p, _shaped(X.exp_f32))
log_p = _twin(ew.log_p, _shaped(X.log_f32))
log1p_p = _twin(ew.log1p_p, _shaped(X.log1p_f32))
tan_p = _twin(ew.tan_p, _shaped(X.tan_f32))
pow_p = _twin(ew.pow_p, _shaped(X.pow_f32))
lgamma_p = _twin(sp.lgamma_p, _shaped(X.lgamma_f32))


# --------------------------------------------------------------------------- contraction

def _add_f32(x, y, sign=1.0):
    return add_f32(x, y, sign, X.fma_f32)     # (numba's multiply-add on large arrays)


mul_p = arith_twin(ew.mul_p, mul_f32)
add_p = arith_twin(ew.add_p, _add_f32)
sub_p = arith_twin(ew.sub_p, lambda x, y: _add_f32(x, y, -1.0))


# --------------------------------------------------------------- division, reduction

class _XlaCpuRecipDiv(_XlaCpu, type(ew.div_p)):
    """``div`` by a divisor XLA sees as a constant or a broadcast: XLA rewrites ``x / b``
    into ``x * (1 / b)``, rounding the reciprocal first."""
    _lax = ew.div_p

    def impl(self, x, y):
        dt = np.asarray(x).dtype
        if dt not in (_F32, np.dtype(np.float16)) or np.asarray(y).dtype != dt:
            return self._lax.impl(x, y)     # (bfloat16 divides: XLA:CPU widens it first)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            recip = np.asarray(np.true_divide(dt.type(1), y), dt)
            return np.asarray(np.multiply(x, recip), dt)


div_by_broadcast_p = _XlaCpuRecipDiv()


class _XlaCpuRowSum(type(red.reduce_sum_p)):
    """``reduce_sum`` of float32 products over a last axis of length 3 as XLA:CPU's fused
    loop computes ``sum(v * v)``: ``fma(v2, v2, fma(v0, v0, v1 * v1))``."""

    def __init__(self):  # noqa: D107 - not registered: lax's reduce_sum owns the name
        pass

    def impl(self, x, axes, out_sharding=None):
        exact = _exact(x)
        if exact is None or tuple(axes) != (x.ndim - 1,) or x.shape[-1] != 3:
            return red.reduce_sum_p.impl(np.asarray(x).view(np.ndarray), axes, out_sharding)
        acc = np.asarray(x[..., 1]).view(np.ndarray)
        acc = X.fma_f32(exact[..., 0], 1.0, acc)
        return X.fma_f32(exact[..., 2], 1.0, acc)

    def lower_py(self, ctx, ins, axes, out_sharding=None):
        return None

    def lower_stmts(self, ctx, ins, outs, eqn):
        # not reduce_sum's inline np.add.reduce: the generated code calls this impl
        return None


row_sum_p = _XlaCpuRowSum()


# ------------------------------------------------------------------------------ wrappers

def exp(x):
    """``lax.exp`` with XLA:CPU's float32 rounding."""
    return exp_p.bind(x)


def log(x):
    """``lax.log`` with XLA:CPU's float32 rounding."""
    return log_p.bind(x)


def log1p(x):
    """``lax.log1p`` with XLA:CPU's float32 rounding."""
    return log1p_p.bind(x)


def tan(x):
    """``lax.tan`` with XLA:CPU's float32 rounding (the C library's ``tanf``)."""
    return tan_p.bind(x)


def pow(x, y):  # noqa: A001 - lax's name
    """``lax.pow`` with XLA:CPU's float32 rounding (the C library's ``powf``)."""
    return pow_p.bind(x, y)


def lgamma(x):
    """``lax.lgamma`` with XLA:CPU's float32 rounding."""
    return lgamma_p.bind(x)


def mul(x, y):
    """``lax.mul`` whose float32 product an ``add``/``sub`` of this module contracts."""
    return mul_p.bind(x, y)


def add(x, y):
    """``lax.add``, fused with a ``mul`` of this module that feeds it (XLA's FMA)."""
    return add_p.bind(x, y)


def sub(x, y):
    """``lax.sub``, fused with a ``mul`` of this module that feeds it (XLA's FMA)."""
    return sub_p.bind(x, y)


def div_by_broadcast(x, y):
    """``lax.div`` where XLA sees ``y`` as a constant or a broadcast (and so multiplies by
    its rounded reciprocal)."""
    return div_by_broadcast_p.bind(x, y)


def sum_last3(x):
    """``reduce_sum`` over the last axis of length 3 of a ``mul`` of this module, as
    XLA:CPU's fused loop adds it."""
    return row_sum_p.bind(x, axes=(x.ndim - 1,), out_sharding=None)
