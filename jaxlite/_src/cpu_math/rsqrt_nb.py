"""numba side of ``cpu_math.rsqrt``: the twin ``rsqrt_f32`` (``cpu_math.rsqrt.rsqrt_f32``'s bits:
the form chosen for this processor is fixed when the twin is compiled)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.nb_common import _fmaf, _inline, _rsqrt_estimate, _sel

__all__ = ["rsqrt_f32"]

F32, F64 = np.float32, np.float64


def _form_constants():
    from jaxlite._src.cpu_math import rsqrt as R
    form = R.rsqrt_form()
    code = {"estimate": 0, "divide": 1, "exact": 2}[form.method]
    if code == 0 and R._chosen()[1] is None:
        code = 2
    return code, form.steps, form.fused


_METHOD, _STEPS, _FUSED = _form_constants()
_TINY = F32(np.finfo(np.float32).tiny)
_ZERO, _ONE, _MHALF, _INF = F32(0), F32(1), F32(-0.5), F32(np.inf)


@_inline
def _step(x, y):
    half_y = y * _MHALF
    if _FUSED:
        return _fmaf(half_y, _fmaf(x * y, y, F32(-1)), y)
    return half_y * ((x * y) * y + F32(-1)) + y


@_inline
def rsqrt_f32(x):
    """XLA:CPU's float32 ``rsqrt`` of one float32 on this processor
    (``cpu_math.rsqrt.rsqrt_f32``'s bits)."""
    if _METHOD == 1:
        xf = _sel(abs(x) < _TINY, x * _ZERO, x)
        return _ONE / np.sqrt(xf)
    if _METHOD == 2:
        return F32(F64(1.0) / np.sqrt(F64(x)))
    y0 = _rsqrt_estimate(x)
    y = y0
    for _ in range(_STEPS):
        y = _step(x, y)
    return _sel((x >= _TINY) & (x < _INF), y, y0)
