"""numba side of ``cpu_math.libm64``: the twins call the C library's float64 functions
(``nb_common.libm64``: opaque calls, the C library's own code), with ``libm64``'s model of
the processor's DAZ/FTZ modes."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.cpu_math.libm64 import ATAN2_FAR, LN2_HI, LN2_LO, TINY64
from jaxlite._src.cpu_math.nb_common import _inline, fma64, libm64

__all__ = ["atan2_f64", "atan_f64", "cbrt_f64", "cos_f64", "erf_f64", "log_f64", "pow_f64",
           "sin_f64", "tan_f64"]

F64 = np.float64
_TINY = F64(TINY64)
_ZERO = F64(0)
_INF, _PI = F64(np.inf), F64(np.pi)
_FAR = F64(ATAN2_FAR)
_LN2_HI, _LN2_LO, _SCALE = F64(LN2_HI), F64(LN2_LO), F64(2.0 ** -8)
_C3, _C4, _C5, _C6 = F64(1 / 6), F64(1 / 24), F64(1 / 120), F64(1 / 720)
_Y_LO, _Y_HI = F64(2.0 ** -65), F64(2.0 ** 63)
_log, _sin, _cos, _tan, _atan = (libm64[n] for n in ("log", "sin", "cos", "tan", "atan"))
_erf, _cbrt, _pow, _atan2 = (libm64[n] for n in ("erf", "cbrt", "pow", "atan2"))


@_inline
def _daz(x):
    return x * _ZERO if abs(x) < _TINY else x


@_inline
def _ftz(y):
    return y * _ZERO if abs(y) < _TINY else y


@_inline
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@_inline
def _dd_mul(ah, al, bh, bl):
    p = ah * bh
    return _two_sum(p, fma64(ah, bh, -p) + (ah * bl + al * bh))


@_inline
def _pow2_1075(y):
    """``cpu_math.libm64.pow2_1075`` of one float64."""
    t = F64(1075) * y
    if not abs(t) <= F64(1200):
        return _ZERO if y > _ZERO else (_INF if y < _ZERO else y)
    t_lo = fma64(F64(1075), y, -t)
    n = np.round(t)
    uh, ul = _two_sum(n - t, -t_lo)
    vh, vl = _dd_mul(uh, ul, _LN2_HI, _LN2_LO)
    wh, wl = vh * _SCALE, vl * _SCALE
    w2h, w2l = _dd_mul(wh, wl, wh, wl)
    c = F64(0.5) + wh * (_C3 + wh * (_C4 + wh * (_C5 + wh * _C6)))
    th, tl = _dd_mul(w2h, w2l, c, _ZERO)
    eh, el = _two_sum(wh, th)
    eh, el = _two_sum(eh, el + (wl + tl))
    for _ in range(8):
        sh, sl = _dd_mul(eh, el, eh, el)
        a, b = _two_sum(F64(2) * eh, sh)
        eh, el = _two_sum(a, b + (F64(2) * el + sl))
    rh, rl = _two_sum(F64(1), eh)
    return math.ldexp(rh + (rl + el), -int(n))


@_inline
def log_f64(x):
    """``cpu_math.libm64.log_f64`` of one float64."""
    return _ftz(_log(_daz(x)))


@_inline
def sin_f64(x):
    """``cpu_math.libm64.sin_f64`` of one float64."""
    return _sin(x)


@_inline
def cos_f64(x):
    """``cpu_math.libm64.cos_f64`` of one float64."""
    return _cos(x)


@_inline
def tan_f64(x):
    """``cpu_math.libm64.tan_f64`` of one float64."""
    return _tan(x)


@_inline
def atan_f64(x):
    """``cpu_math.libm64.atan_f64`` of one float64."""
    return _atan(x)


@_inline
def erf_f64(x):
    """``cpu_math.libm64.erf_f64`` of one float64."""
    return _ftz(_erf(_daz(x)))


@_inline
def cbrt_f64(x):
    """``cpu_math.libm64.cbrt_f64`` of one float64."""
    return _ftz(_cbrt(_daz(x)))


@_inline
def pow_f64(x, y):
    """``cpu_math.libm64.pow_f64`` of one pair of float64."""
    if abs(x) < _TINY and x != _ZERO and abs(y) >= _Y_LO and abs(y) < _Y_HI:
        # (the normalising product flushed: the power of 2^-1075, glibc's sign rules)
        return _ftz(_pow(math.copysign(F64(1), x), y) * _pow2_1075(y))
    return _ftz(_pow(x, y))


@_inline
def atan2_f64(y, x):
    """``cpu_math.libm64.atan2_f64`` of one pair of float64."""
    x = _daz(x)
    if abs(y) < _TINY and y != _ZERO and x != _ZERO and abs(x) < _INF:
        if x >= _ZERO:
            return y * _ZERO
        return -_PI if x <= -_FAR else math.copysign(_PI, y)
    return _ftz(_atan2(y, x))
