"""XLA:CPU's float32 ``sin``, ``cos``, ``tan``, ``atan2``, ``asin``, ``acos`` in NumPy, bit
for bit.

XLA:CPU does not expand these: it calls the C library's ``sinf``, ``cosf``, ``tanf`` and
``atan2f`` element by element. On glibc (2.28 and later) these are:

* ``sinf``/``cosf`` (Szabolcs Nagy, Arm, 2018): in double precision. |x| < 2^-12 gives
  ``x`` (``sinf``) or 1 (``cosf``); below 0.75 (the test compares the top 12 bits of the
  float's encoding with those of pi/4) no reduction; below 120 ``n = round(x 2/pi)``
  (through a 2^24-scaled product truncated to an integer) and ``r = x - n pi/2``, one fused
  multiply-add; above, a 32x96-bit integer product with a table of 4/pi gives n and
  ``r`` exactly in 2.62 fixed point. Then ``sin(r)`` = ``r + r^3 (s1 + r^2 (s2 + r^2 s3))``
  or ``cos(r)`` = ``c0 + r^2 c1 + r^4 (c2 + r^2 (c3 + r^2 c4))`` (chosen by n's parity,
  negated by the quadrant), each ``a + b c`` a fused multiply-add, rounded once to float.
  Here the reduction is exact (pi/2 split so each product is exact), the polynomial is
  evaluated in float64 without fusion, and the few results within 2^-17 float32 ulp of a
  rounding midpoint, where fusion could change the rounding, are asked of ``sinf``/``cosf``
  themselves (about one input in 65536).
* ``tanf``: the single-precision fdlibm algorithm (Sun Microsystems, 1993): a degree-27
  odd minimax polynomial on [-pi/4, pi/4], ``tan(pi/4 - y)`` near pi/4, an extra-precise
  ``-1/tan`` in odd quadrants, after a double-precision reduction by pi/2 for |x| < 120
  (larger arguments are asked of ``tanf``).
* ``atan2f``: fdlibm's (float arithmetic): special operands first (NaN: ``x + y``;
  zeros, infinities: exact multiples of pi/4 of the right sign), then
  ``z = atanf(|y/x|)`` (fdlibm's ``atanf``: ``atan(c) + atan((t - c)/(1 + t c))`` for
  c = 0, 1/2, 1, 3/2, inf by |t|, an odd polynomial of degree 23 in two chains), moved to
  the quadrant with pi split in two. XLA runs it with denormals treated as zero: a
  subnormal operand is zero in the arithmetic (not in the bit tests).
* ``asin``/``acos``: XLA expands them into ``2 atan2(x, 1 + sqrt((1 - x)(1 + x)))`` and
  ``atan2(sqrt((1 - x)(1 + x)), x)``.
* ``atan``: XLA lowers it to ``atan2(x, 1)``, which LLVM simplifies to XLA's own
  ``xla.atan.f32``; where LLVM vectorises the loop it calls the C library's ``atanf``
  (glibc's, as ``atan2f`` uses) for the vector lanes, and that is what ``atan_f32``
  computes (its docstring says where XLA's scalar code differs).

Non-finite inputs of sin/cos give ``(x - x) / (x - x)`` (the same as ``x - x``): NaN keeps
its payload, infinities give the default NaN.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np

__all__ = ["acos_f32", "asin_f32", "atan2_f32", "atan_f32", "cos_f32", "sin_f32", "tan_f32"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_I64 = np.dtype(np.int64)

# ------------------------------------------------------------------------ C library

_libm_fns = {}


def _libm(name, nargs):
    """The C library's float function ``name`` through ctypes, or None."""
    key = (name, nargs)
    if key not in _libm_fns:
        fn = None
        try:
            path = ctypes.util.find_library("m")
            if path:
                fn = getattr(ctypes.CDLL(path), name)
                fn.restype = ctypes.c_float
                fn.argtypes = [ctypes.c_float] * nargs
        except (OSError, AttributeError):
            fn = None
        _libm_fns[key] = fn
    return _libm_fns[key]


