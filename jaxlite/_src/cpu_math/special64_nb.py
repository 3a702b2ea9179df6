"""numba side of ``cpu_math.special64``: the twins (one float64 each, the same bits)."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.cpu_math import special64 as _S
from jaxlite._src.cpu_math.libm64_nb import _daz, _ftz, atan2_f64, cos_f64, log_f64, sin_f64
from jaxlite._src.cpu_math.nb_common import _inline
from jaxlite._src.cpu_math.xla64_nb import _mad, exp_f64, log1p_f64, log1p_fused_f64

__all__ = ["acos_f64", "acosh_f64", "asin_f64", "asinh_f64", "atanh_f64", "digamma_f64",
           "erf_inv_f64", "erfc_f64", "lgamma_f64"]

F64 = np.float64
_ZERO, _ONE, _HALF = F64(0), F64(1), F64(0.5)
_INF, _NAN, _PI = F64(np.inf), F64(np.nan), F64(np.pi)
_LN2 = F64(_S.LN2)
_ASINH_BIG, _ACOSH_BIG = F64(_S.ASINH_BIG), F64(_S.ACOSH_BIG)
_EP, _EQ, _ER, _ES, _ET, _EU = (np.array(c, np.float64) for c in (
    _S.ERFC_P, _S.ERFC_Q, _S.ERFC_R, _S.ERFC_S, _S.ERFC_T, _S.ERFC_U))
_MAXLOG = F64(_S.ERFC_MAXLOG)
_W625, _W16, _WBIG = (np.array(c, np.float64) for c in (
    _S.ERFINV_625, _S.ERFINV_16, _S.ERFINV_BIG))
_LC = np.array(_S.LANCZOS, np.float64)
_C0, _G = F64(_S.LANCZOS_C0), F64(_S.LANCZOS_G)
_GPH, _INV_GPH, _LOG_GPH = F64(_S.GPH), F64(_S.INV_GPH), F64(_S.LOG_GPH)
_LOG_SQRT_2PI, _LOG_PI = F64(_S.LOG_SQRT_2PI), F64(_S.LOG_PI)


@_inline
def _poly(z, coef):
    p = coef[0]
    for i in range(1, coef.size):
        p = _mad(p, z, coef[i])
    return p


@_inline
def asin_f64(x):
    """``cpu_math.special64.asin_f64`` of one float64."""
    xf = _daz(x)
    a = atan2_f64(x, _ONE + math.sqrt((_ONE - xf) * (xf + _ONE)))
    return _ftz(a + a)


@_inline
def acos_f64(x):
    """``cpu_math.special64.acos_f64`` of one float64."""
    xf = _daz(x)
    return atan2_f64(math.sqrt((_ONE - xf) * (xf + _ONE)), x)


@_inline
def asinh_f64(x):
    """``cpu_math.special64.asinh_f64`` of one float64."""
    x = _daz(x)
    a = abs(x)
    x2 = x * x
    if a >= _ASINH_BIG:
        r = log_f64(a) + _LN2
    else:
        r = log1p_f64(a + x2 / (math.sqrt(x2 + _ONE) + _ONE))
    if x > _ZERO:
        return r
    if x < _ZERO:
        return -_ONE * r
    return x * r         # (a zero keeps its sign; NaN)


@_inline
def acosh_f64(x):
    """``cpu_math.special64.acosh_f64`` of one float64."""
    x = _daz(x)
    if x >= _ACOSH_BIG:
        return log_f64(x) + _LN2
    sm = math.sqrt(x - _ONE)
    return log1p_f64(sm * (math.sqrt(x + _ONE) + sm))


@_inline
def atanh_f64(x):
    """``cpu_math.special64.atanh_f64`` of one float64."""
    x = _daz(x)
    if abs(x) > _ONE:
        return _NAN
    return (log1p_fused_f64(x) - log1p_fused_f64(-x)) * _HALF


@_inline
def erfc_f64(x):
    """``cpu_math.special64.erfc_f64`` of one float64."""
    x = _daz(x)
    x2 = x * x
    ax = abs(x)
    if ax < _ONE:
        return _ftz(_ONE - (x * _poly(x2, _ET)) / _poly(x2, _EU))
    z = -x2
    if z < -_MAXLOG:
        t = _ZERO
    elif ax < F64(8):
        t = (exp_f64(z) * _poly(ax, _EP)) / _poly(ax, _EQ)
    else:
        t = (exp_f64(z) * _poly(ax, _ER)) / _poly(ax, _ES)
    return _ftz(F64(2) - t if x < _ZERO else t)


@_inline
def erf_inv_f64(x):
    """``cpu_math.special64.erf_inv_f64`` of one float64."""
    x = _daz(x)
    if abs(x) == _ONE:
        return x * _INF
    w = -log1p_f64(x * -x)
    if w < F64(6.25):
        p = _poly(w - F64(3.125), _W625)
    elif w < F64(16):
        p = _poly(math.sqrt(w) - F64(3.25), _W16)
    else:
        p = _poly(math.sqrt(w) - F64(5), _WBIG)
    return _ftz(p * x)


@_inline
def _lanczos(z):
    series = _C0
    for i in range(_LC.size):
        series = series + _LC[i] / (z + F64(i + 1))
    t = z + _GPH
    log_t = _LOG_GPH + log1p_f64(z * _INV_GPH)
    lead = (z + _HALF) - t / log_t
    return _mad(lead, log_t, _LOG_SQRT_2PI) + log_f64(series)


@_inline
def lgamma_f64(x):
    """``cpu_math.special64.lgamma_f64`` of one float64."""
    x = _daz(x)
    ax = abs(x)
    if ax == _INF:
        return _INF
    if x < _HALF:
        f = ax - np.floor(ax)
        if _HALF < f:
            f = _ONE - f
        ls = log_f64(sin_f64(f * _PI))
        if ls - ls != _ZERO:          # (not finite)
            return -ls
        return (_LOG_PI - ls) - _lanczos(-x)
    return _lanczos(x - _ONE)


@_inline
def digamma_f64(x):
    """``cpu_math.special64.digamma_f64`` of one float64."""
    x = _daz(x)
    if x <= _ZERO and x == np.floor(x):
        return _NAN
    small = x < _HALF
    z = -x if small else x - _ONE
    num = _ZERO
    den = _C0
    for i in range(_LC.size):
        zi = z + F64(i + 1)
        num = num - _LC[i] / (zi * zi)
        den = den + _LC[i] / zi
    log_t = log1p_f64(z * _INV_GPH) + _LOG_GPH
    y = (log_t + num / den) - _G / (z + _GPH)
    if small:
        a = (x + abs(np.floor(x + _HALF))) * _PI
        return y - (cos_f64(a) * _PI) / sin_f64(a)
    return y
