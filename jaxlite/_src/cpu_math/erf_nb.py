"""numba twins of ``cpu_math.erf`` (scalar float32 functions, the NumPy kernels' bits on
every input; compile their loops with ``error_model="numpy"`` (IEEE division by
zero))."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import erf as R
from jaxlite._src.cpu_math.exp_nb import copysign1, exp_parts, mul, pow2, round_ftz
from jaxlite._src.cpu_math.nb_common import _flush, _fmaf, _inline, _sel

__all__ = ["erf_f32", "erfc_f32"]

F32, F64 = np.float32, np.float64
_ONE, _TWO, _ZERO = F32(1), F32(2), F32(0)
_BIG, _UNDER = R._ERF_BIG, R._ERFC_UNDER
_P0, _P1, _P2, _P3, _P4 = R.ERF_P
_Q0, _Q1, _Q2, _Q3, _Q4, _Q5, _Q6 = R.ERF_Q
_A0, _A1, _A2, _A3, _A4, _A5, _A6, _A7, _A8 = R.ERFC_R1
_B0, _B1, _B2, _B3, _B4, _B5, _B6, _B7 = R.ERFC_R2
_C0, _C1, _C2, _C3, _C4, _C5, _C6 = R.ERFC_C


@_inline
def erf_f32(x):
    """XLA:CPU's float32 ``erf`` of one float32."""
    x = _flush(x)
    x2 = mul(x, x)
    p = _fmaf(x2, _P0, _P1)
    p = _fmaf(x2, p, _P2)
    p = _fmaf(x2, p, _P3)
    p = _fmaf(x2, p, _P4)
    q = _fmaf(x2, _Q0, _Q1)
    q = _fmaf(x2, q, _Q2)
    q = _fmaf(x2, q, _Q3)
    q = _fmaf(x2, q, _Q4)
    q = _fmaf(x2, q, _Q5)
    q = _fmaf(x2, q, _Q6)
    y = _flush(mul(x, p) / q)
    return _sel(abs(x) >= _BIG, copysign1(x), y)


@_inline
def erfc_f32(x):
    """XLA:CPU's float32 ``erfc`` of one float32."""
    ax = abs(x)
    z = mul(x, x)
    iz = _flush(_ONE / z)
    a = _fmaf(iz, _A0, _A1)
    a = _fmaf(iz, a, _A2)
    a = _fmaf(iz, a, _A3)
    a = _fmaf(iz, a, _A4)
    a = _fmaf(iz, a, _A5)
    a = _fmaf(iz, a, _A6)
    a = _fmaf(iz, a, _A7)
    a = _fmaf(iz, a, _A8)
    b = _fmaf(iz, _B0, _B1)
    b = _fmaf(iz, b, _B2)
    b = _fmaf(iz, b, _B3)
    b = _fmaf(iz, b, _B4)
    b = _fmaf(iz, b, _B5)
    b = _fmaf(iz, b, _B6)
    b = _fmaf(iz, b, _B7)
    r = _sel(ax < _TWO, a, b)
    q, n = exp_parts(-z)
    e = round_ftz(F64(q) * F64(pow2(n)))
    t = mul(mul(e, _flush(_ONE / ax)), r)
    t = _sel(z > _UNDER, _ZERO, t)
    big = _sel(x < _ZERO, _TWO - t, t)
    c = _fmaf(z, _C0, _C1)
    c = _fmaf(z, c, _C2)
    c = _fmaf(z, c, _C3)
    c = _fmaf(z, c, _C4)
    c = _fmaf(z, c, _C5)
    c = _fmaf(z, c, _C6)
    small = _fmaf(-x, c, _ONE)
    return _sel(ax < _ONE, small, big)