def _libm_map(name, fallback, *args):
    """``name`` of the C library applied element by element (or ``fallback`` in float64
    when there is no C library to call)."""
    fn = _libm(name, len(args))
    if fn is None:
        with np.errstate(all="ignore"):
            return np.asarray(fallback(*[a.astype(_F64) for a in args])).astype(_F32)
    return np.array([fn(*vals) for vals in zip(*(a.tolist() for a in args))], _F32)


# --------------------------------------------------------------------------- sin, cos

_HPI_INV_24 = float.fromhex("0x1.45F306DC9C883p+23")     # 2/pi * 2^24
_HPI = float.fromhex("0x1.921FB54442D18p0")              # pi/2 as glibc's double
_HPI_HI = float((np.array(_HPI).view(_U64) & np.uint64(0xFFFFFFFFFFFFFF00))
                .view(_F64))                             # n * _HPI_HI exact for |n| < 2^7
_HPI_LO = _HPI - _HPI_HI                                 # 8 bits: n * _HPI_LO exact
_PI63 = float.fromhex("0x1.921FB54442D18p-62")           # 2 pi 2^-64
_C0, _C1, _C2, _C3, _C4 = 1.0, *(float.fromhex(h) for h in (
    "-0x1.ffffffd0c621cp-2", "0x1.55553e1068f19p-5", "-0x1.6c087e89a359dp-10",
    "0x1.99343027bf8c3p-16"))
_S1, _S2, _S3 = (float.fromhex(h) for h in (
    "-0x1.555545995a603p-3", "0x1.1107605230bc4p-7", "-0x1.994eb3774cf24p-13"))
# 4/pi in 8.184 fixed point, one 32-bit window per byte: entry i = floor(4/pi 2^(7+8i))
_INV_PIO4_HEX = "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041"
_INV_PIO4 = np.array([int(_INV_PIO4_HEX[max(0, 2 * i - 6):2 * i + 2], 16)
                      for i in range(24)], _U64)
_TOP_TINY, _TOP_PIO4, _TOP_120, _TOP_INF = 0x398, 0x3F4, 0x42F, 0x7F8
_MID_BAND = 1 << 12          # float64 ulps from a float32 midpoint asked of the C library


def _reduce(x):
    """glibc's reduction of float32 ``x`` (flat): ``(r, n, sign_from_x)`` with ``r`` the
    float64 reduced argument (of |x| when the large reduction is used, then
    ``sign_from_x`` is 1 for a negative x) and ``n`` the quadrant (int64)."""
    bits = x.view(_U32)
    top = (bits >> np.uint32(20)) & np.uint32(0x7FF)
    x64 = x.astype(_F64)
    mid = (top >= _TOP_PIO4) & (top < _TOP_120)
    n = np.where(mid, (np.trunc(x64 * _HPI_INV_24).astype(_I64) + 0x800000) >> 24, 0)
    nf = n.astype(_F64)
    r = (x64 - nf * _HPI_HI) - nf * _HPI_LO
    neg = np.zeros(x.shape, _I64)
    big = (top >= _TOP_120) & (top < _TOP_INF)
    if big.any():
        xi = bits[big].astype(_U64)
        idx = ((xi >> np.uint64(26)) & np.uint64(15)).astype(np.intp)
        shift = (xi >> np.uint64(23)) & np.uint64(7)
        xi = ((xi & np.uint64(0xFFFFFF)) | np.uint64(0x800000)) << shift
        m32 = np.uint64(0xFFFFFFFF)
        res0 = (xi * _INV_PIO4[idx]) & m32
        res1 = xi * _INV_PIO4[idx + 4]
        res2 = xi * _INV_PIO4[idx + 8]
        res0 = ((res2 >> np.uint64(32)) | (res0 << np.uint64(32))) + res1
        nb = (res0 + np.uint64(1 << 61)) >> np.uint64(62)
        res0 = res0 - (nb << np.uint64(62))
        r[big] = res0.view(_I64).astype(_F64) * _PI63
        n[big] = nb.astype(_I64)
        neg[big] = (bits[big] >> np.uint32(31)).astype(_I64)
    return r, n, neg, top


