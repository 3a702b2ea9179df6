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

__all__ = ["mulhi_p", "empty_p", "optimization_barrier_p"]


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
