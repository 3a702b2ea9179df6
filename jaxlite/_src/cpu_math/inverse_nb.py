"""numba twin of ``cpu_math.inverse``: scalar float32 ``atanh_f32`` giving the NumPy
kernel's bits on every input."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.log_nb import log1p_fused_f32
from jaxlite._src.cpu_math.nb_common import _inline, _sel

__all__ = ["atanh_f32"]

F32 = np.float32
_NAN, _ONE, _HALF = F32(np.nan), F32(1), F32(0.5)


@_inline
def atanh_f32(x):
    """XLA:CPU's float32 ``atanh`` of one float32 (``cpu_math.inverse.atanh_f32``'s bits)."""
    r = (log1p_fused_f32(x) - log1p_fused_f32(-x)) * _HALF
    return _sel(abs(x) > _ONE, _NAN, r)
