"""numba twins of ``cpu_math.gamma``: scalar float32 ``lanczos_f32``, ``lgamma_f32`` and
``digamma_f32``
giving the NumPy kernels' bits on every input."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import gamma as G
from jaxlite._src.cpu_math.log_nb import log1p_f32, log_f32
from jaxlite._src.cpu_math.nb_common import _fma, _inline, _sel
from jaxlite._src.cpu_math.trig_nb import cos_f32, sin_f32

__all__ = ["digamma_f32", "lanczos_f32", "lgamma_f32"]

F32, F64 = np.float32, np.float64
_C0 = G.LANCZOS_C0
_C1, _C2, _C3, _C4, _C5, _C6, _C7, _C8 = G.LANCZOS
_GPH, _INV_GPH, _LOG_GPH, _LOG_SQRT_2PI = G.GPH, G.INV_GPH, G.LOG_GPH, G.LOG_SQRT_2PI
_LOG_PI, _PI, _TINY, _G = G.LOG_PI, G.PI, G.TINY, G.G_F32
_NAN = F32(np.nan)
_ZERO, _HALF, _ONE, _INF = F32(0), F32(0.5), F32(1), F32(np.inf)


@_inline
def lanczos_f32(z):
    """``log Gamma(z + 1)`` of one float32 (``cpu_math.gamma.lanczos_f32``'s bits)."""
    s = _C0
    s = s + _C1 / (z + F32(1))
    s = s + _C2 / (z + F32(2))
    s = s + _C3 / (z + F32(3))
    s = s + _C4 / (z + F32(4))
    s = s + _C5 / (z + F32(5))
    s = s + _C6 / (z + F32(6))
    s = s + _C7 / (z + F32(7))
    s = s + _C8 / (z + F32(8))
    t = z + _GPH
    log_t = _LOG_GPH + log1p_f32(z * _INV_GPH)
    lead = (z + _HALF) - t / log_t
    return _fma(F64(lead) * F64(log_t), _LOG_SQRT_2PI) + log_f32(s)


@_inline
def lgamma_f32(x):
    """XLA:CPU's float32 ``lgamma`` of one float32 (``cpu_math.gamma.lgamma_f32``'s
    bits)."""
    x = _sel(abs(x) < _TINY, x * _ZERO, x)
    ax = abs(x)
    f = ax - np.floor(ax)
    f = _sel(_HALF < f, _ONE - f, f)
    ls = log_f32(sin_f32(f * _PI))
    small = x < _HALF
    core = lanczos_f32(_sel(small, -x, x + F32(-1)))
    refl = _sel(abs(ls) < _INF, (_LOG_PI - ls) - core, -ls)
    r = _sel(small, refl, core)
    return _sel(ax == _INF, _INF, r)


@_inline
def _dg_term(num, den, z, i, c):
    zi = z + F32(i)
    return num - c / (zi * zi), den + c / zi


@_inline
def digamma_f32(x):
    """XLA:CPU's float32 ``digamma`` of one float32 (``cpu_math.gamma.digamma_f32``'s
    bits)."""
    x = _sel(abs(x) < _TINY, x * _ZERO, x)
    small = x < _HALF
    z = _sel(small, -x, x + F32(-1))
    num, den = _dg_term(_ZERO, _ONE, z, 1, _C1)
    num, den = _dg_term(num, den, z, 2, _C2)
    num, den = _dg_term(num, den, z, 3, _C3)
    num, den = _dg_term(num, den, z, 4, _C4)
    num, den = _dg_term(num, den, z, 5, _C5)
    num, den = _dg_term(num, den, z, 6, _C6)
    num, den = _dg_term(num, den, z, 7, _C7)
    num, den = _dg_term(num, den, z, 8, _C8)
    log_t = log1p_f32(z * _INV_GPH) + _LOG_GPH
    y = (log_t + num / den) - _G / (z + _GPH)
    a = (x + abs(np.floor(x + _HALF))) * _PI
    r = _sel(small, y - (cos_f32(a) * _PI) / sin_f32(a), y)
    return _sel((x <= _ZERO) & (x == np.floor(x)), _NAN, r)
