"""Twins of lax primitives with XLA:CPU's float32 arithmetic (``_XlaCpu``), and XLA's
contraction of a multiply feeding an add into one fused multiply-add.

A twin *shares its name, parameters and rules with the lax primitive* (``mul``, ``add``,
...), so a traced program prints exactly as before and as JAX prints it, and
transformations treat it as the lax operation; only its ``impl`` differs. Twins are not in
the primitive registry (the lax primitive of the same name is).

Contraction: ``mul_p`` returns its float32 product as a ``_Product`` array that also carries
the exact (float64) product, and ``add_p``/``sub_p`` round ``exact + other`` once when an
operand is such a product, which is XLA's ``fma(a, b, c)``. Callers use this ``mul`` only
where XLA contracts (a product with one use feeding an add or subtract); anything else that
touches a ``_Product`` sees a plain float32 array. Users: ``jnp.linspace`` (XLA's fused
multiply-add of its samples) and the random samplers (``random/xla_ops.py``, whose twins add
XLA's transcendentals and a numba-accelerated multiply-add).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.fma import fma_f32_np
from jaxlite._src.prims import ad_util as ew_u
from jaxlite._src.prims import elementwise as ew
from jaxlite._src.prims.base import Elementwise, _OkDtypes
from jaxlite._src.prims.xla_kernels import xla_class

__all__ = ["fma_f32_np", "arith_twin", "mul_p", "add_p", "sub_p", "mul", "add", "XlaCpu",
           "half", "exact_product", "mul_f32", "add_f32", "xla_fma_p", "xla_fms_p",
           "xla_fnma_p"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def half(dt):
    """Whether ``dt`` is a float type XLA computes through float32 (float16, bfloat16)."""
    return dt.kind == "V" or dt == np.float16 or dt.name == "bfloat16"


class XlaCpu:
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
        if half(dt):
            return np.asarray(self._f32(*[np.asarray(a, _F32) for a in args]), dt)
        return self._lax.impl(*args)

    def lower_py(self, ctx, ins):
        return None

    # (not the lax primitive's inline lowering either, e.g. pow's ``np.power``: the generated
    # code calls this impl)
    lower_stmts = None


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


def exact_product(v):
    """The exact float64 value of ``v`` if it is a fresh float32 product, else None."""
    if isinstance(v, _Product) and v.exact is not None and v.exact.shape == v.shape:
        return v.exact
    return None


def mul_f32(x, y):
    """The float32 product of ``x`` and ``y`` carrying its exact float64 value."""
    p = np.asarray(np.multiply(x, y, dtype=_F64))      # (an array even for 0-d operands)
    out = p.astype(_F32).view(_Product)
    out.exact = p
    return out


def add_f32(x, y, sign=1.0, fma=fma_f32_np):
    """``x + sign * y`` in float32, fused with a product operand (``fma(a, b, c)``)."""
    ex, ey = exact_product(x), exact_product(y)
    if ex is None and ey is None:
        return np.asarray(np.add(x, y) if sign > 0 else np.subtract(x, y), _F32)
    if ex is not None:            # fma(a, b, +-y): the left product is contracted
        return fma(ex, 1.0, np.asarray(y, _F64) * sign)
    # fma(+-a, b, x)
    return fma(ey, sign, np.asarray(x, _F64))


class _XlaCpuArith(XlaCpu):
    def impl(self, *args):
        if all(np.asarray(a).dtype == _F32 for a in args):
            return self._f32(*args)
        return self._lax.impl(*[np.asarray(a).view(np.ndarray) if isinstance(a, _Product)
                                else a for a in args])


def arith_twin(prim, kernel):
    """A twin of the arithmetic primitive ``prim`` computing float32 with ``kernel``."""
    cls = type(f"XlaCpu{type(prim).__name__}", (_XlaCpuArith, type(prim)),
               {"_lax": prim, "_f32": staticmethod(kernel),
                "__doc__": f"``{prim.name}`` with XLA:CPU's multiply-add contraction."})
    return cls()


mul_p = arith_twin(ew.mul_p, mul_f32)
add_p = arith_twin(ew.add_p, add_f32)
sub_p = arith_twin(ew.sub_p, lambda x, y: add_f32(x, y, -1.0))


def mul(x, y):
    """``lax.mul`` whose float32 product an ``add``/``sub`` of this module contracts."""
    return mul_p.bind(x, y)


def add(x, y):
    """``lax.add``, fused with a ``mul`` of this module that feeds it (XLA's FMA)."""
    return add_p.bind(x, y)


class XlaFma(Elementwise):
    """``a * b + c`` rounded once: XLA:CPU's contraction of a product feeding an addition,
    made by the compiler (``passes.contract_products``) in the programs it compiles, never
    in a user's jaxpr. Float32 runs ``cpu_math``'s multiply-add (``XlaMath``); the NumPy
    ``impl`` below (two roundings) only serves dtypes the pass never contracts.
    ``XlaFms`` (``a * b - c``) and ``XlaFnma`` (``c - a * b``) are its negated forms, as
    the processor's fmsub/fnmadd instructions: the negation is part of the one operation."""
    name, kind, nargs = "xla_fma", "float", 3
    product_sign, addend_sign = 1, 1
    # one instruction, not one of XLA's math kernels (tier 2's loops do not give it a loop
    # of its own: numba_kernels._Blocks)
    light_kernel = True

    def impl(self, a, b, c):
        p = np.multiply(a, b)
        return (np.add if self.addend_sign > 0 else np.subtract)(
            p if self.product_sign > 0 else c, c if self.product_sign > 0 else p)

    def jvp(self, primals, tangents):
        """``+-(ta * b + a * tb) +- tc`` (the product rule, with the form's signs)."""
        a, b, c = primals
        ta, tb, tc = tangents
        out = self.bind(a, b, c)
        prod = [t for t in (None if ew_u.is_zero(ta) else ew.mul_p.bind(ta, b),
                            None if ew_u.is_zero(tb) else ew.mul_p.bind(a, tb))
                if t is not None]
        terms = [t if self.product_sign > 0 else ew.neg_p.bind(t) for t in prod]
        if not ew_u.is_zero(tc):
            terms.append(tc if self.addend_sign > 0 else ew.neg_p.bind(tc))
        if not terms:
            return out, ew_u.zeros(ew_u.aval(out))
        t = terms[0]
        for more in terms[1:]:
            t = ew.add_any_p.bind(t, more)
        return out, ew_u.bcast(t, ew_u.aval(out).shape)

    def hlo(self, b, x, y, z):
        """XLA's own text: a multiply and an add or subtract (LLVM contracts them)."""
        out = b.out_avals[0]
        x, y, z = (b.broadcast_to(v, a, out.shape) for v, a in zip((x, y, z), b.in_avals))
        p = b.op("multiply", out, (x, y))
        if self.addend_sign > 0:
            return b.op("add", out, (p, z))
        return b.op("subtract", out, (p, z) if self.product_sign > 0 else (z, p))


class XlaFms(XlaFma):
    """``a * b - c`` rounded once (``fma(a, b, -c)``), XLA:CPU's contraction of a product
    minus a value."""
    name = "xla_fms"
    addend_sign = -1


class XlaFnma(XlaFma):
    """``c - a * b`` rounded once (``fma(-a, b, c)``), XLA:CPU's contraction of a value
    minus a product."""
    name = "xla_fnma"
    product_sign = -1


xla_fma_p = xla_class(XlaFma)()
xla_fms_p = xla_class(XlaFms)()
xla_fnma_p = xla_class(XlaFnma)()
