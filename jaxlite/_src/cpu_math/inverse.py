"""XLA:CPU's float32 ``atanh`` in NumPy, bit for bit.

XLA expands ``atanh(x)`` into ``(log1p(x) - log1p(-x)) * 0.5`` (NaN, 0x7FC00000, where
|x| > 1) over its own ``log1p`` (``cpu_math.log``). Fused into one loop with the rest,
LLVM contracts log1p's ``x^3 r - x^2/2`` into a fused multiply-add, which the standalone
``log1p`` does not do (``log1p_f32(..., fused=True)``).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.log import log1p_f32

__all__ = ["atanh_f32"]

_F32 = np.dtype(np.float32)
_NAN = np.float32(np.nan)


def atanh_f32(x):
    """XLA:CPU's float32 ``atanh`` of the float32 array ``x`` (a new array)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        r = (log1p_f32(x, True) - log1p_f32(-x, True)) * np.float32(0.5)
        return np.asarray(np.where(np.abs(x) > np.float32(1), _NAN, r), _F32)
