"""XLA:CPU's float32 ``exp``, ``expm1``, ``exp2`` and ``pow``, bit for bit, in NumPy.

``exp`` (XLA's own intrinsic, the same on every x86 CPU): ``x`` clamped to
[-87.8, 88.8], ``n = floor(fma(x, log2 e, 1/2))`` clamped to [-127, 127], a Cody-Waite
reduction ``r = x - n ln2`` with ``ln 2`` split in two (two fused multiply-adds), the
degree-5 Cephes polynomial by Horner's rule in fused multiply-adds, ``fma(p, r*r, r) + 1``
and a multiply by ``2**n`` built from its bits (``n = -127`` gives 0). Results below
FLT_MIN flush to zero.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import emu
from jaxlite._src.cpu_math.emu import F32, F64

__all__ = ["exp2_f32", "exp_f32", "expm1_f32"]

_LO, _HI = np.float32(-87.8), np.float32(88.8)
_LOG2E = np.float32(1.44269504088896341)                 # 0x3FB8AA3B
_LN2_HI = np.float32(0.693359375)                         # 0x3F318000
_LN2_LO = np.float32(-2.12194440e-4)                      # 0xB95E8083
EXP_POLY = tuple(np.uint32(u).view(np.float32) for u in (
    0x39506967, 0x3AB743CE, 0x3C088908, 0x3D2AA9C1, 0x3E2AAAAA, 0x3F000000))


def exp_parts(fma, x):
    """``(q, n)``: XLA's exp of float32 ``x`` is ``q * 2**n`` (``q`` float32 near 1,
    ``n`` a float32 integer in [-127, 127], NaN for NaN ``x``) before the final multiply,
    which ``expm1`` keeps apart."""
    xc = np.minimum(np.maximum(x, _LO), _HI)
    n = np.floor(fma(xc, _LOG2E, 0.5))
    n = np.minimum(np.maximum(n, np.float32(-127)), np.float32(127))
    # x - n ln2_hi and that - n ln2_lo are exact in float64 (32 and 36 bits): one rounding
    r = (xc - np.multiply(n, _LN2_HI, dtype=F64)).astype(F32)
    r = (r - np.multiply(n, _LN2_LO, dtype=F64)).astype(F32)
    p = fma(r, EXP_POLY[0], EXP_POLY[1])
    for c in EXP_POLY[2:]:
        p = fma(p, r, c)
    # (r * r is not flushed: where it is subnormal, fma(p, r * r, r) is r either way)
    q = fma(p, r * r, r) + np.float32(1)
    return q, n


def pow2(n):
    """float32 ``2**n`` as XLA builds it from the bits of ``int32(n) + 127`` (``n = -127``
    gives 0; for NaN ``n`` the value does not matter: ``q`` is NaN too)."""
    return np.left_shift(np.add(np.asarray(n).astype(np.int32), 127), 23).view(F32)


def _exp(fma, x):
    q, n = exp_parts(fma, x)
    return emu.round_ftz(np.multiply(q, pow2(n), dtype=F64))


def exp_f32(x):
    """XLA:CPU's float32 ``exp`` of the float32 array ``x`` (a new array)."""
    return emu.run(_exp, np.asarray(x, F32))


def expm1_k(fma, x):
    """XLA's expm1 of float32 ``x``: ``exp(x) - 1`` for ``|x| > 1/2``, else
    ``tanh(x / 2) * (exp(x) + 1)``; ``x`` itself where ``x / 2`` is zero."""
    from jaxlite._src.cpu_math.hyperbolic import tanh_k
    q, n = exp_parts(fma, x)
    e = emu.round_ftz(np.multiply(q, pow2(n), dtype=F64))
    h = emu.mul(x, np.float32(0.5))
    small = tanh_k(fma, h) * (e + np.float32(1))
    y = np.where(np.abs(x) > np.float32(0.5), e - np.float32(1), small)
    return np.where(h == 0, x, emu.ftz(np.asarray(y, F32)))


def _exp2(fma, x):
    return _exp(fma, emu.mul(x, _LN2))


_LN2 = np.float32(0.693147182)


def expm1_f32(x):
    """XLA:CPU's float32 ``expm1`` of the float32 array ``x`` (a new array)."""
    return emu.run(expm1_k, np.asarray(x, F32))


def exp2_f32(x):
    """XLA:CPU's float32 ``exp2`` (``exp(x * ln 2)``, the product rounded to float32) of
    the float32 array ``x`` (a new array)."""
    return emu.run(_exp2, np.asarray(x, F32))
