"""lax's elementwise operators: thin wrappers binding the primitives of prims/elementwise.py.

As in JAX, lax operators do no implicit type promotion: operands must share a dtype (Python
scalars are weakly typed and take their default dtype). Use jax.numpy for NumPy-style
promotion and broadcasting.
"""
from __future__ import annotations

import builtins
import enum

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.prims import elementwise as ew
from jaxlite._src.runtime.array import ArrayImpl

__all__ = [
    "add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "nextafter", "complex",
    "neg", "sign", "floor", "ceil", "round", "is_finite", "exp", "exp2", "log", "expm1",
    "log1p", "tanh", "logistic", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "asinh", "acosh", "atanh", "sqrt", "rsqrt", "cbrt", "abs", "real", "imag", "conj",
    "integer_pow", "square", "reciprocal", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "population_count", "clz", "shift_left",
    "shift_right_logical", "shift_right_arithmetic", "convert_element_type",
    "bitcast_convert_type", "select",
    "select_n", "clamp", "RoundingMethod", "Tolerance", "AccuracyMode",
]


def _binary(p, doc):
    def op(x, y):
        return p.bind(x, y)
    op.__name__ = op.__qualname__ = p.name
    op.__doc__ = doc
    return op


def _unary(p, doc):
    def op(x):
        return p.bind(x)
    op.__name__ = op.__qualname__ = p.name
    op.__doc__ = doc
    return op