def _sincos(x, cos):
    """glibc's ``sinf`` (``cos`` False) or ``cosf`` of the float32 array ``x``."""
    x = np.asarray(x, _F32)
    shape = x.shape
    x = x.reshape(-1)
    with np.errstate(all="ignore"):
        r, n, neg, top = _reduce(x)
        q = n + neg                          # the quadrant sets the sign and the table
        flip = np.where(q & 2, -1.0, 1.0)
        r2 = r * r
        rs = r * np.where((q + 1) & 2, -1.0, 1.0)     # (1, -1, -1, 1)[q & 3]
        s = (rs + (rs * r2) * _S1) + ((rs * r2) * r2) * (_S2 + r2 * _S3)
        r4 = r2 * r2
        c = (((_C0 + r2 * _C1) + r4 * _C2) + (r4 * r2) * (_C3 + r2 * _C4)) * flip
        odd = (n & 1) == (0 if cos else 1)
        v = np.where(odd, c, s)
        out = v.astype(_F32)
        low = v.view(_U64) & np.uint64(0x1FFFFFFF)
        near = np.abs(low.astype(_I64) - 0x10000000) < _MID_BAND
        tiny = top < _TOP_TINY
        out = np.where(tiny, np.float32(1) if cos else x, out)
        fin = top < _TOP_INF
        if not fin.all():
            out = np.where(fin, out, x - x)
        near &= fin & ~tiny
        if near.any():
            out[near] = _libm_map("cosf" if cos else "sinf", np.cos if cos else np.sin,
                                  x[near])
    return out.reshape(shape)


def sin_f32(x):
    """XLA:CPU's float32 ``sin`` (glibc's ``sinf``) of the float32 array ``x``."""
    return _sincos(x, False)


def cos_f32(x):
    """XLA:CPU's float32 ``cos`` (glibc's ``cosf``) of the float32 array ``x``."""
    return _sincos(x, True)


# --------------------------------------------------------------------------------- tan

# tan(x) ~ x + x^3 (C0 + x^2 C1 + x^4 C2 + ...) on [-0.6744, 0.6744]: C1..C12 split into
# the terms of odd and even index in w = x^4 (two Horner chains)
_TAN_C0 = np.float32(3.3333334327e-01)
_TAN_ODD = tuple(np.float32(c) for c in (
    -1.8558637748e-05, 7.8179444245e-05, 5.8804126456e-04, 3.5920790397e-03,
    2.1869488060e-02, 1.3333334029e-01))        # C11, C9, ..., C1
_TAN_EVEN = tuple(np.float32(c) for c in (
    2.5907305826e-05, 7.1407252108e-05, 2.4646313977e-04, 1.4562094584e-03,
    8.8632395491e-03, 5.3968254477e-02))        # C12, C10, ..., C2
_PIO4_HI, _PIO4_LO = np.float32(7.8539812565e-01), np.float32(3.7748947079e-08)
_TAN_FOLD = np.uint32(0x3F2CA140)               # |x| >= 0.6744: use tan(pi/4 - |x|)
_TAN_TINY = np.float32(2.0 ** -13)
_TAN_REDUCE = np.uint32(0x3F490FDA)             # |x| > this: reduce by multiples of pi/2
_TAN_BIG = np.uint32(0x42F00000)                # |x| >= 120: not reduced here
_TWO_OVER_PI_24 = 2.0 ** 24 * (2.0 / math.pi)   # n = round(x 2/pi) in 8.24 fixed point
_PIO2 = math.pi / 2
_KEEP_HI = np.uint32(0xFFFFF000)


def _keep_hi(v):
    """``v`` with the low 12 bits of its significand cleared (an exactly splittable part)."""
    return (v.view(_U32) & _KEEP_HI).view(_F32)


