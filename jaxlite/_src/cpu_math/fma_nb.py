"""numba twins of ``fma.fma_f32`` / ``fms_f32`` / ``fnma_f32``: the FMA instruction (equal to the float64 emulation for
normal results)."""
from __future__ import annotations

from jaxlite._src.cpu_math.nb_common import _fmaf, _inline

__all__ = ["fma_f32", "fms_f32", "fnma_f32"]


@_inline
def fma_f32(a, b, c):
    """float32 ``a * b + c`` rounded once."""
    return _fmaf(a, b, c)


@_inline
def fms_f32(a, b, c):
    """float32 ``a * b - c`` rounded once."""
    return _fmaf(a, b, -c)


@_inline
def fnma_f32(a, b, c):
    """float32 ``c - a * b`` rounded once."""
    return _fmaf(-a, b, c)
