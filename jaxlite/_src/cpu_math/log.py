"""XLA:CPU's float32 ``log`` and ``log1p`` in NumPy, bit for bit.

* ``log``: XLA's own kernel (the Cephes ``logf`` algorithm). The argument is clamped to
  FLT_MIN (with denormals treated as zero, a subnormal input is zero), split into a
  significand ``m`` in [1/2, 1) and an exponent ``e`` from its bits; below sqrt(1/2) the
  significand doubles (``t = 2m - 1``, ``e - 1``), else ``t = m - 1``. A degree-8
  polynomial in ``t`` is evaluated in three Horner parts of three terms joined by ``t^3``
  (every multiply feeding an add contracted into a fused multiply-add, the last one adding
  ``e ln2_lo``), then ``t - t^2/2 + y + e ln2_hi``. Zero gives -inf, +inf gives +inf, and a
  negative or NaN input gives the NaN with all bits set (0xFFFFFFFF).
* ``log1p``: a Cephes rational for |x| < sqrt(2) - 1 (numerator and denominator of degree
  6 by FMA Horner steps, then ``x - x^2/2 + x^3 (num/den)``), else ``log(1 + x)``. -1 gives
  -inf, +inf gives +inf; below -1 and NaN give 0xFFFFFFFF; subnormal inputs are zeros of
  their sign.

The fused multiply-adds are evaluated in float64: the product of two float32 values is
exact there, and the float64 sum rounded to float32 was compared with XLA on all 2**32
inputs of each function (0 differences), so no tie correction is needed.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.fma import fma_f32_np

__all__ = ["log1p_f32", "log_f32"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_U32 = np.dtype(np.uint32)
_TINY = np.float32(np.finfo(np.float32).tiny)
_NAN_BITS = np.uint32(0xFFFFFFFF)
_ALL_NAN = _NAN_BITS.view(np.float32)

# log's polynomial, highest degree first, as float64 copies of float32 constants
_LOG_P = tuple(np.float64(np.float32(c)) for c in (
    7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
    -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1))
_LN2_LO, _LN2_HI = np.float32(-2.12194440e-4), np.float32(0.693359375)
_SQRTHF = np.float32(0.707106781186547524)
_KEEP_SIGN_MANT, _HALF_EXP = np.uint32(0x807FFFFF), np.uint32(0x3F000000)

# log1p's rational for |x| < sqrt(2) - 1, highest degree first
_L1P_NUM = tuple(np.float64(np.float32(c)) for c in (
    4.5270000862445199635215E-5, 4.9854102823193375972212E-1, 6.5787325942061044846969E0,
    2.9911919328553073277375E1, 6.0949667980987787057556E1, 5.7112963590585538103336E1,
    2.0039553499201281259648E1))
_L1P_DEN = tuple(np.float64(np.float32(c)) for c in (
    1., 1.5062909083469192043167E1, 8.3047565967967209469434E1, 2.2176239823732856465394E2,
    3.0909872225312059774938E2, 2.1642788614495947685003E2, 6.0118660497603843919306E1))
_L1P_SMALL = np.float32(0.41421356237309504880)


def _fma(a64, b64, c):
    """float32(a * b + c) for float64 ``a64``, ``b64`` holding float32 values."""
    return (a64 * b64 + c).astype(_F32)


def _log_normal(x):
    """XLA's log arithmetic on float32 ``x`` clamped to >= FLT_MIN (NaN stays NaN; the
    special inputs are fixed by the caller)."""
    b = np.maximum(x, _TINY).view(_U32)
    m = ((b & _KEEP_SIGN_MANT) | _HALF_EXP).view(_F32)
    low = m < _SQRTHF
    e = (b >> np.uint32(23)).astype(_F32) - (np.float32(126) + low)
    t = (m - np.float32(1)) + m * low
    t64 = t.astype(_F64)
    t2 = t * t
    t3 = (t2 * t).astype(_F64)
    p = _LOG_P
    y = _fma(_fma(t64, p[0], p[1]).astype(_F64), t64, p[2])
    y1 = _fma(_fma(t64, p[3], p[4]).astype(_F64), t64, p[5])
    y2 = _fma(_fma(t64, p[6], p[7]).astype(_F64), t64, p[8])
    y = _fma(y.astype(_F64), t3, y1)
    y = _fma(y.astype(_F64), t3, y2)
    y = _fma(y.astype(_F64), t3, e * _LN2_LO)
    return ((t - t2 * np.float32(0.5)) + y) + e * _LN2_HI


def log_f32(x):
    """XLA:CPU's float32 natural logarithm of the float32 array ``x`` (a new array)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        r = np.asarray(_log_normal(x), _F32)
        bad = ~(x >= _TINY) | (x == np.inf)      # NaN, <= 0, subnormal, +inf
        if bad.any():
            xb = x[bad]
            r[bad] = np.where(xb == np.inf, xb,
                              np.where((xb >= 0) | (xb > -_TINY),
                                       np.float32(-np.inf), _ALL_NAN))
    return r


def _log1p_small(x, fused=False):
    """XLA's rational log1p for float32 ``x`` (meaningful for |x| < sqrt(2) - 1). With
    ``fused``, the form LLVM emits when log1p is fused with other operations (seen in
    ``atanh``): ``x^3 r - x^2/2`` becomes one fused multiply-add."""
    x64 = x.astype(_F64)
    num = _fma(x64, _L1P_NUM[0], _L1P_NUM[1])
    den = _fma(x64, _L1P_DEN[0], _L1P_DEN[1])
    for a, b in zip(_L1P_NUM[2:], _L1P_DEN[2:]):
        num = _fma(num.astype(_F64), x64, a)
        den = _fma(den.astype(_F64), x64, b)
    x2 = x * x
    if fused:
        return x + fma_f32_np(x * x2, num / den, x2 * np.float32(-0.5))
    return x + (x2 * np.float32(-0.5) + (x * x2) * (num / den))


def log1p_f32(x, fused=False):
    """XLA:CPU's float32 ``log1p`` of the float32 array ``x`` (a new array); ``fused``
    selects the contraction XLA's code gets inside a larger fusion (``_log1p_small``)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        x = np.where(np.abs(x) < _TINY, x * np.float32(0), x)     # denormals are zero
        big = np.abs(x) >= _L1P_SMALL
        r = np.asarray(_log1p_small(x, fused), _F32)
        if big.any():
            v = np.float32(1) + x[big]
            r[big] = np.where(v > 0, _log_normal(v), np.float32(-np.inf))
        bad = ~(x > np.float32(-1)) | (x == np.inf)
        if bad.any():
            xb = x[bad]
            r[bad] = np.where(xb == np.inf, xb,
                              np.where(xb == np.float32(-1), np.float32(-np.inf),
                                       _ALL_NAN))
    return r