def _tan_core(x, y, odd):
    """``tan(x + y)`` (``-1 / tan(x + y)`` where ``odd``) for |x| <= pi/4 + small, the
    float32 head and tail ``x``, ``y`` of a reduced argument."""
    neg = x < 0
    fold = (x.view(_U32) & np.uint32(0x7FFFFFFF)) >= _TAN_FOLD
    sgn = np.where(neg, np.float32(-1), np.float32(1))
    side = np.where(odd, np.float32(-1), np.float32(1))
    # near +-pi/4: tan(|x|) = tan(pi/4 - d) with d = (pi/4 - |x|) - |y| (pi/4 in two parts)
    d = (_PIO4_HI - x * sgn) + (_PIO4_LO - y * sgn)
    x = np.where(fold, d, x)
    y = np.where(fold, np.float32(0), y)
    x2 = x * x
    x4 = x2 * x2
    chain_a = np.full(x.shape, _TAN_ODD[0], _F32)
    for c in _TAN_ODD[1:]:
        chain_a = chain_a * x4 + c
    chain_b = np.full(x.shape, _TAN_EVEN[0], _F32)
    for c in _TAN_EVEN[1:]:
        chain_b = chain_b * x4 + c
    x3 = x2 * x
    corr = ((chain_b * x2 + chain_a) * x3 + y) * x2 + y
    corr = x3 * _TAN_C0 + corr                    # tan(x + y) - x
    t = x + corr
    with np.errstate(all="ignore"):
        # folded: tan(pi/4 - d) = 1 - 2 (d - (t^2 / (t + 1) - corr)), and its reciprocal
        # -1 / tan = -1 + 2 (d - (t^2 / (t - 1) - corr))
        folded = sgn * (side - np.float32(2) * (x - (t * t / (t + side) - corr)))
        # -1 / (x + corr) with an exact head: a = -1/t, t_hi + lo = x + corr
        t_hi = _keep_hi(t)
        lo = corr - (t_hi - x)
        a = np.float32(-1) / t
        a_hi = _keep_hi(a)
        recip = a_hi + a * ((np.float32(1) + a_hi * t_hi) + a_hi * lo)
        # |reduced argument| < 2^-13: tan is x itself (-1/x in odd quadrants), and after
        # the fold 1 - 2d (its reciprocal -1 - 2d)
        tiny_direct = np.where(odd, np.where(x == 0, np.float32(np.inf),
                                             np.float32(-1) / x), x)
        tiny_fold = sgn * side * (np.float32(1) - np.float32(2) * side * x)
    out = np.where(odd, recip, t)
    out = np.where(fold, folded, out)
    tiny = np.abs(x) < _TAN_TINY
    out = np.where(tiny & fold, tiny_fold, out)
    return out, tiny & ~fold, tiny_direct


def tan_f32(x):
    """XLA:CPU's float32 ``tan`` (glibc's ``tanf``) of the float32 array ``x``."""
    with np.errstate(all="ignore"):
        return _tan(x)


def _tan(x):
    x = np.asarray(x, _F32)
    shape = x.shape
    x = x.reshape(-1)
    bits = x.view(_U32) & np.uint32(0x7FFFFFFF)
    reduce = bits > _TAN_REDUCE
    x64 = x.astype(_F64)
    with np.errstate(all="ignore"):
        n = (np.trunc(x64 * _TWO_OVER_PI_24).astype(np.int64) + 0x800000) >> 24
        n = np.where(reduce & (bits < _TAN_BIG), n, 0)
        r = x64 - n.astype(_F64) * _PIO2
        head = r.astype(_F32)
        tail = (r - head.astype(_F64)).astype(_F32)
    out, tiny, tiny_val = _tan_core(head, tail, (n & 1).astype(bool))
    # the kernel's early exit for a tiny argument (before any fold)
    pre = tiny & (np.abs(head) < _TAN_TINY)
    out = np.where(pre, tiny_val, out)
    far = bits >= _TAN_BIG
    if far.any():
        out[far] = _libm_map("tanf", np.tan, x[far])
    return out.reshape(shape)


# ------------------------------------------------------------------- atan, atan2

# fdlibm's atanf: atan(x) = atan(c) + atan((x - c) / (1 + x c)) for c = 0, 1/2, 1, 3/2,
# inf (chosen by |x|), the last term an odd polynomial of degree 23 split into two chains
_ATAN_HI = tuple(np.float32(v) for v in (4.6364760399e-01, 7.8539812565e-01,
                                         9.8279368877e-01, 1.5707962513e+00))
