"""The float32 fused multiply-add in NumPy (XLA:CPU contracts a multiply feeding an add
into one), exact through float64."""
from __future__ import annotations

import numpy as np

__all__ = ["fma_f32_np", "fma_f32", "fms_f32", "fnma_f32"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def fma_f32_np(a, b, c):
    """``a * b + c`` rounded once to float32. The float64 product of two float32 values is
    exact; the float64 sum is rounded, and where that rounding lands exactly on a float32
    rounding midpoint the sum's rounding error (two-sum) breaks the tie, so the result is
    the correctly rounded fused multiply-add."""
    p = np.asarray(a, _F64) * np.asarray(b, _F64)
    c = np.asarray(c, _F64)
    s = p + c
    tie = (s.view(np.uint64) & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)
    if tie.any():
        s = np.array(s, _F64, copy=True)
        pt, ct = np.broadcast_to(p, s.shape)[tie], np.broadcast_to(c, s.shape)[tie]
        st = s[tie]
        back = st - pt
        err = (pt - (st - back)) + (ct - back)
        s[tie] = np.where(err == 0, st, np.nextafter(st, np.copysign(np.inf, err)))
    return s.astype(_F32)


def fma_f32(a, b, c):
    """XLA:CPU's contracted ``a * b + c`` on float32 arrays (broadcast): one rounding."""
    return fma_f32_np(a, b, c)


def fms_f32(a, b, c):
    """XLA:CPU's contracted ``a * b - c``: ``fma(a, b, -c)`` (negation is exact)."""
    return fma_f32_np(a, b, np.negative(c))


def fnma_f32(a, b, c):
    """XLA:CPU's contracted ``c - a * b``: ``fma(-a, b, c)`` (negation is exact)."""
    return fma_f32_np(np.negative(a), b, c)
