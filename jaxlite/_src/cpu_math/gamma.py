"""XLA:CPU's float32 ``lgamma`` and ``digamma`` in NumPy, bit for bit.

XLA expands ``lgamma`` (CHLO) into one fused loop over its own ``log``/``log1p``
(``cpu_math.log``) and the C library's ``sinf`` (``cpu_math.trig``), with subnormal
inputs read as zeros:

* ``z = -x`` for ``x < 1/2``, else ``x - 1``; Lanczos (g = 7, 9 terms):
  ``series = c0 + sum c_i / (z + i)``, ``t = z + 7.5``,
  ``log_t = log(7.5) + log1p(z / 7.5)``, and
  ``log Gamma(z + 1) = fma(z + 1/2 - t / log_t, log_t, log(sqrt(2 pi))) + log(series)``
  (the multiply contracted with the addition).
* ``x < 1/2``, the reflection: ``f = |x| - floor(|x|)``, ``f = 1 - f`` above 1/2,
  ``l = log(sin(pi f))``; ``(log(pi) - l) - log Gamma(1 - x)``, or ``-l`` (+inf) where
  ``l`` is not finite (x a non-positive integer).
* +-inf give +inf.

``digamma`` (CHLO, one fused loop, nothing contracted): the same ``z``; with
``z_i = z + i``, ``num = 0 - sum c_i / z_i^2`` and ``den = 1 + sum c_i / z_i`` (c0 is 1 in
float32), each accumulated in order; ``(log_t + num / den) - 7 / (z + 7.5)``. For
``x < 1/2`` minus ``pi cos(pi r) / sin(pi r)`` with ``r = x + |floor(x + 1/2)|`` (glibc's
``cosf``/``sinf``); NaN at 0 and the negative integers.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.cpu_math.fma import fma_f32_np
from jaxlite._src.cpu_math.log import log1p_f32, log_f32
from jaxlite._src.cpu_math.trig import cos_f32, sin_f32

__all__ = ["digamma_f32", "lanczos_f32", "lgamma_f32"]

_F32 = np.dtype(np.float32)
LANCZOS_G = 7.0
LANCZOS_C0 = np.float32(0.99999999999980993227684700473478)
LANCZOS = tuple(np.float32(c) for c in (
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894, -176.61502916214059906584551354,
    12.507343278686904814458936853, -0.13857109526572011689554707,
    9.984369578019570859563e-6, 1.50563273514931155834e-7))
GPH = np.float32(LANCZOS_G + 0.5)
INV_GPH = np.float32(1.0 / (LANCZOS_G + 0.5))
LOG_GPH = np.float32(math.log(LANCZOS_G + 0.5))
LOG_SQRT_2PI = np.float32(math.log(math.sqrt(2 * math.pi)))
LOG_PI = np.float32(1.14472985)
G_F32 = np.float32(LANCZOS_G)
PI = np.float32(3.14159274)
TINY = np.float32(np.finfo(np.float32).tiny)
_HALF, _ONE, _INF = np.float32(0.5), np.float32(1), np.float32(np.inf)


def lanczos_f32(z):
    """``log Gamma(z + 1)`` of the float32 array ``z`` (meaningful for z >= -1/2), as XLA
    evaluates it."""
    z = np.asarray(z, _F32)
    series = np.full(z.shape, LANCZOS_C0, _F32)
    with np.errstate(all="ignore"):
        for i, c in enumerate(LANCZOS):
            series += c / (z + np.float32(i + 1))
        t = z + GPH
        log_t = LOG_GPH + log1p_f32(z * INV_GPH)
        lead = (z + _HALF) - t / log_t
        return np.asarray(fma_f32_np(lead, log_t, LOG_SQRT_2PI) + log_f32(series), _F32)


def lgamma_f32(x):
    """XLA:CPU's float32 ``lgamma`` of the float32 array ``x`` (a new array)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        x = np.where(np.abs(x) < TINY, x * np.float32(0), x)     # denormals are zero
        ax = np.abs(x)
        f = ax - np.floor(ax)
        f = np.where(_HALF < f, _ONE - f, f)
        ls = log_f32(sin_f32(f * PI))
        small = x < _HALF
        core = lanczos_f32(np.where(small, -x, x + np.float32(-1)))
        refl = np.where(np.isfinite(ls), (LOG_PI - ls) - core, -ls)
        r = np.where(small, refl, core)
        return np.asarray(np.where(ax == _INF, _INF, r), _F32)


def digamma_f32(x):
    """XLA:CPU's float32 ``digamma`` of the float32 array ``x`` (a new array)."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        x = np.where(np.abs(x) < TINY, x * np.float32(0), x)     # denormals are zero
        small = x < _HALF
        z = np.where(small, -x, x + np.float32(-1))
        num = np.zeros_like(z)
        den = np.full_like(z, _ONE)
        for i, c in enumerate(LANCZOS):
            zi = z + np.float32(i + 1)
            num = num - c / (zi * zi)
            den = den + c / zi
        log_t = log1p_f32(z * INV_GPH) + LOG_GPH
        y = (log_t + num / den) - G_F32 / (z + GPH)
        a = (x + np.abs(np.floor(x + _HALF))) * PI
        r = np.where(small, y - (cos_f32(a) * PI) / sin_f32(a), y)
        pole = (x <= np.float32(0)) & (x == np.floor(x))
        return np.asarray(np.where(pole, np.float32(np.nan), r), _F32)
