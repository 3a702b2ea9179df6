"""Which lax primitives compute float32 with a ``cpu_math`` kernel.

``UNARY``/``BINARY``/``TERNARY`` map a lax primitive's name to ``(family, function)``: the NumPy kernel
is ``cpu_math.<family>.<function>`` and its numba twin ``cpu_math.<family>_nb.<function>``
(same bits). The primitives look their kernel up here (``prims.xla_kernels``); float16 and
bfloat16 operands are computed in float32 and rounded, as XLA:CPU does.
"""
from __future__ import annotations

__all__ = ["ALL", "BINARY", "F64", "HALF_OWN_STEPS", "TERNARY", "UNARY"]

UNARY = {
    "exp": ("exp", "exp_f32"),
    "expm1": ("exp", "expm1_f32"),
    "exp2": ("exp", "exp2_f32"),
    "tanh": ("hyperbolic", "tanh_f32"),
    "logistic": ("hyperbolic", "logistic_f32"),
    "sinh": ("hyperbolic", "sinh_f32"),
    "cosh": ("hyperbolic", "cosh_f32"),
    "erf": ("erf", "erf_f32"),
    "erfc": ("erf", "erfc_f32"),
    "log": ("log", "log_f32"),
    "log1p": ("log", "log1p_f32"),
    "sin": ("trig", "sin_f32"),
    "cos": ("trig", "cos_f32"),
    "tan": ("trig", "tan_f32"),
    "asin": ("trig", "asin_f32"),
    "acos": ("trig", "acos_f32"),
    "atan": ("trig", "atan_f32"),
    "erf_inv": ("special", "erf_inv_f32"),
    "cbrt": ("special", "cbrt_f32"),
    "atanh": ("inverse", "atanh_f32"),
    "rsqrt": ("rsqrt", "rsqrt_f32"),
    "lgamma": ("gamma", "lgamma_f32"),
    "digamma": ("gamma", "digamma_f32"),
    "asinh": ("inverse", "asinh_f32"),
    "acosh": ("inverse", "acosh_f32"),
}

BINARY = {
    "atan2": ("trig", "atan2_f32"),
    "pow": ("power", "pow_f32"),
}

# the multiply-adds XLA's code contracts a product and an addition or subtraction into
# (a*b+c, a*b-c, c-a*b: internal primitives the compiler's ``contract_products`` pass makes;
# never in a user's jaxpr)
TERNARY = {
    "xla_fma": ("fma", "fma_f32"),
    "xla_fms": ("fma", "fms_f32"),
    "xla_fnma": ("fma", "fnma_f32"),
}

ALL = {**UNARY, **BINARY, **TERNARY}

# primitives whose float64 results are XLA's own function too (not the C library's):
# ``cpu_math.<family>.<function>`` and the twin ``cpu_math.<family>_nb.<function>``
F64 = {
    "exp": ("xla64", "exp_f64"),
    "tanh": ("xla64", "tanh_f64"),
    "expm1": ("xla64", "expm1_f64"),
    "cosh": ("xla64", "cosh_f64"),
    "sinh": ("xla64", "sinh_f64"),
    "logistic": ("xla64", "logistic_f64"),
    # (float64 multiply-adds: the compiler contracts float64 only where the processor has
    # FMA, as LLVM does for XLA)
    "xla_fma": ("fma", "fma_f64"),
    "xla_fms": ("fma", "fms_f64"),
    "xla_fnma": ("fma", "fnma_f64"),
    "log1p": ("xla64", "log1p_f64"),
    "exp2": ("xla64", "exp2_f64"),
    # the C library's functions XLA calls (under DAZ/FTZ)
    "log": ("libm64", "log_f64"),
    "sin": ("libm64", "sin_f64"),
    "cos": ("libm64", "cos_f64"),
    "tan": ("libm64", "tan_f64"),
    "atan": ("libm64", "atan_f64"),
    "erf": ("libm64", "erf_f64"),
    "cbrt": ("libm64", "cbrt_f64"),
    "pow": ("libm64", "pow_f64"),
    "atan2": ("libm64", "atan2_f64"),
    # XLA's expansions over them
    "asin": ("special64", "asin_f64"),
    "acos": ("special64", "acos_f64"),
    "asinh": ("special64", "asinh_f64"),
    "acosh": ("special64", "acosh_f64"),
    "atanh": ("special64", "atanh_f64"),
    "erfc": ("special64", "erfc_f64"),
    "erf_inv": ("special64", "erf_inv_f64"),
    "lgamma": ("special64", "lgamma_f64"),
    "digamma": ("special64", "digamma_f64"),
    # the processor's estimate refined (or 1 / sqrt(x)): cpu_math.rsqrt64
    "rsqrt": ("rsqrt64", "rsqrt_f64"),
}

# half floats XLA does not compute as one float32 kernel rounded once: it rounds each step
# of the expansion to the narrow type (checked against JAX); these keep NumPy's half code
HALF_OWN_STEPS = {
    "exp2": {"float16", "bfloat16"},
    "logistic": {"float16", "bfloat16"},
    "expm1": {"float16"},
}
