"""The fused multiply-add in NumPy (XLA:CPU contracts a multiply feeding an add into one):
float32 exact through float64, float64 through error-free transformations."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

__all__ = ["exact_terms", "fma64_np", "fma_f32", "fma_f32_np", "fma_f64", "fms_f32", "fms_f64",
           "fnma_f32", "fnma_f64"]

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


# float64: Boldo & Melquiond's emulation ("Emulation of FMA and correctly rounded sums:
# proved algorithms using rounding to odd", IEEE TC 2008): a * b = p + pe exactly (Dekker),
# c + p = s + se exactly (two-sum), then RN(s + RO(se + pe)) with RO rounding to odd. It
# needs no overflow in the splitting and no underflow of the error terms; elements outside
# that range are computed exactly with rationals.
_SPLIT = float(2 ** 27 + 1)
_BIG = 2.0 ** 995          # (Veltkamp's split of a larger operand overflows)
_SMALL = 2.0 ** -969       # (below, a product's rounding error is no float64)
_HUGE = 2.0 ** 1022


def _exact_fma64(x, y, z):
    """The correctly rounded ``x * y + z`` of Python floats (``x``, ``y`` finite)."""
    if not np.isfinite(z):
        return z               # (the product is finite: an infinite or NaN addend wins)
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    try:
        return float(exact)    # (int / int: correctly rounded, subnormals included)
    except OverflowError:
        return float(np.copysign(np.inf, float(exact > 0) - 0.5))


def exact_terms(a, b, c):
    """Error-free float64 terms of ``a * b + c``: ``a * b = p + pe`` exactly (Dekker's
    product, Veltkamp's split: no factor of ``2^995`` or more) and ``c + p = s + se``
    exactly (two-sum). ``s + (se + pe)`` is the double-double sum (``fma64_np``);
    ``fma_f64`` rounds it once."""
    p = a * b
    t = a * _SPLIT
    ah = t - (t - a)
    al = a - ah
    t = b * _SPLIT
    bh = t - (t - b)
    bl = b - bh
    pe = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = c + p
    back = s - p
    se = (p - (s - back)) + (c - back)
    return p, pe, s, se


def fma64_np(a, b, c):
    """float64 ``a * b + c`` in double-double arithmetic, ``s + (se + pe)`` of
    ``exact_terms``: one rounding but for rare double-rounding ties (``fma_f64`` rounds
    correctly, 2-6x slower), for the libm kernels' multiply-adds, whose operands are of
    moderate size (no finite factor of ``2^995`` or more, whose split overflows; a product
    near underflow loses its error term). A sum without rounding error keeps IEEE's sign
    of zero (``-0 * x + -0`` is ``-0``: ``atanh(-0)``); an overflowing product gives the
    plain sum (``lgamma`` of large inputs)."""
    a, b, c = (np.asarray(v, _F64) for v in (a, b, c))
    with np.errstate(all="ignore"):
        _, pe, s, se = exact_terms(a, b, c)
        corr = se + pe
        # (an inexact product with an infinite or NaN part: the plain sum is the result)
        return np.where((corr == 0) | ~np.isfinite(corr), s, s + corr)


def fma_f64(a, b, c):
    """float64 ``a * b + c`` rounded once (the FMA instruction's result)."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, _F64) for v in (a, b, c)))
    with np.errstate(all="ignore"):
        p, pe, s, se = exact_terms(a, b, c)
        u = pe + se
        ub = u - se
        ue = (se - (u - ub)) + (pe - ub)
        # round to odd: an inexact sum takes the neighbour whose last bit is odd
        even = (u.view(np.uint64) & np.uint64(1)) == 0
        v = np.where((ue != 0) & even, np.nextafter(u, np.copysign(np.inf, ue)), u)
        r = s + v
        # (a zero factor: the sum of two zeros, whose sign IEEE's rules give, as
        # ``(-0 * 1) + -0 = -0``; the steps above lose it)
        r = np.where((r == 0) & ((a == 0) | (b == 0)), p + c, r)
        ap, ar = np.abs(p), np.abs(r)
        bad = ~(np.isfinite(a) & np.isfinite(b) & np.isfinite(c)) | \
            (np.abs(a) >= _BIG) | (np.abs(b) >= _BIG) | ((ap < _SMALL) & (p != 0)) | \
            (ap >= _HUGE) | (np.abs(c) >= _HUGE) | ((ar < _SMALL) & (r != 0)) | \
            ~np.isfinite(r)
    if bad.any():
        shape = r.shape
        r = np.array(r, copy=True).reshape(-1)
        fa, fb, fc = a.reshape(-1), b.reshape(-1), c.reshape(-1)
        for i in np.flatnonzero(bad):
            x, y, z = float(fa[i]), float(fb[i]), float(fc[i])
            if np.isfinite(x) and np.isfinite(y):
                r[i] = _exact_fma64(x, y, z)
            else:              # (an infinite or NaN factor: IEEE's a * b + c)
                with np.errstate(all="ignore"):
                    r[i] = np.float64(x) * np.float64(y) + np.float64(z)
        r = r.reshape(shape)
    return r


def fms_f64(a, b, c):
    """float64 ``a * b - c`` rounded once (``fma(a, b, -c)``)."""
    return fma_f64(a, b, np.negative(c))


def fnma_f64(a, b, c):
    """float64 ``c - a * b`` rounded once (``fma(-a, b, c)``)."""
    return fma_f64(np.negative(a), b, c)