class Tolerance:
    """An ``accuracy=`` request for transcendental ops: absolute, relative and/or ulp
    tolerances (validated as JAX does)."""

    def __init__(self, atol=0.0, rtol=0.0, ulps=0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps


class AccuracyMode(enum.Enum):
    """An ``accuracy=`` request for transcendental ops: the highest or the default one."""
    HIGHEST = 1
    DEFAULT = 2


def _unary_accuracy(p, doc):
    """A unary op taking JAX's ``accuracy=`` hint: the NumPy kernels are always computed at
    full precision, so every requested tolerance is met and the hint is not needed."""
    def op(x, *, accuracy=None):
        return p.bind(x)
    op.__name__ = op.__qualname__ = p.name
    op.__doc__ = doc + " (``accuracy`` is accepted; results are full precision.)"
    return op


add = _binary(ew.add_p, "Elementwise addition ``x + y`` (no type promotion).")
sub = _binary(ew.sub_p, "Elementwise subtraction ``x - y``.")
mul = _binary(ew.mul_p, "Elementwise multiplication ``x * y``.")
div = _binary(ew.div_p, "Elementwise division; integer division rounds toward zero.")
rem = _binary(ew.rem_p, "Elementwise remainder with the sign of the dividend (C fmod).")
pow = _binary(ew.pow_p, "Elementwise power ``x ** y``.")
max = _binary(ew.max_p, "Elementwise maximum.")
min = _binary(ew.min_p, "Elementwise minimum.")
atan2 = _binary(ew.atan2_p, "Elementwise arctangent of ``x / y`` with quadrant.")


def nextafter(x1, x2):
    """Next representable value after ``x1`` toward ``x2``."""
    return ew.nextafter_p.bind(x1, x2)


complex = _binary(ew.complex_p, "Build ``x + 1j * y`` from real and imaginary parts.")
eq = _binary(ew.eq_p, "Elementwise ``x == y``.")
ne = _binary(ew.ne_p, "Elementwise ``x != y``.")
lt = _binary(ew.lt_p, "Elementwise ``x < y``.")
le = _binary(ew.le_p, "Elementwise ``x <= y``.")
gt = _binary(ew.gt_p, "Elementwise ``x > y``.")
ge = _binary(ew.ge_p, "Elementwise ``x >= y``.")
bitwise_and = _binary(ew.and_p, "Elementwise bitwise/logical AND.")
bitwise_or = _binary(ew.or_p, "Elementwise bitwise/logical OR.")
bitwise_xor = _binary(ew.xor_p, "Elementwise bitwise/logical XOR.")
shift_left = _binary(ew.shift_left_p, "Elementwise left shift.")
shift_right_logical = _binary(ew.shift_right_logical_p, "Elementwise logical right shift.")
shift_right_arithmetic = _binary(ew.shift_right_arithmetic_p,
                                 "Elementwise arithmetic right shift.")

neg = _unary(ew.neg_p, "Elementwise negation ``-x``.")
sign = _unary(ew.sign_p, "Elementwise sign.")
floor = _unary(ew.floor_p, "Elementwise floor.")
ceil = _unary(ew.ceil_p, "Elementwise ceiling.")
is_finite = _unary(ew.is_finite_p, "Elementwise test for finiteness.")
exp = _unary_accuracy(ew.exp_p, "Elementwise exponential.")
exp2 = _unary_accuracy(ew.exp2_p, "Elementwise base-2 exponential.")
log = _unary_accuracy(ew.log_p, "Elementwise natural logarithm.")
expm1 = _unary_accuracy(ew.expm1_p, "Elementwise ``exp(x) - 1``.")
log1p = _unary_accuracy(ew.log1p_p, "Elementwise ``log(1 + x)``.")
tanh = _unary_accuracy(ew.tanh_p, "Elementwise hyperbolic tangent.")
logistic = _unary_accuracy(ew.logistic_p,
                           "Elementwise logistic sigmoid ``1 / (1 + exp(-x))``.")
sin = _unary_accuracy(ew.sin_p, "Elementwise sine.")
cos = _unary_accuracy(ew.cos_p, "Elementwise cosine.")
tan = _unary_accuracy(ew.tan_p, "Elementwise tangent.")
asin = _unary(ew.asin_p, "Elementwise arcsine.")
acos = _unary(ew.acos_p, "Elementwise arccosine.")
atan = _unary(ew.atan_p, "Elementwise arctangent.")
sinh = _unary(ew.sinh_p, "Elementwise hyperbolic sine.")
cosh = _unary(ew.cosh_p, "Elementwise hyperbolic cosine.")
asinh = _unary(ew.asinh_p, "Elementwise inverse hyperbolic sine.")
acosh = _unary(ew.acosh_p, "Elementwise inverse hyperbolic cosine.")
atanh = _unary(ew.atanh_p, "Elementwise inverse hyperbolic tangent.")
sqrt = _unary_accuracy(ew.sqrt_p, "Elementwise square root.")
rsqrt = _unary_accuracy(ew.rsqrt_p, "Elementwise reciprocal square root.")
cbrt = _unary_accuracy(ew.cbrt_p, "Elementwise cube root.")
abs = _unary(ew.abs_p, "Elementwise absolute value (magnitude for complex).")
real = _unary(ew.real_p, "Real part of a complex array.")
imag = _unary(ew.imag_p, "Imaginary part of a complex array.")
bitwise_not = _unary(ew.not_p, "Elementwise bitwise/logical NOT.")
population_count = _unary(ew.population_count_p, "Number of set bits per element.")
clz = _unary(ew.clz_p, "Number of leading zero bits per element.")
square = _unary(ew.square_p, "Elementwise square ``x * x``.")


def conj(x):
    """Complex conjugate (real inputs are converted to complex, as lax.conj does)."""
    return ew.conj_p.bind(x, input_dtype=np.dtype(x.dtype) if hasattr(x, "dtype")
                          else dtypes.python_scalar_dtype(x))


class RoundingMethod(enum.IntEnum):
    """How ``lax.round`` breaks ties: away from zero (0) or to nearest even (1)."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Round to the nearest integral value; ties away from zero unless TO_NEAREST_EVEN."""
    return ew.round_p.bind(x, rounding_method=int(rounding_method))


def integer_pow(x, y: int):
    """``x ** y`` for a static Python int ``y``."""
    return ew.integer_pow_p.bind(x, y=int(y))


def reciprocal(x):
    """Elementwise ``1 / x``."""
    return integer_pow(x, -1)


def convert_element_type(operand, new_dtype):
    """Cast ``operand`` to ``new_dtype`` (canonicalized; float64 becomes float32 unless x64).
    To or from an extended dtype defined with JAX's rules protocol, the array becomes one of
    that dtype over the same data, or its data, when the dtype's rules allow it."""
    new_dtype = dtypes.canonicalize_dtype(new_dtype, allow_extended_dtype=True)
    if _has_rules(new_dtype) or _has_rules(getattr(operand, "dtype", None)):
        return _convert_extended(operand, new_dtype)
    if hasattr(operand, "dtype") and operand.dtype == new_dtype and not getattr(
            operand, "weak_type", False) and hasattr(operand, "aval"):
        return operand
    if isinstance(operand, (bool, int, float, builtins.complex, np.ndarray, np.generic)):
        return _convert_element_type(operand, new_dtype, False)
    return ew.convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=False,
                                          sharding=None)


