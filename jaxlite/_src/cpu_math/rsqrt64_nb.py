"""numba side of ``cpu_math.rsqrt64``: the twin ``rsqrt_f64`` (the form chosen for this
processor is fixed when the twin is compiled)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.nb_common import _inline, _rsqrt14_estimate, fma64

__all__ = ["rsqrt_f64"]

F64 = np.float64


def _form_constants():
    from jaxlite._src.cpu_math import rsqrt64 as R
    form, fn = R._chosen()
    return (form.method == "estimate" and fn is not None), form.steps, form.fused


_ESTIMATE, _STEPS, _FUSED = _form_constants()
_TINY = F64(np.finfo(np.float64).tiny)
_ZERO, _ONE, _MHALF, _INF = F64(0), F64(1), F64(-0.5), F64(np.inf)


@_inline
def _estimate_form(x):
    xf = x * _ZERO if abs(x) < _TINY else x
    y0 = _rsqrt14_estimate(xf)
    if not (xf >= _TINY and xf < _INF):
        return y0
    y = y0
    for _ in range(_STEPS):
        half_y = y * _MHALF
        if _FUSED:
            y = fma64(half_y, fma64(xf * y, y, F64(-1)), y)
        else:
            y = half_y * ((xf * y) * y - F64(1)) + y
    return y


@_inline
def _divide_form(x):
    xf = x * _ZERO if abs(x) < _TINY else x
    return _ONE / np.sqrt(xf)


# (chosen here, so a processor without AVX-512 never compiles the estimate instruction)
rsqrt_f64 = _estimate_form if _ESTIMATE else _divide_form
rsqrt_f64.__doc__ = """XLA:CPU's float64 ``rsqrt`` of one float64 on this processor
(``cpu_math.rsqrt64.rsqrt_f64``'s bits)."""
