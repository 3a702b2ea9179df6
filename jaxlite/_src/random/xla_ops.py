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
the same name is), and nothing outside ``jaxlite._src.random`` uses them but
``jnp.linspace`` (XLA's fused multiply-add of its samples), so ``jnp.exp`` and the rest of
the library keep NumPy's arithmetic.

Contraction: ``mul`` returns its float32 product as a ``_Product`` array that also carries
the exact (float64) product, and ``add``/``sub`` round ``exact + other`` once when an operand
is such a product, which is XLA's ``fma(a, b, c)``. The samplers use this ``mul`` only where
XLA contracts (a product with one use feeding an add or subtract); anything else that
touches a ``_Product`` sees a plain float32 array.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.prims import elementwise as ew
from jaxlite._src.prims import reductions as red
from jaxlite._src.prims import special as sp
from jaxlite._src.prims.base import _OkDtypes
from jaxlite._src.random import xla_math as X

__all__ = ["exp", "log", "log1p", "tan", "pow", "lgamma", "mul", "add", "sub",
           "div_by_broadcast", "sum_last3"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _half(dt):
    """Whether ``dt`` is a float type XLA computes through float32 (float16, bfloat16)."""
    return dt.kind == "V" or dt == np.float16 or dt.name == "bfloat16"


class _XlaCpu:
    """Mixin: an unregistered twin of a lax primitive whose float32 impl is XLA:CPU's."""
    _lax = None          # the lax primitive instance this one stands in for
    _f32 = None          # the float32 kernel
    # its own arithmetic (XLA's log, FMA contraction...): tier 2 must not fuse it as the
    # plain op its name says
    fuses_as_its_name = False

    def __init__(self):  # noqa: D107 - not registered: the lax primitive owns the name
        self._ok_dtypes = _OkDtypes(self)

    def impl(self, *args):
        dt = np.asarray(args[0]).dtype
        if any(np.asarray(a).dtype != dt for a in args[1:]):
            return self._lax.impl(*args)      # pow with an integer exponent
        if dt == _F32:
            return self._f32(*[np.asarray(a).view(np.ndarray) for a in args])
        if _half(dt):
            return np.asarray(self._f32(*[np.asarray(a, _F32) for a in args]), dt)
        return self._lax.impl(*args)

    def lower_py(self, ctx, ins):
        return None

    # (not the lax primitive's inline lowering either, e.g. pow's ``np.power``: the generated
    # code calls this impl)
    lower_stmts = None


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

class _Product(np.ndarray):
    """A float32 product that remembers its exact value (``exact``, float64, same shape)."""
    exact = None

    def __array_finalize__(self, obj):
        self.exact = None              # views and results of other operations: plain

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = tuple(np.asarray(a).view(np.ndarray) if isinstance(a, _Product) else a
                      for a in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, _Product) else o
                                  for o in kwargs["out"])
        return getattr(ufunc, method)(*plain, **kwargs)


def _exact(v):
    """The exact float64 value of ``v`` if it is a fresh float32 product, else None."""
    if isinstance(v, _Product) and v.exact is not None and v.exact.shape == v.shape:
        return v.exact
    return None


def _mul_f32(x, y):
    p = np.asarray(np.multiply(x, y, dtype=_F64))      # (an array even for 0-d operands)
    out = p.astype(_F32).view(_Product)
    out.exact = p
    return out


def _add_f32(x, y, sign=1.0):
    ex, ey = _exact(x), _exact(y)
    if ex is None and ey is None:
        return np.asarray(np.add(x, y) if sign > 0 else np.subtract(x, y), _F32)
    if ex is not None:            # fma(a, b, +-y): the left product is contracted
        return X.fma_f32(ex, 1.0, np.asarray(y, _F64) * sign)
    # fma(+-a, b, x)
    return X.fma_f32(ey, sign, np.asarray(x, _F64))


class _XlaCpuArith(_XlaCpu):
    def impl(self, *args):
        if all(np.asarray(a).dtype == _F32 for a in args):
            return self._f32(*args)
        return self._lax.impl(*[np.asarray(a).view(np.ndarray) if isinstance(a, _Product)
                                else a for a in args])


def _arith_twin(prim, kernel):
    cls = type(f"XlaCpu{type(prim).__name__}", (_XlaCpuArith, type(prim)),
               {"_lax": prim, "_f32": staticmethod(kernel),
                "__doc__": f"``{prim.name}`` with XLA:CPU's multiply-add contraction."})
    return cls()


mul_p = _arith_twin(ew.mul_p, _mul_f32)
add_p = _arith_twin(ew.add_p, _add_f32)
sub_p = _arith_twin(ew.sub_p, lambda x, y: _add_f32(x, y, -1.0))


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