def _has_rules(dt) -> bool:
    # (an extended dtype of JAX's rules protocol; key arrays keep their own primitives)
    return isinstance(dt, dtypes.ExtendedDType) and getattr(dt, "_rules", None) is not None


def _convert_extended(operand, new_dtype):
    """JAX's convert_element_type with an extended dtype on either side: ``to_edtype`` or
    ``from_edtype`` (the dtype's rules decide), nothing for the same dtype, an error between
    two extended dtypes."""
    from jaxlite._src.prims.edtype import from_edtype_p, physical_element_aval, to_edtype_p
    if hasattr(operand, "__jax_array__"):
        operand = operand.__jax_array__()
    old_dtype = dtypes.dtype(operand)
    if new_dtype == old_dtype:
        return operand
    new_ext = isinstance(new_dtype, dtypes.ExtendedDType)
    if new_ext and isinstance(old_dtype, dtypes.ExtendedDType):
        old_rep = physical_element_aval(old_dtype).dtype
        new_rep = physical_element_aval(new_dtype).dtype
        raise ValueError(
            "cannot directly convert between extended dtypes: from "
            f"{old_dtype.name} to {new_dtype.name}. Instead, convert to and from their "
            f"representation dtypes, e.g.:\n{old_dtype.name} -> {np.dtype(old_rep).name} "
            f"-> {np.dtype(new_rep).name} -> {new_dtype.name}")
    if new_ext:
        from jaxlite._src.prims.operands import asarray_value
        return to_edtype_p.bind(asarray_value(operand), edtype=new_dtype)
    return from_edtype_p.bind(operand, dtype=np.dtype(new_dtype))


def bitcast_convert_type(operand, new_dtype):
    """Reinterpret the bits of ``operand`` as ``new_dtype``; a narrower type adds a trailing
    dimension, a wider one consumes a trailing dimension of the right size."""
    from jaxlite._src.prims.operands import asarray_value
    return ew.bitcast_convert_type_p.bind(asarray_value(operand),
                                          new_dtype=dtypes.canonicalize_dtype(new_dtype))


def _convert_element_type(operand, new_dtype=None, weak_type=False):
    """Internal cast that can produce weakly typed results (used by jnp's promotion).

    Concrete non-array inputs (Python scalars, NumPy values) are converted directly, so under
    tracing they stay constants (literals) as in JAX."""
    if new_dtype is None:
        new_dtype = dtypes.dtype(operand)
    new_dtype = dtypes.canonicalize_dtype(new_dtype)
    if isinstance(operand, (bool, int, float, builtins.complex, np.ndarray, np.generic)):
        return ArrayImpl(ew.convert_element_type_p.impl(np.asarray(operand), new_dtype),
                         weak_type)
    if (hasattr(operand, "aval") and operand.dtype == new_dtype
            and bool(getattr(operand, "weak_type", False)) == bool(weak_type)):
        return operand      # nothing to convert: no equation (as JAX's)
    return ew.convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type,
                                          sharding=None)


def select_n(which, *cases):
    """Choose elementwise among ``cases`` by ``which`` (bool for two cases, or int)."""
    return ew.select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
    """``on_true`` where ``pred`` else ``on_false`` (elementwise)."""
    return ew.select_n_p.bind(pred, on_false, on_true)


def clamp(min, x, max):
    """Clamp ``x`` to ``[min, max]`` elementwise."""
    return ew.clamp_p.bind(min, x, max)


# Wrappers made by _unary/_binary carry their public name (``bitwise_and``, not the primitive's
# ``and``), as jit's equation names and tracebacks show it.
for _name in __all__:
    _f = globals().get(_name)
    if callable(_f) and getattr(_f, "__name__", _name) != _name and \
            getattr(_f, "__module__", None) == __name__:
        _f.__name__ = _f.__qualname__ = _name
