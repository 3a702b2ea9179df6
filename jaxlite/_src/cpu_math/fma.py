"""The fused multiply-add in NumPy (XLA:CPU contracts a multiply feeding an add into one):
float32 exact through float64; float64 (``fma64_np``) in double-double arithmetic."""
from __future__ import annotations

import numpy as np

__all__ = ["fma64_np", "fma_f32", "fma_f32_np", "fms_f32", "fnma_f32"]

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


_SPLIT = float(2 ** 27 + 1)


def fma64_np(a, b, c):
    """float64 ``a * b + c`` with one rounding (double-double: Dekker's exact product
    and a two-sum). A zero sum keeps its sign (``-0 * x + -0`` is ``-0``); a factor of
    ``2^995`` or more is scaled down by ``2^54`` first (with ``c``), so Dekker's split
    cannot overflow."""
    a, b, c = (np.asarray(v, _F64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        big = (np.abs(a) >= _BIG) & np.isfinite(a)
        if big.any():
            a = np.where(big, a * _DOWN, a)
            c = np.where(big, c * _DOWN, c)
        big2 = (np.abs(b) >= _BIG) & np.isfinite(b)
        if big2.any():
            b = np.where(big2, b * _DOWN, b)
            c = np.where(big2, c * _DOWN, c)
        out = _fma_dekker(a, b, c)
        if big.any() or big2.any():
            out = np.where(big, out * _UP, out)
            out = np.where(big2, out * _UP, out)
    return out


_BIG, _DOWN, _UP = 2.0 ** 995, 2.0 ** -54, 2.0 ** 54


def _fma_dekker(a, b, c):
    p = a * b
    t = a * _SPLIT
    ah = t - (t - a)
    al = a - ah
    t = b * _SPLIT
    bh = t - (t - b)
    bl = b - bh
    perr = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    back = s - p
    serr = (p - (s - back)) + (c - back)
    corr = serr + perr
    # (an inexact product with an infinite or NaN part: the plain sum is the result)
    return np.where((corr == 0) | ~np.isfinite(corr), s, s + corr)
