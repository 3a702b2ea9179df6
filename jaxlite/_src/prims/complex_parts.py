"""Complex numbers from and to their parts: ``complex`` (lax.complex), ``real``, ``imag``
and ``conj``, each one class; linear, so their JVPs and transposes are each other."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.base import BinaryElementwise, UnaryElementwise

__all__ = ["complex_p", "conj_p", "imag_p", "real_p"]


class Complex(BinaryElementwise):
    """Build a complex number from real and imaginary parts (lax.complex)."""
    name, kind = "complex", "float"
    hlo_op = "complex"

    def impl(self, x, y):
        dt = np.complex128 if x.dtype == np.float64 else np.complex64
        return np.asarray(x + 1j * np.asarray(y, dt), dt) if np.ndim(x) or np.ndim(y) else \
            dt(x + 1j * y)

    def abstract_eval(self, x, y):
        out = super().abstract_eval(x, y)
        return out.update(dtype=np.complex128 if x.dtype == np.float64 else np.complex64)

    def jvp(self, primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = self.bind(x, y)
        tx = u.zeros(u.aval(x)) if u.is_zero(tx) else tx
        ty = u.zeros(u.aval(y)) if u.is_zero(ty) else ty
        return out, self.bind(tx, ty)

    def transpose(self, ct, x, y):
        if u.is_zero(ct):
            return [None, None]
        return [u.unbroadcast(real_p.bind(ct), u.aval(x)) if u.is_undefined(x) else None,
                u.unbroadcast(imag_p.bind(u.neg(ct)), u.aval(y)) if u.is_undefined(y)
                else None]


class Real(UnaryElementwise):
    name, np_fn, kind = "real", np.real, "complex"
    hlo_op = "real"

    def abstract_eval(self, x):
        out = super().abstract_eval(x)
        return out.update(dtype=np.float64 if x.dtype == np.complex128 else np.float32)

    def lower_py(self, ctx, ins):
        return f"np.real({ins[0]})"

    def jvp(self, primals, tangents):
        return self.bind(primals[0]), self.bind(tangents[0])

    def transpose(self, ct, x):
        if u.is_zero(ct):
            return [None]
        return [complex_p.bind(ct, u.zeros(u.aval(ct)))]


class Imag(Real):
    name, np_fn = "imag", np.imag
    hlo_op = "imag"

    def lower_py(self, ctx, ins):
        return f"np.imag({ins[0]})"

    def transpose(self, ct, x):
        if u.is_zero(ct):
            return [None]
        return [complex_p.bind(u.zeros(u.aval(ct)), u.neg(ct))]


class Conj(UnaryElementwise):
    name, np_fn, kind = "conj", np.conjugate, "inexact"

    def impl(self, x, input_dtype=None):
        return np.conjugate(x) if x.dtype.kind == "c" else x.astype(
            np.complex128 if x.dtype == np.float64 else np.complex64)

    def abstract_eval(self, x, input_dtype=None):
        dt = x.dtype if x.dtype.kind == "c" else np.dtype(
            np.complex128 if x.dtype == np.float64 else np.complex64)
        return ShapedArray(x.shape, dt, x.weak_type)

    def lower_py(self, ctx, ins, input_dtype=None):
        return None

    def hlo(self, b, x, input_dtype=None):
        """complex(real(x), -imag(x)); a real operand is converted to complex."""
        (a,), out = b.in_avals, b.out_avals[0]
        if a.dtype.kind != "c":
            return b.op("convert", out, (x,))
        part = out.update(dtype=np.dtype(np.float64 if out.dtype == np.complex128
                                          else np.float32))
        re_, im = b.op("real", part, (x,)), b.op("imag", part, (x,))
        return b.op("complex", out, (re_, b.op("negate", part, (im,))))

    def jvp(self, primals, tangents, input_dtype=None):
        return (self.bind(primals[0], input_dtype=input_dtype),
                self.bind(tangents[0], input_dtype=input_dtype))

    def transpose(self, ct, x, input_dtype=None):
        if u.is_zero(ct):
            return [None]
        if np.dtype(u.aval(x).dtype).kind == "c":
            return [self.bind(ct, input_dtype=input_dtype)]
        return [real_p.bind(ct)]


complex_p, real_p, imag_p, conj_p = Complex(), Real(), Imag(), Conj()
