"""numba twins of ``cpu_math.special``: scalar float32 ``erf_inv_f32`` and ``cbrt_f32``
giving the NumPy kernels' bits on every input, branch-free."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import special as S
from jaxlite._src.cpu_math.log_nb import log1p_f32
from jaxlite._src.cpu_math.nb_common import _fma1, _inline, _sel, _sel64

__all__ = ["cbrt_f32", "erf_inv_f32"]

F32, F64 = np.float32, np.float64
_ZERO, _ONE, _INF = F32(0), F32(1), F32(np.inf)
_TINY = S._TINY
_A0, _A1, _A2, _A3, _A4, _A5, _A6, _A7, _A8 = S.ERFINV_LT5
_B0, _B1, _B2, _B3, _B4, _B5, _B6, _B7, _B8 = S.ERFINV_GE5


@_inline
def erf_inv_f32(x):
    """XLA:CPU's float32 ``erf_inv`` of one float32 (``cpu_math.special``'s bits)."""
    xd = _sel(abs(x) < _TINY, x * _ZERO, x)
    w = -log1p_f32(xd * -xd)
    near = w < F32(5)
    t = F64(_sel(near, w - F32(2.5), np.sqrt(w) - F32(3)))
    p = _fma1(_sel64(near, _A0, _B0) * t, _sel64(near, _A1, _B1))
    p = _fma1(F64(p) * t, _sel64(near, _A2, _B2))
    p = _fma1(F64(p) * t, _sel64(near, _A3, _B3))
    p = _fma1(F64(p) * t, _sel64(near, _A4, _B4))
    p = _fma1(F64(p) * t, _sel64(near, _A5, _B5))
    p = _fma1(F64(p) * t, _sel64(near, _A6, _B6))
    p = _fma1(F64(p) * t, _sel64(near, _A7, _B7))
    p = _fma1(F64(p) * t, _sel64(near, _A8, _B8))
    r = p * xd
    r = _sel(abs(r) < _TINY, r * _ZERO, r)
    r = _sel(abs(x) == _ONE, x * _INF, r)
    return _sel(np.isnan(x), x + x, r)


_F0, _F1, _F2, _F3, _F4 = (F64(v) for v in S._CBRT_FACTOR)
_C0, _C1, _C2 = 0.492659620528969547, 0.697570460207922770, 0.191502161678719066
_ABS32, _KEEP, _HALF_EXP = np.uint32(0x7FFFFFFF), np.uint32(0x807FFFFF), np.uint32(0x3F000000)


@_inline
def cbrt_f32(x):
    """XLA:CPU's float32 ``cbrt`` of one float32 (``cpu_math.special.cbrt_f32``'s bits)."""
    ix = np.float32(x).view(np.uint32) & _ABS32
    sub = (ix < np.uint32(0x00800000)) & (ix != np.uint32(0))
    m = _sel(sub, F32(0.5), np.uint32((ix & _KEEP) | _HALF_EXP).view(np.float32))
    e = np.int64(-151) * np.int64(sub) \
        + (np.int64(ix >> np.uint32(23)) - np.int64(126)) * np.int64(not sub)
    m64 = F64(m)
    u = F32(_C0 + (_C1 - _C2 * m64) * m64)
    t2 = u * u * u
    u64, t64 = F64(u), F64(t2)
    q = e // 3
    q = q + np.int64((e < 0) & (q * 3 != e))      # C's truncating division
    r = e - 3 * q
    f = _sel64(r == -2, _F0, _sel64(r == -1, _F1, _sel64(r == 0, _F2,
                                                           _sel64(r == 1, _F3, _F4))))
    ym = F32(u64 * (t64 + 2.0 * m64) / (2.0 * t64 + m64) * f)
    pos = (x > _ZERO) & ~sub
    scale = np.uint32(np.uint32(q + 127) << np.uint32(23)).view(np.float32)
    out = _sel(pos, ym, -ym) * scale
    special = (x == _ZERO) | (ix >= np.uint32(0x7F800000))
    return _sel(special, x + x, out)
