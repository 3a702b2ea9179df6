"""Which lax primitives compute float32 with a ``cpu_math`` kernel.

``UNARY``/``BINARY``/``TERNARY`` map a lax primitive's name to ``(family, function)``: the NumPy kernel
is ``cpu_math.<family>.<function>`` and its numba twin ``cpu_math.<family>_nb.<function>``
(same bits). The primitives look their kernel up here (``prims.xla_kernels``); float16 and
bfloat16 operands are computed in float32 and rounded, as XLA:CPU does.
"""
from __future__ import annotations

__all__ = ["UNARY", "BINARY", "TERNARY", "ALL"]

UNARY = {
}

BINARY = {
}

# the multiply-add XLA's code contracts a product and an addition into (an internal
# primitive the compiler's ``contract_products`` pass makes; never in a user's jaxpr)
TERNARY = {
    "xla_fma": ("fma", "fma_f32"),
}

ALL = {**UNARY, **BINARY, **TERNARY}
