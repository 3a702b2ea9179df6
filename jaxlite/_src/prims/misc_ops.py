"""Small primitives of ``jax.lax``: ``mulhi`` (high half of an integer product), ``empty``
(an array whose values do not matter: zeros on the CPU) and ``optimization_barrier``
(identity that keeps the compiler from moving work across it)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.base import BinaryElementwise

__all__ = ["mulhi_p", "empty_p", "optimization_barrier_p", "reduce_precision_p"]


def _mulhi_u64(x, y):
    """High 64 bits of the 128-bit product of uint64 arrays (32-bit limbs)."""
    m = np.uint64(0xFFFFFFFF)
    s = np.uint64(32)
    xl, xh, yl, yh = x & m, x >> s, y & m, y >> s
    ll, lh, hl, hh = xl * yl, xl * yh, xh * yl, xh * yh
    mid = (ll >> s) + (lh & m) + (hl & m)
    return hh + (lh >> s) + (hl >> s) + (mid >> s)


class Mulhi(BinaryElementwise):
    """``mulhi(x, y)``: the upper N bits of the 2N-bit product of N-bit integers."""
    name, kind = "mulhi", "int"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, y):
        x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
        dt = x.dtype
        bits = dt.itemsize * 8
        with np.errstate(over="ignore"):
            if bits < 64:
                wide = np.int64 if dt.kind == "i" else np.uint64
                prod = x.astype(wide) * y.astype(wide)
                return np.asarray(prod >> wide(bits)).astype(dt)
            ux, uy = x.view(np.uint64), y.view(np.uint64)
            hi = _mulhi_u64(ux, uy)
            if dt.kind == "i":   # signed: subtract the wrap-around of negative operands
                hi = hi - np.where(x < 0, uy, np.uint64(0)) - np.where(y < 0, ux, np.uint64(0))
            return np.asarray(hi).view(dt)

    def lower_py(self, ctx, ins):
        return None


mulhi_p = Mulhi()


class Empty(Primitive):
    """``empty(shape, dtype)``: an array of uninitialised values (zeros on the CPU)."""
    name = "empty"
    jvp = NOT_DIFFERENTIABLE
    weak_rule = "never"

    def impl(self, *, shape, dtype, out_sharding=None):
        return np.zeros(shape, dtype)

    def abstract_eval(self, *, shape, dtype, out_sharding=None):
        return ShapedArray(tuple(shape), dtype)

    def batch(self, size, args, dims, **params):
        return self.bind(**params), None


empty_p = Empty()


class OptimizationBarrier(Primitive):
    """Identity on any number of operands; in XLA it stops computations from moving across
    it (a scheduling hint). jaxlite's passes never merge or reorder work across it: it is
    effectful for the compiler."""
    name = "optimization_barrier"
    multiple_results = True
    accepts_extended = True
    effectful = True

    def impl(self, *args):
        return list(args)

    def abstract_eval(self, *avals):
        return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals]

    def jvp(self, primals, tangents):
        n = len(primals)
        nz = [i for i, t in enumerate(tangents) if not u.is_zero(t)]
        outs = self.bind(*primals, *[tangents[i] for i in nz])
        tans = list(tangents)
        for j, i in enumerate(nz):
            tans[i] = outs[n + j]
        return outs[:n], tans

    def transpose(self, cts, *args):
        live = [i for i, c in enumerate(cts) if not u.is_zero(c)]
        outs = self.bind(*[cts[i] for i in live]) if live else []
        res = [None] * len(args)
        for j, i in enumerate(live):
            if u.is_undefined(args[i]):
                res[i] = outs[j]
        return res

    def batch(self, size, args, dims):
        return self.bind(*args), list(dims)


optimization_barrier_p = OptimizationBarrier()


def _reduce_precision(x, exponent_bits, mantissa_bits):
    """Round float array ``x`` to a float format with ``exponent_bits`` / ``mantissa_bits``
    (XLA's ReducePrecision): the mantissa rounded to nearest, ties to even; magnitudes above
    the format's largest finite value become inf, below its smallest normal value signed
    zero; NaNs stay NaN."""
    x = np.asarray(x)
    finfo = np.finfo(x.dtype)
    nbits = x.dtype.itemsize * 8
    src_mant = finfo.nmant
    src_exp = nbits - 1 - src_mant
    it = np.dtype(f"u{x.dtype.itemsize}")
    bits = x.view(it).copy()
    one = it.type(1)
    if mantissa_bits < src_mant:
        drop = src_mant - mantissa_bits
        last = one << it.type(drop)                   # lowest kept mantissa bit
        half_minus_one = (last >> one) - one
        keep_lsb = (bits & last) >> it.type(drop)
        with np.errstate(over="ignore"):
            bits = (bits + keep_lsb + half_minus_one) & ~(last - one)
    if exponent_bits < src_exp:
        exp_mask = ((one << it.type(src_exp)) - one) << it.type(src_mant)
        sign = bits & (one << it.type(nbits - 1))
        bias = (1 << (src_exp - 1)) - 1
        new_bias = (1 << (exponent_bits - 1)) - 1
        max_e = it.type(bias + new_bias) << it.type(src_mant)       # largest finite exponent
        min_e = it.type(bias - new_bias) << it.type(src_mant)       # below: zero
        e = bits & exp_mask
        inf_bits = exp_mask
        bits = np.where(e > max_e, sign | inf_bits, bits)
        bits = np.where(e <= min_e, sign, bits)
    out = bits.view(x.dtype)
    return np.where(np.isnan(x), x, out).astype(x.dtype)


class ReducePrecision(Primitive):
    """``reduce_precision[exponent_bits, mantissa_bits](x)``: ``x`` rounded to a narrower
    floating-point format (values stay in ``x``'s dtype)."""
    name = "reduce_precision"

    def impl(self, x, *, exponent_bits, mantissa_bits):
        return _reduce_precision(x, exponent_bits, mantissa_bits)

    def abstract_eval(self, x, *, exponent_bits, mantissa_bits):
        if not dtypes.issubdtype(x.dtype, np.floating):
            raise TypeError(f"reduce_precision requires a floating point operand, got "
                            f"{x.dtype.name}")
        if exponent_bits < 1 or mantissa_bits < 0:
            raise ValueError("reduce_precision: exponent_bits must be >= 1 and "
                             f"mantissa_bits >= 0, got {exponent_bits}, {mantissa_bits}")
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def jvp(self, primals, tangents, **params):
        t = tangents[0]
        out = self.bind(primals[0], **params)
        return out, (t if u.is_zero(t) else self.bind(t, **params))

    def transpose(self, ct, x, **params):
        return [None if u.is_zero(ct) else self.bind(ct, **params)]

    def batch(self, size, args, dims, **params):
        return self.bind(args[0], **params), dims[0]

    def sharding_rule(self, avals, **params):
        """Elementwise: every dimension keeps its layout."""
        return [tuple(range(avals[0].ndim))]


reduce_precision_p = ReducePrecision()
