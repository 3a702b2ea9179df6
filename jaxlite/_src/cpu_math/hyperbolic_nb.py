"""numba twins of ``cpu_math.hyperbolic`` (scalar float32 functions, the NumPy kernels'
bits on every input; compile their loops with ``error_model="numpy"`` (IEEE division by
zero)). ``tanh`` lives in ``exp_nb`` (``expm1`` uses it)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import hyperbolic as H
from jaxlite._src.cpu_math.exp_nb import (
    exp_parts,
    expm1_f32,
    mul,
    pow2,
    round_ftz,
    tanh_f32,
)
from jaxlite._src.cpu_math.nb_common import _flush, _fmaf, _inline, _sel

__all__ = ["cosh_f32", "logistic_f32", "sinh_f32", "tanh_f32"]

F32, F64 = np.float32, np.float64
_ONE, _HALF, _NLN2 = F32(1), F32(0.5), H._NLN2


@_inline
def logistic_f32(x):
    """XLA:CPU's float32 ``logistic`` of one float32: ``1 / fma(q, 2**n, 1)`` with
    ``exp(-x) = q * 2**n``."""
    q, n = exp_parts(-x)
    return _flush(_ONE / _fmaf(q, pow2(n), _ONE))


@_inline
def _pair(x):
    a = _flush(x + _NLN2)
    b = _flush(_NLN2 - x)
    q1, n1 = exp_parts(a)
    q2, n2 = exp_parts(b)
    return q1, pow2(n1), round_ftz(F64(q2) * F64(pow2(n2)))


@_inline
def cosh_f32(x):
    """XLA:CPU's float32 ``cosh`` of one float32."""
    q1, s1, e2 = _pair(x)
    return _flush(_fmaf(q1, s1, e2))


@_inline
def sinh_f32(x):
    """XLA:CPU's float32 ``sinh`` of one float32."""
    q1, s1, e2 = _pair(x)
    big = _flush(_fmaf(q1, s1, -e2))
    e = expm1_f32(x)
    small = mul(_flush(e + e / (e + _ONE)), _HALF)
    return _sel(abs(x) < _ONE, small, big)
