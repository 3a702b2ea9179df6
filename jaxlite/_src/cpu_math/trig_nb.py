"""numba twins of ``cpu_math.trig``: scalar float32 ``sin_f32``, ``cos_f32`` and
``tan_f32`` giving the NumPy kernels' bits on every input. Like the NumPy kernels they
evaluate glibc's algorithms and ask the C library (``nb_common.libm_sinf``... calls of
``sinf``/``cosf``/``tanf`` LLVM cannot speculate) only where those do: results near a float32
rounding midpoint, tangents of |x| >= 120."""
from __future__ import annotations


import numpy as np

from jaxlite._src.cpu_math import trig as T
from jaxlite._src.cpu_math.nb_common import (
    _inline, _sel, _sel64, fma64, host_cpu_features, libm_cosf, libm_sinf, libm_tanf)

__all__ = ["acos_f32", "asin_f32", "atan2_f32", "atan_f32", "cos_f32", "sin_f32", "tan_f32"]

F32, F64 = np.float32, np.float64
_U32, _U64, _I64 = np.uint32, np.uint64, np.int64
_ZERO, _ONE, _TWO = F32(0), F32(1), F32(2)
_INF = F32(np.inf)
_HPI_INV_24, _HPI_HI, _HPI_LO, _PI63 = T._HPI_INV_24, T._HPI_HI, T._HPI_LO, T._PI63
_C0, _C1, _C2, _C3, _C4, _S1, _S2, _S3 = T._C0, T._C1, T._C2, T._C3, T._C4, T._S1, \
    T._S2, T._S3
_INV_PIO4 = T._INV_PIO4
_HPI = T._HPI
_TOP_TINY, _TOP_PIO4, _TOP_120, _TOP_INF = (_U32(v) for v in (
    T._TOP_TINY, T._TOP_PIO4, T._TOP_120, T._TOP_INF))
_MID_BAND = _I64(T._MID_BAND)
_LOW29, _TIE29 = _U64(0x1FFFFFFF), _I64(0x10000000)
_M32, _M24, _B23 = _U64(0xFFFFFFFF), _U64(0xFFFFFF), _U64(0x800000)

_TC0 = T._TAN_C0
_TO0, _TO1, _TO2, _TO3, _TO4, _TO5 = T._TAN_ODD
_TE0, _TE1, _TE2, _TE3, _TE4, _TE5 = T._TAN_EVEN
_PIO4_HI, _PIO4_LO, _TAN_TINY = T._PIO4_HI, T._PIO4_LO, T._TAN_TINY
_TAN_FOLD, _TAN_REDUCE, _TAN_BIG = T._TAN_FOLD, T._TAN_REDUCE, T._TAN_BIG
_TWO_OVER_PI_24, _PIO2, _KEEP_HI = F64(T._TWO_OVER_PI_24), F64(T._PIO2), T._KEEP_HI
_ABS32 = _U32(0x7FFFFFFF)


@_inline
def _reduce_large(bits):
    """glibc's ``reduce_large`` of |x| (the float's bits): (r, n)."""
    xi = _U64(bits)
    idx = np.intp((xi >> _U64(26)) & _U64(15))
    shift = (xi >> _U64(23)) & _U64(7)
    xi = ((xi & _M24) | _B23) << shift
    res0 = (xi * _INV_PIO4[idx]) & _M32
    res1 = xi * _INV_PIO4[idx + 4]
    res2 = xi * _INV_PIO4[idx + 8]
    res0 = ((res2 >> _U64(32)) | (res0 << _U64(32))) + res1
    n = (res0 + _U64(1 << 61)) >> _U64(62)
    res0 = res0 - (n << _U64(62))
    return F64(_I64(res0)) * _PI63, _I64(n)


