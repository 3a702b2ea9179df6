"""numba side of ``cpu_math.power``: the twin ``pow_f32`` (one element; it calls the C
library's ``powf`` as XLA's code does, so it is exact where the NumPy kernel's float64
power misses one of ``powf``'s rare wrongly rounded results)."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.cpu_math.nb_common import TINY as _TINY
from jaxlite._src.cpu_math.nb_common import _flush, _inline, libm_powf
from jaxlite._src.cpu_math.power import SUBNORMAL_BASE

__all__ = ["pow_f32"]

F32, F64 = np.float32, np.float64
_SUB_BASE = F64(SUBNORMAL_BASE)


@_inline
def pow_f32(x, y):
    """XLA:CPU's float32 ``x ** y`` of one pair: the C library's ``powf`` itself (a
    subnormal base as ``cpu_math.power.pow_f32`` models ``powf``'s DAZ path), its result
    flushed where x86 flushes it (tiny before rounding)."""
    if abs(x) < _TINY and x != 0:
        v = math.pow(math.copysign(_SUB_BASE, F64(x)), F64(y))
        out = F32(v)
    else:
        out = libm_powf(x, y)
        v = math.pow(F64(x), F64(y)) if abs(out) <= _TINY else F64(out)
    if abs(v) < F64(_TINY):
        out = out * F32(0)
    return _flush(out)
