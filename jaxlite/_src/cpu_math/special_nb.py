"""numba twin of ``cpu_math.special``: scalar float32 ``erf_inv_f32`` giving the NumPy
kernel's bits on every input, branch-free."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import special as S
from jaxlite._src.cpu_math.log_nb import log1p_f32
from jaxlite._src.cpu_math.nb_common import _fma1, _inline, _sel, _sel64

__all__ = ["erf_inv_f32"]

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
