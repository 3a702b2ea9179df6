"""numba twins of ``fma.fma_f32`` / ``fms_f32`` / ``fnma_f32`` (and the ``_f64`` ones): the
FMA instruction (equal to the NumPy emulations for normal float32 results, and always for
float64)."""
from __future__ import annotations

from jaxlite._src.cpu_math.nb_common import _fmaf, _inline, fma64

__all__ = ["fma_f32", "fma_f64", "fms_f32", "fms_f64", "fnma_f32", "fnma_f64"]


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


@_inline
def fma_f64(a, b, c):
    """float64 ``a * b + c`` rounded once."""
    return fma64(a, b, c)


@_inline
def fms_f64(a, b, c):
    """float64 ``a * b - c`` rounded once."""
    return fma64(a, b, -c)


@_inline
def fnma_f64(a, b, c):
    """float64 ``c - a * b`` rounded once."""
    return fma64(-a, b, c)