@_inline
def _quadrant(x, fused):
    """glibc's reduction of float32 ``x`` for ``sinf``/``cosf``: (``top``: the top 12
    bits of |x|'s encoding, ``n``: the quadrant count, ``flip``: the cosine's sign,
    ``r2``: r squared, ``rs``: r with the sine's sign), ``r = x - n pi/2`` rounded once
    (one fused multiply-add, or the same value from an exact split of pi/2)."""
    bits = np.float32(x).view(np.uint32)
    top = (bits >> _U32(20)) & _U32(0x7FF)
    x64 = F64(x)
    mid = (top >= _TOP_PIO4) & (top < _TOP_120)
    xm = _sel64(mid, x64, 0.0)
    n = (_I64(np.int32(xm * _HPI_INV_24)) + _I64(0x800000)) >> _I64(24)
    nf = F64(n)
    r = fma64(-nf, _HPI, x64) if fused else (x64 - nf * _HPI_HI) - nf * _HPI_LO
    neg = _I64(0)
    big = (top >= _TOP_120) & (top < _TOP_INF)
    if big:
        r, n = _reduce_large(bits)
        neg = _I64(bits >> _U32(31))
    q = n + neg
    flip = _sel64((q & 2) != 0, -1.0, 1.0)
    rs = r * _sel64(((q + 1) & 2) != 0, -1.0, 1.0)
    return top, n, flip, r * r, rs


@_inline
def _sincos(x, cos):
    top, n, flip, r2, rs = _quadrant(x, False)
    s = (rs + (rs * r2) * _S1) + ((rs * r2) * r2) * (_S2 + r2 * _S3)
    r4 = r2 * r2
    c = (((_C0 + r2 * _C1) + r4 * _C2) + (r4 * r2) * (_C3 + r2 * _C4)) * flip
    odd = (n & 1) == (0 if cos else 1)
    v = _sel64(odd, c, s)
    out = F32(v)
    low = _I64(np.float64(v).view(np.uint64) & _LOW29)
    near = abs(low - _TIE29) < _MID_BAND
    tiny = top < _TOP_TINY
    out = _sel(tiny, _ONE if cos else x, out)
    fin = top < _TOP_INF
    out = _sel(fin, out, x - x)
    if near & fin & ~tiny:
        out = libm_cosf(x) if cos else libm_sinf(x)
    return out


@_inline
def _sincos_fma(x, cos):
    """glibc's ``sinf``/``cosf`` as its FMA build computes them (the variant its ifunc
    picks on a processor with FMA and AVX2): the reduction ``x - n pi/2`` and each ``a + b
    c`` of the polynomials one fused multiply-add, as GCC contracts the C source. Equal to
    the C library on all 2^32 inputs (checked on glibc 2.36), with no call into it, so
    loops of it vectorise."""
    top, n, flip, r2, rs = _quadrant(x, True)
    r3 = rs * r2
    s = fma64(r3 * r2, fma64(r2, _S3, _S2), fma64(r3, _S1, rs))
    r4 = r2 * r2
    c = fma64(r4 * r2, fma64(r2, _C4 * flip, _C3 * flip),
              fma64(r4, _C2 * flip, fma64(r2, _C1 * flip, _C0 * flip)))
    odd = (n & 1) == (0 if cos else 1)
    out = F32(_sel64(odd, c, s))
    out = _sel(top < _TOP_TINY, _ONE if cos else x, out)
    return _sel(top < _TOP_INF, out, x - x)


# glibc's ifunc: the FMA build where the processor has FMA and AVX2; elsewhere the
# evaluation without fusion, asking the C library near rounding midpoints
_GLIBC_FMA = {"fma", "avx2"} <= host_cpu_features()


@_inline
def sin_f32(x):
    """XLA:CPU's float32 ``sin`` of one float32 (``cpu_math.trig.sin_f32``'s bits)."""
    return _sincos_fma(x, False) if _GLIBC_FMA else _sincos(x, False)


@_inline
def cos_f32(x):
    """XLA:CPU's float32 ``cos`` of one float32 (``cpu_math.trig.cos_f32``'s bits)."""
    return _sincos_fma(x, True) if _GLIBC_FMA else _sincos(x, True)


@_inline
def _keep_hi(v):
    return np.uint32(np.float32(v).view(np.uint32) & _KEEP_HI).view(np.float32)


