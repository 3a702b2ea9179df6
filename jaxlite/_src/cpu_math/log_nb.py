"""numba twins of ``cpu_math.log``: scalar float32 ``log_f32`` and ``log1p_f32`` giving
the NumPy kernels' bits on every input, branch-free (``_sel``) so loops vectorise. The
fused multiply-adds are float64 sums of exact products rounded to float32, as there."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import log as L
from jaxlite._src.cpu_math.nb_common import _fma, _fma1, _inline, _sel

__all__ = ["log1p_f32", "log1p_fused_f32", "log_f32"]

F32, F64 = np.float32, np.float64
_ZERO, _ONE, _HALF = F32(0), F32(1), F32(0.5)
_INF, _NINF = F32(np.inf), F32(-np.inf)
_ALL_NAN = L._ALL_NAN
_TINY = L._TINY
_P0, _P1, _P2, _P3, _P4, _P5, _P6, _P7, _P8 = L._LOG_P
_N0, _N1, _N2, _N3, _N4, _N5, _N6 = L._L1P_NUM
_D0, _D1, _D2, _D3, _D4, _D5, _D6 = L._L1P_DEN
_LN2_LO, _LN2_HI, _SQRTHF, _L1P_SMALL = L._LN2_LO, L._LN2_HI, L._SQRTHF, L._L1P_SMALL
_KEEP, _HALF_EXP, _U23 = L._KEEP_SIGN_MANT, L._HALF_EXP, np.uint32(23)
_E_BIAS = F32(126)


@_inline
def _log_normal(x):
    """``log._log_normal`` of one float32 (x clamped to >= FLT_MIN)."""
    b = np.float32(_sel(x >= _TINY, x, _TINY)).view(np.uint32)
    m = np.uint32((b & _KEEP) | _HALF_EXP).view(np.float32)
    low = m < _SQRTHF
    e = F32(b >> _U23) - (_E_BIAS + _sel(low, _ONE, _ZERO))
    t = (m - _ONE) + _sel(low, m, _ZERO)
    t64 = F64(t)
    t2 = t * t
    t3 = F64(t2 * t)
    y = _fma1(F64(_fma1(t64 * _P0, _P1)) * t64, _P2)
    y1 = _fma1(F64(_fma1(t64 * _P3, _P4)) * t64, _P5)
    y2 = _fma1(F64(_fma1(t64 * _P6, _P7)) * t64, _P8)
    y = _fma1(F64(y) * t3, F64(y1))
    y = _fma1(F64(y) * t3, F64(y2))
    y = _fma1(F64(y) * t3, F64(e * _LN2_LO))
    return ((t - t2 * _HALF) + y) + e * _LN2_HI


@_inline
def log_f32(x):
    """XLA:CPU's float32 ``log`` of one float32 (``cpu_math.log.log_f32``'s bits)."""
    r = _log_normal(x)
    zero = (x >= _ZERO) | (x > -_TINY)          # zeros and subnormals of either sign
    edge = _sel(x == _INF, _INF, _sel(zero, _NINF, _ALL_NAN))
    return _sel((x >= _TINY) & (x != _INF), r, edge)


@_inline
def log1p_f32(x):
    """XLA:CPU's float32 ``log1p`` of one float32 (``cpu_math.log.log1p_f32``'s bits)."""
    return _log1p(x, False)


@_inline
def log1p_fused_f32(x):
    """``cpu_math.log.log1p_f32(x, fused=True)`` of one float32 (log1p inside a fusion)."""
    return _log1p(x, True)


@_inline
def _log1p(x, fused):
    x = _sel(abs(x) < _TINY, x * _ZERO, x)
    x64 = F64(x)
    num = _fma1(x64 * _N0, _N1)
    num = _fma1(F64(num) * x64, _N2)
    num = _fma1(F64(num) * x64, _N3)
    num = _fma1(F64(num) * x64, _N4)
    num = _fma1(F64(num) * x64, _N5)
    num = _fma1(F64(num) * x64, _N6)
    den = _fma1(x64 * _D0, _D1)
    den = _fma1(F64(den) * x64, _D2)
    den = _fma1(F64(den) * x64, _D3)
    den = _fma1(F64(den) * x64, _D4)
    den = _fma1(F64(den) * x64, _D5)
    den = _fma1(F64(den) * x64, _D6)
    x2 = x * x
    if fused:
        small = x + _fma(F64(x * x2) * F64(num / den), F64(x2 * F32(-0.5)))
    else:
        small = x + (x2 * F32(-0.5) + (x * x2) * (num / den))
    big = _log_normal(_ONE + x)
    r = _sel(abs(x) >= _L1P_SMALL, big, small)
    edge = _sel(x == _INF, _INF, _sel(x == -_ONE, _NINF, _ALL_NAN))
    return _sel((x > -_ONE) & (x != _INF), r, edge)