_ATAN_LO = tuple(np.float32(v) for v in (5.0121582440e-09, 3.7748947079e-08,
                                         3.4473217170e-08, 7.5497894159e-08))
_AT = tuple(np.float32(v) for v in (
    3.3333334327e-01, -2.0000000298e-01, 1.4285714924e-01, -1.1111110449e-01,
    9.0908870101e-02, -7.6918758452e-02, 6.6610731184e-02, -5.8335702866e-02,
    4.9768779427e-02, -3.6531571299e-02, 1.6285819933e-02))
_ATAN_BIG = np.uint32(0x4C000000)          # |x| >= 2^25: +-(pi/2)
_ATAN_SMALL = np.uint32(0x3EE00000)        # |x| < 7/16: no reduction
_ATAN_TINY = np.uint32(0x31000000)         # |x| < 2^-29: x itself
_ONE = np.float32(1)


def _atan_core(x):
    """fdlibm's ``atanf`` of the float32 array ``x`` (flat)."""
    hx = x.view(_U32)
    ix = hx & np.uint32(0x7FFFFFFF)
    a = np.abs(x)
    # the reduced argument and the index of atan(c) (-1: none)
    red = np.where(ix < np.uint32(0x3F300000), (np.float32(2) * a - _ONE) / (np.float32(2) + a),
                   (a - _ONE) / (a + _ONE))
    red = np.where(ix < np.uint32(0x3F980000), red,
                   np.where(ix < np.uint32(0x401C0000),
                            (a - np.float32(1.5)) / (_ONE + np.float32(1.5) * a),
                            np.float32(-1) / a))
    small = ix < _ATAN_SMALL
    t = np.where(small, x, red)
    idx = ((ix >= np.uint32(0x3F300000)).astype(np.intp) + (ix >= np.uint32(0x3F980000))
           + (ix >= np.uint32(0x401C0000)))
    z = t * t
    w = z * z
    at = _AT
    s1 = z * (at[0] + w * (at[2] + w * (at[4] + w * (at[6] + w * (at[8] + w * at[10])))))
    s2 = w * (at[1] + w * (at[3] + w * (at[5] + w * (at[7] + w * at[9]))))
    direct = t - t * (s1 + s2)
    hi = np.array(_ATAN_HI, _F32)[idx]
    lo = np.array(_ATAN_LO, _F32)[idx]
    zz = hi - ((t * (s1 + s2) - lo) - t)
    zz = np.where(hx >> np.uint32(31), -zz, zz)
    out = np.where(small, direct, zz)
    out = np.where(ix < _ATAN_TINY, x, out)
    big = np.where(hx >> np.uint32(31), -_ATAN_HI[3] - _ATAN_LO[3], _ATAN_HI[3] + _ATAN_LO[3])
    out = np.where(ix >= _ATAN_BIG, big, out)
    return np.where(ix > np.uint32(0x7F800000), x + x, out)


_PI = np.float32(3.1415927410e+00)
_PI_LO = np.float32(-8.7422776573e-08)
_PI_O_2 = np.float32(1.5707963705e+00)
_PI_O_4 = np.float32(7.8539818525e-01)
_INF32 = np.uint32(0x7F800000)
_TINY32 = np.float32(np.finfo(np.float32).tiny)


def _daz(v):
    """``v`` with subnormals replaced by zeros of their sign (XLA runs the C library with
    denormals treated as zero and results flushed to zero)."""
    return np.where(np.abs(v) < np.float32(np.finfo(np.float32).tiny), v * np.float32(0), v)


