"""XLA:CPU's float32 ``atanh``, ``asinh`` and ``acosh`` in NumPy, bit for bit.

XLA expands them (CHLO decompositions) over its own ``log``/``log1p``
(``cpu_math.log``):

* ``atanh(x)``: ``(log1p(x) - log1p(-x)) * 0.5`` (NaN, 0x7FC00000, where |x| > 1).
  Fused into one loop with the rest, LLVM contracts log1p's ``x^3 r - x^2/2`` into a
  fused multiply-add, which the standalone ``log1p`` does not do
  (``log1p_f32(..., fused=True)``).
* ``asinh(x)``: ``sign(x) * (log(|x|) + ln 2)`` for ``|x| >= 2^64``, else
  ``sign(x) * log1p(|x| + x^2 / (sqrt(x^2 + 1) + 1))`` (``x^2`` has two uses, so nothing
  is contracted; log1p is the standalone form).
* ``acosh(x)``: ``log(x) + ln 2`` for ``x >= 2^127``, else
  ``log1p(sqrt(x - 1) * (sqrt(x + 1) + sqrt(x - 1)))`` (NaN below 1 from the square root).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.log import log1p_f32, log_f32

__all__ = ["acosh_f32", "asinh_f32", "atanh_f32"]

_F32 = np.dtype(np.float32)
_NAN = np.float32(np.nan)
_ONE = np.float32(1)
_LN2 = np.float32(0.693147182)
_ASINH_BIG = np.float32(2.0 ** 64)
_ACOSH_BIG = np.float32(2.0 ** 127)


def atanh_f32(x):
    """XLA:CPU's float32 ``atanh`` of the float32 array ``x`` (a new array)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        r = (log1p_f32(x, True) - log1p_f32(-x, True)) * np.float32(0.5)
        return np.asarray(np.where(np.abs(x) > np.float32(1), _NAN, r), _F32)


def asinh_f32(x):
    """XLA:CPU's float32 ``asinh`` of the float32 array ``x`` (a new array)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        x2 = x * x
        small = log1p_f32(a + x2 / (np.sqrt(x2 + _ONE) + _ONE))
        big = log_f32(a) + _LN2
        r = np.where(a >= _ASINH_BIG, big, small)
        # sign(x) * r: r >= 0, and sign keeps a zero's sign
        return np.asarray(np.where(x == 0, x, np.sign(x)) * r, _F32)


def acosh_f32(x):
    """XLA:CPU's float32 ``acosh`` of the float32 array ``x`` (a new array)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        sm = np.sqrt(x - _ONE)
        small = log1p_f32(sm * (np.sqrt(x + _ONE) + sm))
        big = log_f32(x) + _LN2
        return np.asarray(np.where(x >= _ACOSH_BIG, big, small), _F32)
