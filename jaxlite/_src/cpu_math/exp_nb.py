"""numba twins of ``cpu_math.exp``: scalar float32 functions giving the NumPy kernels'
bits on every input; compile their loops with ``error_model="numpy"`` (IEEE division by
zero), branch-free so that loops over them vectorise. Their fused
multiply-adds use the hardware FMA (``_fmaf``), equal to the emulated one wherever the
result is normal; the few places where a subnormal can appear flush it explicitly, as
XLA:CPU does (FTZ/DAZ)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import exp as E
from jaxlite._src.cpu_math import hyperbolic as H
from jaxlite._src.cpu_math.nb_common import _flush, _fmaf, _inline, _sel

__all__ = ["copysign1", "exp2_f32", "exp_f32", "expm1_f32", "mul", "round_ftz", "tanh_f32"]

F32, F64 = np.float32, np.float64
_LO, _HI, _LOG2E, _LN2_HI, _LN2_LO = E._LO, E._HI, E._LOG2E, E._LN2_HI, E._LN2_LO
_P0, _P1, _P2, _P3, _P4, _P5 = E.EXP_POLY
_HALF, _ONE, _NMIN, _NMAX = F32(0.5), F32(1), F32(-127), F32(127)
_U23 = np.uint32(23)
_ZERO, _LN2 = F32(0), E._LN2
_TINY64 = F64(np.finfo(np.float32).tiny)
_SIGN, _ONE_BITS = np.uint32(0x80000000), np.uint32(0x3F800000)
_TC, _TSMALL, _TBIG = H._TANH_CLAMP, H._TANH_SMALL, H._TANH_BIG
_TP0, _TP1, _TP2, _TP3, _TP4, _TP5, _TP6 = H.TANH_P
_TQ0, _TQ1, _TQ2, _TQ3 = H.TANH_Q


@_inline
def round_ftz(v):
    """The float64 ``v`` rounded to float32, zero (of its sign) where ``|v| < FLT_MIN``
    (x86 flushes a result that is tiny before rounding)."""
    r = F32(v)
    return _sel(abs(v) < _TINY64, r * _ZERO, r)


@_inline
def mul(a, b):
    """XLA:CPU's float32 product (FTZ)."""
    return round_ftz(F64(a) * F64(b))


@_inline
def exp_parts(x):
    """``(q, n)`` of ``exp.exp_parts`` for one float32 (``n`` NaN for NaN ``x``)."""
    x = _flush(x)
    xc = _sel(x < _LO, _LO, x)
    xc = _sel(xc > _HI, _HI, xc)
    n = np.floor(_fmaf(xc, _LOG2E, _HALF))
    n = _sel(n < _NMIN, _NMIN, n)
    n = _sel(n > _NMAX, _NMAX, n)
    r = _fmaf(-n, _LN2_HI, xc)
    r = _fmaf(-n, _LN2_LO, r)
    p = _fmaf(r, _P0, _P1)
    p = _fmaf(p, r, _P2)
    p = _fmaf(p, r, _P3)
    p = _fmaf(p, r, _P4)
    p = _fmaf(p, r, _P5)
    q = _fmaf(p, mul(r, r), r) + _ONE
    return q, n


@_inline
def pow2(n):
    """float32 ``2**n`` as XLA builds it (``n = -127`` gives 0; NaN ``n`` gives 1, XLA's
    conversion of NaN to int32 being INT_MIN)."""
    ok = not np.isnan(n)
    ni = np.int32(_sel(ok, n, _ZERO))
    s = np.uint32(np.uint32(ni + 127) << _U23).view(np.float32)
    return _sel(ok, s, _ONE)


@_inline
def exp_f32(x):
    """XLA:CPU's float32 ``exp`` of one float32."""
    q, n = exp_parts(x)
    return round_ftz(F64(q) * F64(pow2(n)))


@_inline
def tanh_f32(x):
    """XLA:CPU's float32 ``tanh`` of one float32 (``hyperbolic.tanh_k``; here because
    ``expm1`` uses it, and ``hyperbolic_nb`` re-exports it)."""
    xc = _sel(x < -_TC, -_TC, x)
    xc = _sel(xc > _TC, _TC, xc)
    x2 = mul(xc, xc)
    p = _fmaf(x2, _TP0, _TP1)
    p = _fmaf(x2, p, _TP2)
    p = _fmaf(x2, p, _TP3)
    p = _fmaf(x2, p, _TP4)
    p = _fmaf(x2, p, _TP5)
    p = _fmaf(x2, p, _TP6)
    q = _fmaf(x2, _TQ0, _TQ1)
    q = _fmaf(x2, q, _TQ2)
    q = _fmaf(x2, q, _TQ3)
    y = _flush(mul(xc, p) / q)
    ax = abs(x)
    y = _sel(ax < _TSMALL, x, y)
    return _sel(ax >= _TBIG, copysign1(x), y)


@_inline
def copysign1(x):
    """float32 1 with the sign of ``x``."""
    return np.uint32((np.float32(x).view(np.uint32) & _SIGN) | _ONE_BITS).view(np.float32)


@_inline
def expm1_f32(x):
    """XLA:CPU's float32 ``expm1`` of one float32 (``exp.expm1_k``)."""
    e = exp_f32(x)
    h = mul(x, _HALF)
    small = tanh_f32(h) * (e + _ONE)
    y = _flush(_sel(abs(x) > _HALF, e - _ONE, small))
    return _sel(h == _ZERO, x, y)


@_inline
def exp2_f32(x):
    """XLA:CPU's float32 ``exp2`` of one float32: ``exp(x * ln 2)``."""
    return exp_f32(mul(x, _LN2))
