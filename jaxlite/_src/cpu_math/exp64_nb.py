"""numba side of ``cpu_math.exp64``: the twin ``exp_f64`` (one element, the same bits;
hardware fused multiply-adds where ``exp64.FUSED``)."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.cpu_math.exp64 import EXP64, FUSED
from jaxlite._src.cpu_math.nb_common import _inline, fma64

__all__ = ["exp_f64"]

F64 = np.float64
(_HI, _LO, _LOG2E, _P0, _P1, _P2, _Q0, _Q1, _Q2, _Q3, _C1, _C2) = (
    F64(v) for v in EXP64.values())
_INF = F64(np.inf)


@_inline
def _mad(a, b, c):
    if FUSED:
        return fma64(a, b, c)
    return a * b + c


@_inline
def exp_f64(x):
    """XLA:CPU's float64 ``exp`` of one float64 (``cpu_math.exp64.exp_f64``'s bits)."""
    if x != x:
        return x
    xc = min(max(x, _LO), _HI)
    n = np.floor(_mad(xc, _LOG2E, F64(0.5)))
    g = _mad(-n, _C1, xc)
    g = _mad(-n, _C2, g)
    g2 = g * g
    p = _mad(_mad(_P0, g2, _P1), g2, _P2) * g
    q = _mad(_mad(_mad(_Q0, g2, _Q1), g2, _Q2), g2, _Q3)
    e = _mad(p / (q - p), F64(2), F64(1))
    out = math.ldexp(e, int(n))
    if x < _LO:
        return F64(0)
    if x > _HI:
        return _INF
    return out