def _atan2_flat(y, x):
    """glibc's (fdlibm's) ``atan2f(y, x)`` of flat float32 arrays, under DAZ/FTZ."""
    hx, hy = x.view(_U32), y.view(_U32)
    ix, iy = hx & np.uint32(0x7FFFFFFF), hy & np.uint32(0x7FFFFFFF)
    sy = (hy >> np.uint32(31)).astype(bool)
    sx = (hx >> np.uint32(31)).astype(bool)
    # the general case: z = atan(|y/x|), placed in the quadrant
    k = (iy.astype(np.int64) - ix.astype(np.int64)) >> 23
    yd, xd = _daz(y), _daz(x)
    q = _daz(np.abs(yd / xd))
    # the processor flushes a quotient that is below FLT_MIN before rounding (x86 detects
    # tininess before rounding) even where it rounds up to FLT_MIN
    q = np.where((q == _TINY32) & (np.abs(yd.astype(_F64) / xd) < _TINY32), np.float32(0), q)
    z = _atan_core(q)
    z = np.where(k > 60, _PI_O_2 + np.float32(0.5) * _PI_LO, z)
    z = np.where(sx & (k < -60), np.float32(0), z)
    out = np.where(sx, np.where(sy, (z - _PI_LO) - _PI, _PI - (z - _PI_LO)),
                   np.where(sy, -z, z))
    # special operands, the later taking precedence (as the C code's earlier returns)
    half_pi = np.where(sy, -_PI_O_2, _PI_O_2)
    out = np.where(iy == _INF32, half_pi, out)
    xinf_finite = np.where(sx, np.where(sy, -_PI, _PI),
                           np.where(sy, np.float32(-0.0), np.float32(0)))
    xinf_inf = np.where(sx, np.float32(3) * _PI_O_4, _PI_O_4) * np.where(sy, np.float32(-1),
                                                                           np.float32(1))
    out = np.where(ix == _INF32, np.where(iy == _INF32, xinf_inf, xinf_finite), out)
    out = np.where(ix == 0, half_pi, out)
    out = np.where(iy == 0, np.where(sx, np.where(sy, -_PI, _PI), y), out)
    out = np.where(hx == np.uint32(0x3F800000), _atan_core(y), out)
    # x + y: x's NaN when both are (spelt out: a compiler may commute the addition)
    nan = np.where(ix > _INF32, x + x, y + y)
    return np.where((ix > _INF32) | (iy > _INF32), nan, out)


def atan2_f32(y, x):
    """XLA:CPU's float32 ``atan2(y, x)`` (glibc's ``atan2f``) of float32 arrays
    (broadcast against each other)."""
    y, x = np.broadcast_arrays(np.asarray(y, _F32), np.asarray(x, _F32))
    shape = x.shape
    with np.errstate(all="ignore"):
        out = _atan2_flat(np.ascontiguousarray(y).reshape(-1),
                          np.ascontiguousarray(x).reshape(-1))
    return out.reshape(shape)


def asin_f32(x):
    """XLA:CPU's float32 ``asin``: XLA expands it to
    ``2 atan2(x, 1 + sqrt((1 - x)(1 + x)))`` (glibc's ``atan2f``)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        xf = _daz(x).reshape(-1)
        one = np.float32(1)
        d = one + np.sqrt((one - xf) * (xf + one))
        a = _atan2_flat(x.reshape(-1), d)      # (DAZ applies inside atan2f's arithmetic)
        return _daz(a + a).reshape(x.shape)


def acos_f32(x):
    """XLA:CPU's float32 ``acos``: XLA expands it to ``atan2(sqrt((1 - x)(1 + x)), x)``
    (glibc's ``atan2f``)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        xf = _daz(x).reshape(-1)
        one = np.float32(1)
        s = np.sqrt((one - xf) * (xf + one))
        return _atan2_flat(s, x.reshape(-1)).reshape(x.shape)



def atan_f32(x):
    """XLA:CPU's float32 ``atan`` of the float32 array ``x`` (a new array), as its
    vectorised loops compute it: glibc's ``atanf`` (``_atan_core``), on every element.

    XLA's scalar code (arrays of 2..49 elements in one dimension, and the last ``n % 4``
    elements of a longer one, as LLVM compiles the standalone primitive) computes
    ``xla.atan.f32`` instead (``x`` below 1e-3, else ``t P(t^2) / Q(t^2)`` in fused
    multiply-adds on ``t = min(|x|, 1/|x|)``, ``pi/2 -`` it above 1), which differs on
    about 6% of inputs; a kernel computing each element alone cannot follow that."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        return _atan_core(np.ascontiguousarray(x).reshape(-1)).reshape(x.shape)
