"""Float32 arithmetic as XLA:CPU does it, emulated with NumPy's float64: fused
multiply-adds rounded once, and the flush of subnormal results to zero (XLA:CPU runs with
the MXCSR's flush-to-zero and denormals-are-zero bits set).

A kernel is written once against an ``fma`` callable. ``FastFma`` rounds the float64 sum
of the exact product once more to float32 and remembers the sums; where one of them lands
exactly on a float32 rounding midpoint (the one case where rounding twice can differ from
rounding once), ``run`` recomputes those elements with the exact ``fma_f32_np``. So a call
costs four ufuncs, and ties (about one sum in 2**29) cost a second pass over a few elements.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.fma import fma_f32_np

__all__ = ["F32", "F64", "TINY", "FastFma", "exact_fma", "ftz", "mul", "round_ftz", "run"]

F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
TINY = np.float32(np.finfo(np.float32).tiny)
_LOW29, _TIE29 = np.uint64(0x1FFFFFFF), np.uint64(0x10000000)


class FastFma:
    """``fma(a, b, c)``: float32 ``a * b + c`` through one float64 sum (``a``, ``b``
    float32, or ``b`` a float64 power of two; ``c`` float32 or a float constant exact in
    float32), remembering the operands and sums."""
    __slots__ = ("steps",)

    def __init__(self):
        self.steps = []

    def __call__(self, a, b, c):
        s = np.multiply(a, b, dtype=F64)
        s = np.add(s, c, dtype=F64)
        self.steps.append((a, b, c, s))
        return s.astype(F32)

    def ties(self):
        """Mask of the elements where an inexact sum sat on a float32 midpoint (None if
        none). A sum that is exact (a true tie, rounded to even) needs no second pass."""
        if not self.steps:
            return None
        sums = np.stack([t[3] for t in self.steps])
        cand = np.equal(np.bitwise_and(sums.view(np.uint64), _LOW29), _TIE29)
        if not cand.any():
            return None
        shape = sums.shape[1:]
        cand = cand.reshape(len(self.steps), -1)
        tie = np.zeros(cand.shape[1], np.bool_)
        for i in np.flatnonzero(cand.any(axis=1)):
            a, b, c, s = self.steps[i]
            at = cand[i]
            pt = np.broadcast_to(np.multiply(a, b, dtype=F64), shape).reshape(-1)[at]
            ct = np.broadcast_to(np.asarray(c, F64), shape).reshape(-1)[at]
            st = np.reshape(s, -1)[at]
            back = st - pt
            tie[at] |= ((pt - (st - back)) + (ct - back)) != 0      # two-sum error
        return tie.reshape(shape) if tie.any() else None


def exact_fma(a, b, c):
    """The correctly rounded float32 ``a * b + c`` (``fma.fma_f32_np``)."""
    return fma_f32_np(a, b, c)


def ftz(y):
    """``y`` (a float32 array, changed in place; or a float32 scalar) with subnormals
    replaced by zeros of their sign; returns it."""
    y = np.asarray(y, F32)
    np.copyto(y, np.copysign(np.float32(0), y), where=np.abs(y) < TINY)
    return y


def round_ftz(v):
    """The float64 ``v`` (an exact result) rounded to float32, zero (of its sign) where
    ``|v| < FLT_MIN``: x86 flushes a result that is tiny before rounding."""
    y = np.asarray(v, F32)
    np.copyto(y, np.copysign(np.float32(0), y), where=np.abs(v) < TINY)
    return y


def mul(a, b):
    """XLA:CPU's float32 product of float32 ``a`` and ``b`` (FTZ)."""
    return round_ftz(np.multiply(a, b, dtype=F64))


def run(kernel, *args):
    """``kernel(fma, *args)`` with ``FastFma``, redone with ``exact_fma`` on the elements
    where a sum tied. ``args``: float32 arrays of one shape. Returns a new float32 array."""
    fma = FastFma()
    with np.errstate(all="ignore"):
        y = np.array(kernel(fma, *args), F32, copy=True)
        tie = fma.ties()
        if tie is not None:
            y[tie] = kernel(exact_fma, *(a[tie] for a in args))
    return y
