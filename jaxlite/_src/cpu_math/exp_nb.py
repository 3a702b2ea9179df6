"""numba twins of ``cpu_math.exp``: scalar float32 functions giving the NumPy kernels'
bits on every input, branch-free so that loops over them vectorise. Their fused
multiply-adds use the hardware FMA (``_fmaf``), equal to the emulated one wherever the
result is normal; the few places where a subnormal can appear flush it explicitly, as
XLA:CPU does (FTZ/DAZ)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math import exp as E
from jaxlite._src.cpu_math.nb_common import _flush, _fmaf, _inline, _sel, _sel64

__all__ = ["exp_f32"]

F32, F64 = np.float32, np.float64
_LO, _HI, _LOG2E, _LN2_HI, _LN2_LO = E._LO, E._HI, E._LOG2E, E._LN2_HI, E._LN2_LO
_P0, _P1, _P2, _P3, _P4, _P5 = E.EXP_POLY
_HALF, _ONE, _NMIN, _NMAX = F32(0.5), F32(1), F32(-127), F32(127)
_U52 = np.uint64(52)


@_inline
def exp_parts(x):
    """``(q, n)`` of ``exp.exp_parts`` for one float32 (``n`` NaN for NaN ``x``)."""
    x = _flush(x)
    xc = _sel(x < _LO, _LO, x)
    xc = _sel(xc > _HI, _HI, xc)
    n = np.floor(_fmaf(xc, _LOG2E, _HALF))
    n = _sel(n < _NMIN, _NMIN, n)
    n = _sel(n > _NMAX, _NMAX, n)
    r = _fmaf(-n, _LN2_HI, xc)
    r = _fmaf(-n, _LN2_LO, r)
    p = _fmaf(r, _P0, _P1)
    p = _fmaf(p, r, _P2)
    p = _fmaf(p, r, _P3)
    p = _fmaf(p, r, _P4)
    p = _fmaf(p, r, _P5)
    q = _fmaf(p, _flush(r * r), r) + _ONE
    return q, n


@_inline
def scale(q, n):
    """float64 ``q * 2**n`` as XLA builds ``2**n`` (``n = -127`` gives 0; NaN ``n``
    gives 1, XLA's conversion of NaN to int32 being INT_MIN)."""
    ok = not np.isnan(n)
    ni = np.int64(_sel(ok, n, _ZERO))
    s = np.uint64(np.uint64(ni + 1023) << _U52).view(np.float64)
    s = _sel64(ni == -127, F64(0), s)
    return F64(q) * _sel64(ok, s, F64(1))


_ZERO = F32(0)


@_inline
def exp_f32(x):
    """XLA:CPU's float32 ``exp`` of one float32."""
    q, n = exp_parts(x)
    return _flush(F32(scale(q, n)))
