"""XLA:CPU's float32 ``tanh``, ``logistic``, ``sinh`` and ``cosh``, bit for bit, in NumPy.

* ``tanh``: Eigen's rational approximation. ``x`` clamped to +-7.99881; ``x * P(x^2) /
  Q(x^2)`` with P of degree 6 and Q of degree 3 in ``x^2``, each by Horner's rule in fused
  multiply-adds; ``x`` itself for ``|x| < 4e-4`` and ``+-1`` for ``|x| >= 20``.
* ``logistic``: ``1 / (1 + exp(-x))``; XLA contracts exp's final multiply by ``2**n``
  with the ``+ 1``.
* ``cosh``: ``exp(x - ln 2) + exp(-ln 2 - x)``, the first exp's final multiply contracted
  with the sum.
* ``sinh``: for ``|x| < 1``, ``(e + e / (e + 1)) / 2`` with ``e = expm1(x)``; else
  ``exp(x - ln 2) - exp(-ln 2 - x)``, contracted like ``cosh``.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import emu
from jaxlite._src.cpu_math import exp as E
from jaxlite._src.cpu_math.emu import F32, F64

__all__ = ["cosh_f32", "logistic_f32", "sinh_f32", "tanh_f32"]


def _u(*bits):
    return tuple(np.uint32(b).view(np.float32) for b in bits)


_TANH_CLAMP = np.uint32(0x40FFF644).view(np.float32)      # 7.99881
_TANH_SMALL, _TANH_BIG = np.float32(4e-4), np.float32(20)
TANH_P = _u(0xA59F25C0, 0x2A61337E, 0xAEBD37FF, 0x335C0041, 0x3779434A, 0x3A270DED,
            0x3BA059DC)
TANH_Q = _u(0x35A0D3D8, 0x38F895D6, 0x3B14AA05, 0x3BA059DD)
_LN2 = np.float32(0.693147182)
_NLN2 = np.float32(-0.693147182)


def tanh_k(fma, x):
    """XLA's tanh of float32 ``x`` (the body shared with ``expm1``)."""
    xc = np.minimum(np.maximum(x, -_TANH_CLAMP), _TANH_CLAMP)
    xc = np.where(np.isnan(x), x, xc)
    x2 = xc * xc          # (never subnormal where the quotient is used)
    p = fma(x2, TANH_P[0], TANH_P[1])
    for c in TANH_P[2:]:
        p = fma(x2, p, c)
    q = fma(x2, TANH_Q[0], TANH_Q[1])
    for c in TANH_Q[2:]:
        q = fma(x2, q, c)
    y = emu.mul(xc, p) / q
    ax = np.abs(x)
    y = np.where(ax < _TANH_SMALL, x, y)
    return np.where(ax >= _TANH_BIG, np.copysign(np.float32(1), x), y)


def _logistic(fma, x):
    q, n = E.exp_parts(fma, -x)
    return emu.ftz(np.asarray(np.float32(1) / fma(q, E.pow2(n), 1.0)))


def _pair(fma, x):
    """``(q1, 2**n1, e2)``: exp(x - ln 2) = q1 * 2**n1 before its last multiply (which XLA
    contracts with what follows), and exp(-ln 2 - x) rounded to float32."""
    a = emu.ftz(np.asarray(x + _NLN2))
    b = emu.ftz(np.asarray(_NLN2 - x))
    q1, n1 = E.exp_parts(fma, a)
    q2, n2 = E.exp_parts(fma, b)
    e2 = emu.round_ftz(np.multiply(q2, E.pow2(n2), dtype=F64))
    return q1, E.pow2(n1), e2


def _cosh(fma, x):
    q1, s1, e2 = _pair(fma, x)
    return emu.ftz(fma(q1, s1, e2))


def _sinh(fma, x):
    q1, s1, e2 = _pair(fma, x)
    big = emu.ftz(fma(q1, s1, -e2))
    e = E.expm1_k(fma, x)
    small = emu.mul(emu.ftz(np.asarray(e + e / (e + np.float32(1)))), np.float32(0.5))
    return np.where(np.abs(x) < np.float32(1), small, big)


def tanh_f32(x):
    """XLA:CPU's float32 ``tanh`` of the float32 array ``x`` (a new array)."""
    return emu.run(tanh_k, np.asarray(x, F32))


def logistic_f32(x):
    """XLA:CPU's float32 ``logistic`` (``1 / (1 + exp(-x))``) of the float32 array ``x``."""
    return emu.run(_logistic, np.asarray(x, F32))


def cosh_f32(x):
    """XLA:CPU's float32 ``cosh`` of the float32 array ``x`` (a new array)."""
    return emu.run(_cosh, np.asarray(x, F32))


def sinh_f32(x):
    """XLA:CPU's float32 ``sinh`` of the float32 array ``x`` (a new array)."""
    return emu.run(_sinh, np.asarray(x, F32))
