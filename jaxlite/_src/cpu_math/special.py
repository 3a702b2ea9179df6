"""XLA:CPU's float32 ``erf_inv`` and ``cbrt`` in NumPy, bit for bit (``cbrt``: see
``cbrt_f32``).

XLA expands ``erf_inv`` (Giles' single-precision approximation) into plain operations:
``w = -log1p(-x^2)`` (XLA's own ``log1p``, ``cpu_math.log``), then a degree-8 polynomial in
``w - 2.5`` (w < 5) or ``sqrt(w) - 3`` (otherwise; the coefficient sets are selected
element by element), by Horner's rule with every multiply-add fused, times ``x``; |x| = 1
gives ``x * inf``. Outside [-1, 1] log1p's all-ones NaN, negated, gives 0x7FFFFFFF; a NaN
input is returned quieted. Subnormal inputs are zeros and subnormal results flush to zero
(XLA:CPU's DAZ/FTZ). The fused multiply-adds are float64 sums of exact float32 products
rounded to float32 (compared with XLA on all float32 inputs of [2^-24, 1) and 2^22
random bit patterns).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.log import log1p_f32

__all__ = ["cbrt_f32", "erf_inv_f32"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_TINY = np.float32(np.finfo(np.float32).tiny)
# Giles' coefficients, highest degree first, for w < 5 and w >= 5
ERFINV_LT5 = tuple(np.float64(np.float32(c)) for c in (
    2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
    -0.00125372503, -0.00417768164, 0.246640727, 1.50140941))
ERFINV_GE5 = tuple(np.float64(np.float32(c)) for c in (
    -0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
    -0.0076224613, 0.00943887047, 1.00167406, 2.83297682))


def erf_inv_f32(x):
    """XLA:CPU's float32 inverse error function of the float32 array ``x`` (a new
    array)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        xd = np.where(np.abs(x) < _TINY, x * np.float32(0), x)      # DAZ
        w = -log1p_f32(xd * -xd)
        near = w < np.float32(5)
        t = np.where(near, w - np.float32(2.5), np.sqrt(w) - np.float32(3)).astype(_F64)
        if near.all() or not near.any():      # one coefficient set: scalars
            coefs = ERFINV_LT5 if near.all() else ERFINV_GE5
        else:
            coefs = [np.where(near, a, b) for a, b in zip(ERFINV_LT5, ERFINV_GE5)]
        p = coefs[0]
        for c in coefs[1:]:
            p = (p * t + c).astype(_F32).astype(_F64)
        r = p.astype(_F32) * xd
        r = np.where(np.abs(r) < _TINY, r * np.float32(0), r)        # FTZ
        r = np.where(np.abs(x) == np.float32(1), x * np.float32(np.inf), r)
        return np.asarray(np.where(np.isnan(x), x + x, r), _F32)


# ------------------------------------------------------------------------------ cbrt

_CBRT2 = 1.2599210498948731648
_SQR_CBRT2 = 1.5874010519681994748
_CBRT_FACTOR = np.array([1.0 / _SQR_CBRT2, 1.0 / _CBRT2, 1.0, _CBRT2, _SQR_CBRT2])


def cbrt_f32(x):
    """XLA:CPU's float32 cube root (a call to glibc's ``cbrtf``) of the float32 array
    ``x``: ``|x| = m 2^e`` (frexp), a quadratic first guess ``u`` of cbrt(m) rounded to
    float, one Halley step ``u (u^3 + 2m) / (2u^3 + m)`` in double precision times
    2^((e mod 3)/3), rounded to float and scaled by 2^(e div 3) (C's truncating division).
    Under XLA's DAZ every subnormal input gives the same negative number."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        m, e = np.frexp(np.abs(x))
        # a subnormal: glibc's frexpf scales by 2^25, which DAZ makes zero: 0.5 * 2^-151
        sub = (np.abs(x) < _TINY) & (x != 0)
        m, e = np.where(sub, np.float32(0.5), m), np.where(sub, -151, e)
        m64 = m.astype(_F64)
        u = (0.492659620528969547 + (0.697570460207922770 - 0.191502161678719066 * m64)
             * m64).astype(_F32)
        t2 = u * u * u
        u64, t64 = u.astype(_F64), t2.astype(_F64)
        q = np.trunc(e / 3).astype(np.int64)            # C's e / 3 and e % 3
        r = e - 3 * q
        ym = (u64 * (t64 + 2.0 * m64) / (2.0 * t64 + m64) * _CBRT_FACTOR[2 + r]).astype(_F32)
        pos = (x > 0) & ~sub                            # (DAZ: a subnormal is not > 0)
        out = np.ldexp(np.where(pos, ym, -ym), q.astype(np.int32))
        special = (x == 0) | ~np.isfinite(x)
        return np.asarray(np.where(special, x + x, out), _F32)