@_inline
def tan_f32(x):
    """XLA:CPU's float32 ``tan`` of one float32 (``cpu_math.trig.tan_f32``'s bits)."""
    bits = np.float32(x).view(np.uint32) & _ABS32
    near = bits < _TAN_BIG
    x64 = F64(_sel(near, x, _ZERO))
    nr = (np.int64(x64 * _TWO_OVER_PI_24) + 0x800000) >> 24
    n = nr * np.int64(bits > _TAN_REDUCE)
    r = x64 - F64(n) * _PIO2
    hx = F32(r)
    y = F32(r - F64(hx))
    odd = (n & 1) == 1
    sgn = _sel(hx < _ZERO, -_ONE, _ONE)
    side = _sel(odd, -_ONE, _ONE)
    fold = (np.float32(hx).view(np.uint32) & _ABS32) >= _TAN_FOLD
    d = (_PIO4_HI - hx * sgn) + (_PIO4_LO - y * sgn)
    hx = _sel(fold, d, hx)
    y = _sel(fold, _ZERO, y)
    x2 = hx * hx
    x4 = x2 * x2
    ca = ((((_TO0 * x4 + _TO1) * x4 + _TO2) * x4 + _TO3) * x4 + _TO4) * x4 + _TO5
    cb = ((((_TE0 * x4 + _TE1) * x4 + _TE2) * x4 + _TE3) * x4 + _TE4) * x4 + _TE5
    x3 = x2 * hx
    corr = ((cb * x2 + ca) * x3 + y) * x2 + y
    corr = x3 * _TC0 + corr
    t = hx + corr
    folded = sgn * (side - _TWO * (hx - (t * t / (t + side) - corr)))
    t_hi = _keep_hi(t)
    lo = corr - (t_hi - hx)
    a = -_ONE / t
    a_hi = _keep_hi(a)
    recip = a_hi + a * ((_ONE + a_hi * t_hi) + a_hi * lo)
    inv = -_ONE / hx
    tiny_direct = _sel(odd, _sel(hx == _ZERO, _INF, inv), hx)
    tiny_fold = sgn * side * (_ONE - _TWO * side * hx)
    out = _sel(odd, recip, t)
    out = _sel(fold, folded, out)
    tiny = abs(hx) < _TAN_TINY
    out = _sel(tiny, _sel(fold, tiny_fold, tiny_direct), out)
    if not near:
        out = libm_tanf(x)
    return out


_AHI0, _AHI1, _AHI2, _AHI3 = T._ATAN_HI
_ALO0, _ALO1, _ALO2, _ALO3 = T._ATAN_LO
_AT0, _AT1, _AT2, _AT3, _AT4, _AT5, _AT6, _AT7, _AT8, _AT9, _AT10 = T._AT
_ATAN_BIG, _ATAN_SMALL, _ATAN_TINY = T._ATAN_BIG, T._ATAN_SMALL, T._ATAN_TINY
_PI, _PI_LO, _PI_O_2, _PI_O_4 = T._PI, T._PI_LO, T._PI_O_2, T._PI_O_4
_INF32 = T._INF32
_TINY32 = F32(np.finfo(np.float32).tiny)
_R1, _R2, _R3 = _U32(0x3F300000), _U32(0x3F980000), _U32(0x401C0000)


@_inline
def _atan(x):
    """``trig._atan_core`` of one float32 (glibc's ``atanf``)."""
    hx = np.float32(x).view(np.uint32)
    ix = hx & _ABS32
    a = abs(x)
    r0 = (_TWO * a - _ONE) / (_TWO + a)
    r1 = (a - _ONE) / (a + _ONE)
    r2 = (a - F32(1.5)) / (_ONE + F32(1.5) * a)
    r3 = F32(-1) / a
    red = _sel(ix < _R1, r0, _sel(ix < _R2, r1, _sel(ix < _R3, r2, r3)))
    small = ix < _ATAN_SMALL
    t = _sel(small, x, red)
    hi = _sel(ix < _R1, _AHI0, _sel(ix < _R2, _AHI1, _sel(ix < _R3, _AHI2, _AHI3)))
    lo = _sel(ix < _R1, _ALO0, _sel(ix < _R2, _ALO1, _sel(ix < _R3, _ALO2, _ALO3)))
    z = t * t
    w = z * z
    s1 = z * (_AT0 + w * (_AT2 + w * (_AT4 + w * (_AT6 + w * (_AT8 + w * _AT10)))))
    s2 = w * (_AT1 + w * (_AT3 + w * (_AT5 + w * (_AT7 + w * _AT9))))
    direct = t - t * (s1 + s2)
    zz = hi - ((t * (s1 + s2) - lo) - t)
    zz = _sel((hx >> _U32(31)) != 0, -zz, zz)
    out = _sel(small, direct, zz)
    out = _sel(ix < _ATAN_TINY, x, out)
    big = _sel((hx >> _U32(31)) != 0, -_AHI3 - _ALO3, _AHI3 + _ALO3)
    out = _sel(ix >= _ATAN_BIG, big, out)
    return _sel(ix > _INF32, x + x, out)


