"""XLA:CPU's float32 ``erf`` and ``erfc``, bit for bit, in NumPy.

* ``erf``: ``x P(x^2) / Q(x^2)`` (P of degree 4, Q of degree 6, Horner's rule in fused
  multiply-adds), ``+-1`` for ``|x| >= 3.8325``.
* ``erfc`` (the CHLO expansion XLA compiles): for ``|x| < 1``, ``1 - x C(x^2)`` (C of
  degree 6, the last step contracted); else ``t = exp(-x^2) / |x| * R(1/x^2)`` with R one
  of two polynomials (degrees 8 and 7) (``|x| < 2`` or not), 0 when ``x^2 > 88.72``, and ``2 - t``
  for negative ``x``.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import emu
from jaxlite._src.cpu_math import exp as E
from jaxlite._src.cpu_math.emu import F32, F64

__all__ = ["erf_f32", "erfc_f32"]


def _u(*bits):
    return tuple(np.uint32(b).view(np.float32) for b in bits)


_ERF_BIG = np.uint32(0x407547CB).view(np.float32)         # 3.8325
ERF_P = _u(0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740, 0x3F906EBA)
ERF_Q = _u(0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4, 0x3DE34C21, 0x3EFEB44A,
           0x3F800000)
# erfc: R for 1 <= |x| < 2 and for |x| >= 2 (in 1/x^2), C for |x| < 1 (in x^2)
ERFC_R1 = _u(0x3CBE9CF4, 0xBE0E0868, 0x3EBCCBD0, 0xBF151CF8, 0x3F1EF9E3, 0xBEFD28C0,
             0x3EAE5471, 0xBE8C5880, 0x3F1056E6)
ERFC_R2 = _u(0xC127A483, 0x414FA29C, 0xC0EFDB4A, 0x403AF1FA, 0xBF81F436, 0x3ED7FC3E,
             0xBE906C5D, 0x3F106EB9)
ERFC_C = _u(0x38A4B519, 0xBA51FB80, 0x3BAA02D9, 0xBCDBFC87, 0x3DE7167C, 0xBEC0939F,
            0x3F906EBA)
_ERFC_UNDER = np.uint32(0x42B17218).view(np.float32)      # 88.72284


def _horner(fma, z, coef):
    p = fma(z, coef[0], coef[1])
    for c in coef[2:]:
        p = fma(z, p, c)
    return p


def _erf(fma, x):
    x = emu.ftz(np.array(x, F32))            # (denormals are zero)
    x2 = emu.mul(x, x)
    y = emu.mul(x, _horner(fma, x2, ERF_P)) / _horner(fma, x2, ERF_Q)
    return np.where(np.abs(x) >= _ERF_BIG, np.copysign(np.float32(1), x), y)


def _erfc(fma, x):
    ax = np.abs(x)
    z = emu.mul(x, x)
    iz = emu.ftz(np.asarray(np.float32(1) / z))
    r = np.where(ax < np.float32(2), _horner(fma, iz, ERFC_R1), _horner(fma, iz, ERFC_R2))
    q, n = E.exp_parts(fma, -z)
    e = emu.round_ftz(np.multiply(q, E.pow2(n), dtype=F64))
    t = emu.mul(emu.mul(e, emu.ftz(np.asarray(np.float32(1) / ax))), r)
    t = np.where(z > _ERFC_UNDER, np.float32(0), t)
    big = np.where(x < 0, np.float32(2) - t, t)
    small = fma(-x, _horner(fma, z, ERFC_C), 1.0)
    return np.where(ax < np.float32(1), small, big)


def erf_f32(x):
    """XLA:CPU's float32 ``erf`` of the float32 array ``x`` (a new array)."""
    return emu.run(_erf, np.asarray(x, F32))


def erfc_f32(x):
    """XLA:CPU's float32 ``erfc`` of the float32 array ``x`` (a new array)."""
    return emu.run(_erfc, np.asarray(x, F32))
