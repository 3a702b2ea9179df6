"""Which lax primitives compute float32 with a ``cpu_math`` kernel.

``UNARY``/``BINARY`` map a lax primitive's name to ``(family, function)``: the NumPy kernel
is ``cpu_math.<family>.<function>`` and its numba twin ``cpu_math.<family>_nb.<function>``
(same bits). The primitives look their kernel up here (``prims.xla_kernels``); float16 and
bfloat16 operands are computed in float32 and rounded, as XLA:CPU does.
"""
from __future__ import annotations

__all__ = ["BINARY", "UNARY"]

UNARY = {
    "log": ("log", "log_f32"),
    "log1p": ("log", "log1p_f32"),
    "sin": ("trig", "sin_f32"),
    "cos": ("trig", "cos_f32"),
    "tan": ("trig", "tan_f32"),
    "asin": ("trig", "asin_f32"),
    "acos": ("trig", "acos_f32"),
    "erf_inv": ("special", "erf_inv_f32"),
    "cbrt": ("special", "cbrt_f32"),
    "atanh": ("inverse", "atanh_f32"),
}

BINARY = {
    "atan2": ("trig", "atan2_f32"),
}
