"""numba side of ``cpu_math.xla64``: the twin ``exp_f64`` (one element, the same bits;
hardware fused multiply-adds where ``xla64.FUSED``)."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.cpu_math import xla64 as _X
from jaxlite._src.cpu_math.libm64_nb import log_f64
from jaxlite._src.cpu_math.nb_common import _inline, fma64
from jaxlite._src.cpu_math.xla64 import EXP64, FUSED

__all__ = ["cosh_f64", "exp2_f64", "exp_f64", "expm1_f64", "log1p_f64", "log1p_fused_f64",
           "logistic_f64", "sinh_f64", "tanh_f64"]

F64 = np.float64
(_HI, _LO, _LOG2E, _P0, _P1, _P2, _Q0, _Q1, _Q2, _Q3, _C1, _C2) = (
    F64(v) for v in EXP64.values())
_INF = F64(np.inf)
_U52 = np.uint64(52)
(_N0, _N1, _N2, _N3, _N4, _N5, _N6, _N7, _N8, _N9) = (F64(v) for v in _X.TANH_NUM)
(_D0, _D1, _D2, _D3, _D4, _D5, _D6, _D7, _D8, _D9) = (F64(v) for v in _X.TANH_DEN)
_CLAMP, _ONE, _TINY = F64(_X.TANH_CLAMP), F64(_X.TANH_ONE), F64(_X.TINY64)
_LN2 = F64(_X.LN2)
(_A0, _A1, _A2, _A3, _A4, _A5, _A6) = (F64(v) for v in _X.L1P_NUM)
(_B0, _B1, _B2, _B3, _B4, _B5, _B6) = (F64(v) for v in _X.L1P_DEN)
_L1P_SMALL = F64(_X.L1P_SMALL)


@_inline
def _mad(a, b, c):
    if FUSED:
        return fma64(a, b, c)
    return a * b + c


@_inline
def _pow2(k):
    """``2^k`` of an integer ``k`` in ``[-1022, 1023]``, built from its bits."""
    return np.uint64(np.uint64(k + 1023) << _U52).view(F64)


@_inline
def exp_f64(x):
    """XLA:CPU's float64 ``exp`` of one float64 (``cpu_math.xla64.exp_f64``'s bits).
    Branch-free but for selects (LLVM vectorises the loop): ``ldexp(e, n)`` as ``e 2^h
    2^(n-h)`` with ``h = n // 2`` (the first product exact and normal, the second rounded
    once: ``ldexp``'s bits), a NaN operand computed as 0 and returned itself."""
    xc = min(max(x, _LO), _HI)
    xc = xc if abs(x) <= _INF else F64(0)
    n = np.floor(_mad(xc, _LOG2E, F64(0.5)))
    g = _mad(-n, _C1, xc)
    g = _mad(-n, _C2, g)
    g2 = g * g
    p = _mad(_mad(_P0, g2, _P1), g2, _P2) * g
    q = _mad(_mad(_mad(_Q0, g2, _Q1), g2, _Q2), g2, _Q3)
    e = _mad(p / (q - p), F64(2), F64(1))
    ni = np.int64(n)
    h = ni >> np.int64(1)
    out = e * _pow2(h) * _pow2(ni - h)
    out = F64(0) if x < _LO else out
    out = _INF if x > _HI else out
    return out if abs(x) <= _INF else x


@_inline
def tanh_f64(x):
    """XLA:CPU's float64 ``tanh`` of one float64 (``cpu_math.xla64.tanh_f64``'s bits)."""
    if abs(x) < _TINY:
        x = x * F64(0)
    if not abs(x) <= _INF:      # (NaN)
        return x
    if abs(x) >= _ONE:
        return math.copysign(F64(1), x)
    xc = min(max(x, -_CLAMP), _CLAMP)
    x2 = xc * xc
    p = _mad(x2, _mad(x2, _mad(x2, _mad(x2, _mad(x2, _mad(x2, _mad(x2, _mad(
        x2, _mad(x2, _N0, _N1), _N2), _N3), _N4), _N5), _N6), _N7), _N8), _N9)
    q = _mad(x2, _mad(x2, _mad(x2, _mad(x2, _mad(x2, _mad(x2, _mad(x2, _mad(
        x2, _mad(x2, _D0, _D1), _D2), _D3), _D4), _D5), _D6), _D7), _D8), _D9)
    return (xc * p) / q


@_inline
def expm1_f64(x):
    """``cpu_math.xla64.expm1_f64`` of one float64."""
    e = exp_f64(x)
    h = x * F64(0.5)
    if abs(h) < _TINY:
        return x
    if abs(x) > F64(0.5):
        return e - F64(1)
    return tanh_f64(h) * (e + F64(1))


@_inline
def cosh_f64(x):
    """``cpu_math.xla64.cosh_f64`` of one float64."""
    return exp_f64(x - _LN2) + exp_f64(-_LN2 - x)


@_inline
def sinh_f64(x):
    """``cpu_math.xla64.sinh_f64`` of one float64."""
    if abs(x) < F64(1):
        e = expm1_f64(x)
        y = (e + e / (e + F64(1))) * F64(0.5)
        return y * F64(0) if abs(y) < _TINY else y
    return exp_f64(x - _LN2) - exp_f64(-_LN2 - x)


@_inline
def logistic_f64(x):
    """``cpu_math.xla64.logistic_f64`` of one float64."""
    y = F64(1) / (F64(1) + exp_f64(-x))
    if abs(y) < _TINY:
        return y * F64(0)
    return y


@_inline
def _log1p(x, fused):
    if abs(x) < _TINY:
        x = x * F64(0)
    if not abs(x) < _L1P_SMALL:      # (NaN too)
        return log_f64(x + F64(1))
    num = _mad(_mad(_mad(_mad(_mad(_mad(_A0, x, _A1), x, _A2), x, _A3), x, _A4), x, _A5),
               x, _A6)
    den = _mad(_mad(_mad(_mad(_mad(_mad(_B0, x, _B1), x, _B2), x, _B3), x, _B4), x, _B5),
               x, _B6)
    x2 = x * x
    if fused:
        return x + _mad(x * x2, num / den, F64(-0.5) * x2)
    return x + (F64(-0.5) * x2 + (x * x2) * (num / den))


@_inline
def log1p_f64(x):
    """``cpu_math.xla64.log1p_f64`` of one float64."""
    return _log1p(x, False)


@_inline
def log1p_fused_f64(x):
    """``cpu_math.xla64.log1p_f64(x, fused=True)`` of one float64."""
    return _log1p(x, True)


@_inline
def exp2_f64(x):
    """``cpu_math.xla64.exp2_f64`` of one float64."""
    return exp_f64(x * _LN2)