@_inline
def atan_f32(x):
    """XLA:CPU's float32 ``atan`` of one float32 in its vectorised loops: glibc's
    ``atanf`` (``cpu_math.trig.atan_f32``'s bits on every element XLA vectorises; its
    scalar tails, ``xla.atan.f32``, depend on the element's place, which a scalar function
    does not know)."""
    return _atan(x)


@_inline
def _daz(v):
    return _sel(abs(v) < _TINY32, v * _ZERO, v)


@_inline
def atan2_f32(y, x):
    """XLA:CPU's float32 ``atan2(y, x)`` of one pair (``cpu_math.trig.atan2_f32``'s
    bits)."""
    hx = np.float32(x).view(np.uint32)
    hy = np.float32(y).view(np.uint32)
    ix = hx & _ABS32
    iy = hy & _ABS32
    sy = (hy >> _U32(31)) != 0
    sx = (hx >> _U32(31)) != 0
    k = (np.int64(iy) - np.int64(ix)) >> np.int64(23)
    yd, xd = _daz(y), _daz(x)
    q = _daz(abs(yd / xd))
    # (x86 flushes a quotient below FLT_MIN before rounding: trig._atan2_flat)
    q = _sel((q == _TINY32) & (abs(F64(yd) / F64(xd)) < F64(_TINY32)), _ZERO, q)
    z = _atan(q)
    z = _sel(k > 60, _PI_O_2 + F32(0.5) * _PI_LO, z)
    z = _sel(sx & (k < -60), _ZERO, z)
    out = _sel(sx, _sel(sy, (z - _PI_LO) - _PI, _PI - (z - _PI_LO)), _sel(sy, -z, z))
    half_pi = _sel(sy, -_PI_O_2, _PI_O_2)
    out = _sel(iy == _INF32, half_pi, out)
    xinf_finite = _sel(sx, _sel(sy, -_PI, _PI), _sel(sy, F32(-0.0), _ZERO))
    xinf_inf = _sel(sx, F32(3) * _PI_O_4, _PI_O_4) * _sel(sy, F32(-1), _ONE)
    out = _sel(ix == _INF32, _sel(iy == _INF32, xinf_inf, xinf_finite), out)
    out = _sel(ix == 0, half_pi, out)
    out = _sel(iy == 0, _sel(sx, _sel(sy, -_PI, _PI), y), out)
    out = _sel(hx == _U32(0x3F800000), _atan(y), out)
    nan = _sel(ix > _INF32, x + x, y + y)      # x + y, x's NaN first
    return _sel((ix > _INF32) | (iy > _INF32), nan, out)


@_inline
def asin_f32(x):
    """XLA:CPU's float32 ``asin`` of one float32 (``cpu_math.trig.asin_f32``'s bits)."""
    xf = _daz(x)
    d = _ONE + np.sqrt((_ONE - xf) * (xf + _ONE))
    a = atan2_f32(x, d)
    return _daz(a + a)


@_inline
def acos_f32(x):
    """XLA:CPU's float32 ``acos`` of one float32 (``cpu_math.trig.acos_f32``'s bits)."""
    xf = _daz(x)
    return atan2_f32(np.sqrt((_ONE - xf) * (xf + _ONE)), x)
