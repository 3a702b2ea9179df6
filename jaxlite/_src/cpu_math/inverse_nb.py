"""numba twins of ``cpu_math.inverse``: scalar float32 ``atanh_f32``, ``asinh_f32`` and
``acosh_f32`` giving the NumPy kernels' bits on every input."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import inverse as I
from jaxlite._src.cpu_math.log_nb import log1p_f32, log1p_fused_f32, log_f32
from jaxlite._src.cpu_math.nb_common import _inline, _sel

__all__ = ["acosh_f32", "asinh_f32", "atanh_f32"]

F32 = np.float32
_NAN, _ONE, _HALF, _ZERO = F32(np.nan), F32(1), F32(0.5), F32(0)
_LN2, _ASINH_BIG, _ACOSH_BIG = I._LN2, I._ASINH_BIG, I._ACOSH_BIG


@_inline
def atanh_f32(x):
    """XLA:CPU's float32 ``atanh`` of one float32 (``cpu_math.inverse.atanh_f32``'s bits)."""
    r = (log1p_fused_f32(x) - log1p_fused_f32(-x)) * _HALF
    return _sel(abs(x) > _ONE, _NAN, r)


@_inline
def asinh_f32(x):
    """XLA:CPU's float32 ``asinh`` of one float32 (``cpu_math.inverse.asinh_f32``'s bits)."""
    a = abs(x)
    x2 = x * x
    small = log1p_f32(a + x2 / (np.sqrt(x2 + _ONE) + _ONE))
    big = log_f32(a) + _LN2
    r = _sel(a >= _ASINH_BIG, big, small)
    s = _sel(x > _ZERO, _ONE, _sel(x < _ZERO, -_ONE, x))
    return s * r


@_inline
def acosh_f32(x):
    """XLA:CPU's float32 ``acosh`` of one float32 (``cpu_math.inverse.acosh_f32``'s bits)."""
    sm = np.sqrt(x - _ONE)
    small = log1p_f32(sm * (np.sqrt(x + _ONE) + sm))
    big = log_f32(x) + _LN2
    return _sel(x >= _ACOSH_BIG, big, small)
