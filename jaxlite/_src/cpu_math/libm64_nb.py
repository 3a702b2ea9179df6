"""numba side of ``cpu_math.libm64``: the twins call the C library's float64 functions
(``nb_common.libm64``: opaque calls, the C library's own code), with ``libm64``'s model of
the processor's DAZ/FTZ modes."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.cpu_math.libm64 import ATAN2_FAR, TINY64
from jaxlite._src.cpu_math.nb_common import _inline, libm64

__all__ = ["atan2_f64", "atan_f64", "cbrt_f64", "cos_f64", "erf_f64", "log_f64", "pow_f64",
           "sin_f64", "tan_f64"]

F64 = np.float64
_TINY = F64(TINY64)
_ZERO = F64(0)
_INF, _PI = F64(np.inf), F64(np.pi)
_FAR = F64(ATAN2_FAR)
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
        return _ftz(_pow(math.copysign(F64(1), x), y) * _pow(F64(0.5), F64(1075) * y))
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
