"""jax.numpy elementwise functions: arithmetic, transcendental, comparison, logic, bitwise
(a float's parts, ``frexp``/``ldexp``/``modf``/``nextafter``/``spacing``: ufuncs_float_parts).

Each promotes its arguments NumPy-style with JAX's dtype lattice (util.promote_args*) and
binds lax operators."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.numpy.util import (promote_args, promote_args_inexact, promote_args_numeric,
                                     check_arraylike, asarray_value, lax_const)
from jaxlite._src.numpy.ufuncs_smooth import logaddexp, logaddexp2, sinc  # noqa: F401
from jaxlite._src.numpy.where_op import _to_bool, where  # noqa: F401
from jaxlite._src.numpy.ufuncs_division import (  # noqa: F401
    floor_divide, remainder, mod, fmod, divmod)

__all__ = [
    "add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power", "pow",
    "negative", "positive", "mod", "remainder", "fmod", "maximum", "minimum", "fmax", "fmin",
    "abs", "absolute", "fabs", "sign", "sqrt", "cbrt", "square", "reciprocal", "exp", "exp2",
    "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "asinh",
    "acosh", "atanh", "arctan2", "atan2", "hypot", "floor", "ceil", "trunc", "rint", "round",
    "around", "conj", "conjugate", "real", "imag", "angle", "deg2rad", "rad2deg",
    "degrees", "radians", "logaddexp", "logaddexp2", "sinc", "heaviside", "copysign",
    "signbit", "float_power", "divmod", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "isfinite",
    "isinf", "isnan", "isneginf", "isposinf", "isclose", "allclose", "array_equal",
    "array_equiv", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "invert",
    "bitwise_invert", "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
    "nan_to_num", "clip", "iscomplex", "isreal", "gcd", "lcm", "bitwise_count",
]


_BOOL = np.dtype(bool)


def _is_int(x):
    return dtypes.issubdtype(x.dtype, np.integer)


def add(x, y, /):
    """Elementwise ``x + y`` (logical or for booleans)."""
    x, y = promote_args("add", x, y)
    return lax.bitwise_or(x, y) if x.dtype == _BOOL else lax.add(x, y)


def subtract(x, y, /):
    """Elementwise ``x - y``."""
    x, y = promote_args("subtract", x, y)
    return lax.sub(x, y)


def _bool_operand(v):
    return isinstance(v, (bool, np.bool_)) or getattr(v, "dtype", None) == _BOOL


def multiply(x, y, /):
    """Elementwise ``x * y`` (logical and for booleans). A boolean times a number is 0 where
    the boolean is False, also for an inf or nan number (``jnp.inf * False == 0``): XLA
    rewrites ``x * convert(p)`` into ``select(p, x, 0)``, and so do jaxlite's compiler
    (compiler/passes.py) and, eagerly, this function."""
    p = x if _bool_operand(x) else y if _bool_operand(y) else None
    x, y = promote_args("multiply", x, y)
    if x.dtype == _BOOL:
        return lax.bitwise_and(x, y)
    out = lax.mul(x, y)
    if p is not None and not _staging():
        from jaxlite._src.numpy.creation import asarray, zeros_like
        from jaxlite._src.numpy.shape_ops import broadcast_to
        out = lax.select(broadcast_to(asarray(p), out.shape), out, zeros_like(out))
    return out


def _staging():
    # whether a jaxpr is being built (jit, make_jaxpr, scan bodies ...): there the product
    # stays JAX's ``convert_element_type; mul`` and the compiler rewrites it
    from jaxlite._src.core.trace import ctx
    from jaxlite._src.interpreters.staging import StagingTrace
    t = ctx.trace
    while t is not None:
        if isinstance(t, StagingTrace):
            return True
        t = t.parent
    return False


def true_divide(x, y, /):
    """Elementwise true division; integers give floats."""
    x, y = promote_args_inexact("true_divide", x, y)
    return lax.div(x, y)


divide = true_divide


def _zero(x):
    return asarray_value(np.zeros((), x.dtype))


def _one(x):
    return asarray_value(np.ones((), x.dtype))


def power(x1, x2, /):
    """Elementwise ``x1 ** x2``: a concrete integer exponent uses integer_pow; integer bases
    use binary exponentiation; float bases take integer exponents as they are (as JAX)."""
    check_arraylike("power", x1, x2)
    n = _concrete_index(x2)
    if n is not None:
        (x1,) = promote_args_numeric("power", x1)
        return lax.integer_pow(x1, n)
    return _power(x1, x2)


def _concrete_index(x):
    """``operator.index(x)`` for a concrete (non-traced) integer/bool scalar, else None: JAX
    takes its integer_pow path for those, including 0-d integer Arrays and booleans."""
    import operator
    from jaxlite._src.core.trace import Tracer
    if isinstance(x, Tracer) or np.ndim(x) != 0:
        return None
    try:
        return operator.index(x)
    except TypeError:
        return None


def _power(x1, x2):
    from jaxlite._src.numpy.util import promote_shapes
    x1, x2 = promote_shapes("power", asarray_value(x1), asarray_value(x2))
    x1_, x2_ = promote_args_numeric("power", x1, x2)
    if _is_int(x1_) or x1_.dtype == np.bool_:
        return _pow_int_int(x1_, x2_)
    if dtypes.issubdtype(x1.dtype, np.inexact) and dtypes.issubdtype(x2.dtype, np.integer):
        return lax.pow(x1, x2)
    return lax.pow(x1_, x2_)


def _pow_int_int(x1, x2):
    # binary exponentiation over 6 bits of the exponent (more would overflow for x1 > 1)
    zero, one = _zero(x2), _one(x2)
    acc = where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
    for _ in range(6):
        acc = where(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
        x1 = lax.mul(x1, x1)
        x2 = lax.shift_right_logical(x2, one)
    return acc


pow = power


def float_power(x, y, /):
    """``x ** y`` computed in the widest float type."""
    x, y = promote_args_inexact("float_power", x, y)
    return lax.pow(x, y)


def negative(x, /):
    """Elementwise ``-x``."""
    (x,) = promote_args("negative", x)
    return lax.neg(x)


def positive(x, /):
    """Elementwise ``+x``."""
    (x,) = promote_args("positive", x)
    return x


def maximum(x, y, /):
    """Elementwise maximum (NaN-propagating)."""
    x, y = promote_args("maximum", x, y)
    return lax.max(x, y)


def minimum(x, y, /):
    """Elementwise minimum (NaN-propagating)."""
    x, y = promote_args("minimum", x, y)
    return lax.min(x, y)


@jit
def fmax(x1, x2):
    """Elementwise maximum ignoring NaNs."""
    return where(logical_or(greater(x1, x2), isnan(x2)), x1, x2)


@jit
def fmin(x1, x2):
    """Elementwise minimum ignoring NaNs."""
    return where(logical_or(less(x1, x2), isnan(x2)), x1, x2)


def absolute(x, /):
    """Elementwise absolute value."""
    (x,) = promote_args("absolute", x)
    if x.dtype == np.bool_ or dtypes.issubdtype(x.dtype, np.unsignedinteger):
        return x
    return lax.abs(x)


abs = absolute


def fabs(x, /):
    """Absolute value as a float."""
    (x,) = promote_args_inexact("fabs", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(x)


def sign(x, /):
    """Elementwise sign."""
    (x,) = promote_args("sign", x)
    return lax.sign(x)


def _inexact_unary(name, op, doc):
    def f(x, /):
        (x,) = promote_args_inexact(name, x)
        return op(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


sqrt = _inexact_unary("sqrt", lax.sqrt, "Elementwise square root.")
cbrt = _inexact_unary("cbrt", lax.cbrt, "Elementwise cube root.")
exp = _inexact_unary("exp", lax.exp, "Elementwise exponential.")
exp2 = _inexact_unary("exp2", lax.exp2, "Elementwise ``2 ** x``.")
expm1 = _inexact_unary("expm1", lax.expm1, "Elementwise ``exp(x) - 1``.")
log = _inexact_unary("log", lax.log, "Elementwise natural log.")
log1p = _inexact_unary("log1p", lax.log1p, "Elementwise ``log(1 + x)``.")
sin = _inexact_unary("sin", lax.sin, "Elementwise sine.")
cos = _inexact_unary("cos", lax.cos, "Elementwise cosine.")
tan = _inexact_unary("tan", lax.tan, "Elementwise tangent.")
arcsin = _inexact_unary("arcsin", lax.asin, "Elementwise arcsine.")
arccos = _inexact_unary("arccos", lax.acos, "Elementwise arccosine.")
arctan = _inexact_unary("arctan", lax.atan, "Elementwise arctangent.")
sinh = _inexact_unary("sinh", lax.sinh, "Elementwise hyperbolic sine.")
cosh = _inexact_unary("cosh", lax.cosh, "Elementwise hyperbolic cosine.")
tanh = _inexact_unary("tanh", lax.tanh, "Elementwise hyperbolic tangent.")
arcsinh = _inexact_unary("arcsinh", lax.asinh, "Elementwise inverse hyperbolic sine.")
arccosh = jit(_inexact_unary("arccosh", lax.acosh,
                              "Elementwise inverse hyperbolic cosine."))
arctanh = _inexact_unary("arctanh", lax.atanh, "Elementwise inverse hyperbolic tangent.")
asin, acos, atan, asinh, atanh = arcsin, arccos, arctan, arcsinh, arctanh


def acosh(x, /):
    """Elementwise inverse hyperbolic cosine (``arccosh``, whose jit it calls, as JAX's)."""
    return arccosh(x)


def log2(x, /):
    """Elementwise base-2 logarithm."""
    (x,) = promote_args_inexact("log2", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        r = lax.log(x)
        re, im = lax.real(r), lax.imag(r)
        ln2 = lax.log(asarray_value(np.asarray(2, re.dtype)))
        return lax.complex(lax.div(re, ln2), lax.div(im, ln2))
    return lax.div(lax.log(x), lax.log(asarray_value(np.asarray(2, x.dtype))))


def log10(x, /):
    """Elementwise base-10 logarithm: ``log(x) * (1 / log(10))`` with the constant rounded
    to the dtype once (JAX's composition, not a division by ``log(10)``)."""
    (x,) = promote_args_inexact("log10", x)
    one_over_log10 = np.asarray(0.4342944819032518, dtypes.finfo(x.dtype).dtype)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        r = lax.log(x)
        return lax.complex(lax.mul(lax.real(r), one_over_log10),
                           lax.mul(lax.imag(r), one_over_log10))
    return lax.mul(lax.log(x), one_over_log10)


def square(x, /):
    """Elementwise ``x * x``."""
    (x,) = promote_args_numeric("square", x)
    return lax.square(x)


def reciprocal(x, /):
    """Elementwise ``1 / x``."""
    (x,) = promote_args_inexact("reciprocal", x)
    return lax.integer_pow(x, -1)


def arctan2(x1, x2, /):
    """Elementwise arctangent of ``x1 / x2`` using the signs of both."""
    x1, x2 = promote_args_inexact("arctan2", x1, x2)
    return lax.atan2(x1, x2)


atan2 = arctan2


@jit
def hypot(x1, x2, /):
    """Elementwise ``sqrt(x1**2 + x2**2)``, scaled by the larger magnitude so it neither
    overflows nor underflows (and its derivative at (0, 0) is finite, as JAX's)."""
    x1, x2 = promote_args_inexact("hypot", x1, x2)
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                         "convert to real values first, such as by using abs(x)")
    from jaxlite._src.lax.shape import full_like
    x1, x2 = lax.abs(x1), lax.abs(x2)
    any_inf = lax.bitwise_or(isposinf(x1), isposinf(x2))
    big, small = maximum(x1, x2), minimum(x1, x2)
    at_zero = equal(big, 0)     # (JAX's order of operations: this test, then the ratio's)
    ratio = lax.div(small, where(equal(big, 0), full_like(big, 1), big))
    out = where(at_zero, big, multiply(big, lax.sqrt(add(1, lax.square(ratio)))))
    return where(any_inf, lax_const(out, np.inf), out)


def _float_unary(name, op, doc):
    def f(x, /):
        check_arraylike(name, x)
        x = asarray_value(x)
        if not dtypes.issubdtype(x.dtype, np.inexact):
            return x      # integers and bools as they are (JAX keeps a bool a bool)
        (x,) = promote_args_numeric(name, x)
        return op(x)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


floor = _float_unary("floor", lax.floor, "Elementwise floor.")
ceil = _float_unary("ceil", lax.ceil, "Elementwise ceiling.")


@jit
def trunc(x):
    """Round toward zero."""
    check_arraylike("trunc", x)
    x = asarray_value(x)
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return x
    return where(lax.lt(x, _zero(x)), lax.ceil(x), lax.floor(x))


def _complex_parts(fn, z, *args):
    """``fn`` applied to the real and imaginary parts of a complex ``z`` separately."""
    return lax.complex(fn(lax.real(z), *args), fn(lax.imag(z), *args))


@jit
def rint(x, /):
    """Round to the nearest integer, ties to even (each part of a complex number)."""
    (x,) = promote_args_inexact("rint", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _complex_parts(rint, x)
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


@partial(jit, static_argnames=('decimals',))
def round(a, decimals=0, out=None):
    """Round to ``decimals`` decimals (ties to even, as NumPy; each part of a complex
    number)."""
    check_arraylike("round", a)
    decimals = operator.index(decimals)   # (static: a concrete integer, as JAX requires)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    if asarray_value(a).dtype == np.bool_:    # JAX rounds a bool as a float, and fails there
        raise ValueError(f"data type {np.bool_} not inexact")
    (a,) = promote_args_numeric("round", a)
    dtype = a.dtype
    if not dtypes.issubdtype(dtype, np.inexact):
        if decimals < 0:
            raise NotImplementedError("integer np.round not implemented for decimals < 0")
        return a

    def round_float(x):
        if decimals == 0:
            return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)
        # (float16 is scaled in float32, as JAX)
        x = lax.convert_element_type(x, np.float32) if dtype == np.float16 else x
        f = lax_const(x, 10 ** decimals)
        r = lax.div(lax.round(lax.mul(x, f), lax.RoundingMethod.TO_NEAREST_EVEN), f)
        return lax.convert_element_type(r, dtype) if dtype == np.float16 else r
    if decimals > np.log10(dtypes.finfo(dtype).max):
        return a      # rounding beyond the precision changes nothing
    if dtypes.issubdtype(dtype, np.complexfloating):
        return lax.complex(round_float(lax.real(a)), round_float(lax.imag(a)))
    return round_float(a)


@partial(jit, static_argnames=('decimals',))
def around(a, decimals=0, out=None):
    """Alias of :func:`round` (its own jit, as JAX's)."""
    return round(a, decimals, out)


def conjugate(x, /):
    """Complex conjugate (identity for real inputs)."""
    (x,) = promote_args("conjugate", x)
    return lax.conj(x) if dtypes.issubdtype(x.dtype, np.complexfloating) else x


conj = conjugate


def real(val, /):
    """Real part."""
    (val,) = promote_args("real", val)
    return lax.real(val) if dtypes.issubdtype(val.dtype, np.complexfloating) else val


def imag(val, /):
    """Imaginary part (zeros for real inputs)."""
    (val,) = promote_args("imag", val)
    if dtypes.issubdtype(val.dtype, np.complexfloating):
        return lax.imag(val)
    from jaxlite._src.lax.shape import full_like
    return full_like(val, 0)


@partial(jit, static_argnames=('deg',))
def angle(z, deg=False):
    """Argument of complex numbers (JAX's: integers and real scalars in the default float
    dtype, not weakly typed)."""
    check_arraylike("angle", z)
    z = asarray_value(z)
    re, im = real(z), imag(z)
    dt = re.dtype
    if not dtypes.issubdtype(dt, np.inexact) or (
            dtypes.issubdtype(z.dtype, np.floating) and np.ndim(z) == 0):
        dt = dtypes.default_float_dtype()
        re = lax.convert_element_type(re, dt)
        im = lax.convert_element_type(im, dt)
    r = lax.atan2(im, re)
    return rad2deg(r) if deg else r


def deg2rad(x, /):
    """Degrees to radians."""
    (x,) = promote_args_inexact("deg2rad", x)
    return lax.mul(x, asarray_value(np.asarray(np.pi / 180, x.dtype)))


def rad2deg(x, /):
    """Radians to degrees."""
    (x,) = promote_args_inexact("rad2deg", x)
    return lax.mul(x, asarray_value(np.asarray(180 / np.pi, x.dtype)))


degrees, radians = rad2deg, deg2rad


def cumlogsumexp(operand, axis=0, reverse=False):
    """``jax.lax.cumlogsumexp``: cumulative ``log(sum(exp(x)))`` along ``axis`` (an
    associative scan of logaddexp, stable for inputs of very different magnitudes)."""
    from jaxlite._src.lax.control_flow import associative_scan
    dt = dtypes.dtype(operand)
    if not dtypes.issubdtype(dt, np.number):     # (JAX's dtype rule of cumlogsumexp_p)
        raise TypeError(f"cumlogsumexp does not accept dtype {np.dtype(dt).name}. Accepted "
                        "dtypes are subtypes of number.")
    if dtypes.issubdtype(dt, np.integer):
        # JAX accepts integers but its lowering's -inf initial value cannot be one
        raise OverflowError("cannot convert float infinity to integer")
    return associative_scan(logaddexp, operand, reverse=reverse, axis=int(axis))


@jit
def heaviside(x1, x2, /):
    """Heaviside step: 0 for x1 < 0, x2 at 0, 1 for x1 > 0, NaN for a NaN x1."""
    x1, x2 = promote_args_inexact("heaviside", x1, x2)
    zero = lax_const(x1, 0)
    return where(lax.lt(x1, zero), zero,
                 where(lax.gt(x1, zero), lax_const(x1, 1), where(lax.ne(x1, x1), x1, x2)))


@jit
def signbit(x, /):
    """True where the sign bit is set."""
    (x,) = promote_args("signbit", x)
    if dtypes.issubdtype(x.dtype, np.integer):
        return lax.lt(x, _zero(x))
    if x.dtype == np.bool_:
        return lax.ne(x, x)
    return _signbit_float(x)


def _signbit_float(x):
    # the sign bit shifted down arithmetically (0 or -1), as a bool (JAX's composition)
    info = dtypes.finfo(x.dtype)
    bits = {16: np.int16, 32: np.int32, 64: np.int64}[int(info.bits)]
    from jaxlite._src.numpy.creation import _bitcast
    shift = asarray_value(np.asarray(int(info.nexp) + int(info.nmant), bits))
    return lax.convert_element_type(lax.shift_right_arithmetic(_bitcast(x, np.dtype(bits)),
                                                               shift), np.bool_)


@jit
def copysign(x1, x2, /):
    """Magnitude of x1 with the sign of x2."""
    x1, x2 = promote_args_inexact("copysign", x1, x2)
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        raise TypeError("copysign does not support complex-valued inputs")
    return where(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


def _cmp(name, op, doc, ordered=False):
    def f(x, y, /):
        x, y = promote_args(name, x, y)
        if ordered and dtypes.issubdtype(x.dtype, np.complexfloating):
            # complex numbers order by real part, then imaginary part (as JAX's jnp)
            return lax.select(lax.eq(lax.real(x), lax.real(y)), op(lax.imag(x), lax.imag(y)),
                              op(lax.real(x), lax.real(y)))
        return op(x, y)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


equal = _cmp("equal", lax.eq, "Elementwise ``x == y``.")
not_equal = _cmp("not_equal", lax.ne, "Elementwise ``x != y``.")
less = _cmp("less", lax.lt, "Elementwise ``x < y``.", ordered=True)
less_equal = _cmp("less_equal", lax.le, "Elementwise ``x <= y``.", ordered=True)
greater = _cmp("greater", lax.gt, "Elementwise ``x > y``.", ordered=True)
greater_equal = _cmp("greater_equal", lax.ge, "Elementwise ``x >= y``.", ordered=True)


def logical_and(x, y, /):
    """Elementwise logical AND."""
    check_arraylike("logical_and", x, y)
    a, b = promote_args("logical_and", _to_bool(x), _to_bool(y))
    return lax.bitwise_and(a, b)


def logical_or(x, y, /):
    """Elementwise logical OR."""
    check_arraylike("logical_or", x, y)
    a, b = promote_args("logical_or", _to_bool(x), _to_bool(y))
    return lax.bitwise_or(a, b)


def logical_xor(x, y, /):
    """Elementwise logical XOR."""
    check_arraylike("logical_xor", x, y)
    a, b = promote_args("logical_xor", _to_bool(x), _to_bool(y))
    return lax.bitwise_xor(a, b)


def logical_not(x, /):
    """Elementwise logical NOT."""
    check_arraylike("logical_not", x)
    return lax.bitwise_not(_to_bool(x))


def isfinite(x, /):
    """True where finite."""
    (x,) = promote_args("isfinite", x)
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return lax.eq(x, x) if x.dtype == np.bool_ else lax.eq(x, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return logical_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    return lax.is_finite(x)


def isnan(x, /):
    """True where NaN."""
    (x,) = promote_args("isnan", x)
    return lax.ne(x, x)


@jit
def isinf(x, /):
    """True where +/- infinity."""
    check_arraylike("isinf", x)
    x = asarray_value(x)
    if dtypes.issubdtype(x.dtype, np.floating):
        return lax.eq(lax.abs(x), asarray_value(np.asarray(np.inf, x.dtype)))
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        re, im = lax.real(x), lax.imag(x)
        inf = asarray_value(np.asarray(np.inf, re.dtype))
        return lax.bitwise_or(lax.eq(lax.abs(re), inf), lax.eq(lax.abs(im), inf))
    from jaxlite._src.lax.shape import full_like
    return full_like(x, False, dtype=np.bool_)


def isposinf(x, /, out=None):
    """True where +infinity (False for integers; complex inputs are an
    error, as JAX)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
    (x,) = promote_args("isposinf", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    return lax.eq(x, asarray_value(np.asarray(np.inf, x.dtype))) if dtypes.issubdtype(
        x.dtype, np.floating) else lax.ne(x, x)


def isneginf(x, /, out=None):
    """True where -infinity (False for integers; complex inputs are an
    error, as JAX)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to isneginf/isposinf is not supported.")
    (x,) = promote_args("isneginf", x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("isposinf/isneginf are not well defined for complex types")
    return lax.eq(x, asarray_value(np.asarray(-np.inf, x.dtype))) if dtypes.issubdtype(
        x.dtype, np.floating) else lax.ne(x, x)


@jit
def iscomplex(x):
    """True where the imaginary part is nonzero."""
    i = imag(x)
    return lax.ne(i, _zero(i))


@jit
def isreal(x):
    """True where the imaginary part is zero."""
    i = imag(x)
    return lax.eq(i, _zero(i))


@partial(jit, static_argnames=('equal_nan',))
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise approximate equality: ``a == b``, or ``b`` finite and
    ``|a - b| <= atol + rtol * |b|``. Arrays of extended dtypes (PRNG keys) compare exactly."""
    a, b = promote_args("isclose", a, b)
    if isinstance(a.dtype, dtypes.ExtendedDType):
        return lax.eq(a, b)
    a, b = promote_args_inexact("isclose", a, b)
    dt = lax.real(a).dtype if dtypes.issubdtype(a.dtype, np.complexfloating) else a.dtype
    rtol = asarray_value(np.asarray(rtol, dt)) if not hasattr(rtol, "aval") else \
        lax.convert_element_type(rtol, dt)
    atol = asarray_value(np.asarray(atol, dt)) if not hasattr(atol, "aval") else \
        lax.convert_element_type(atol, dt)
    # (JAX's order: both_nan first, also when equal_nan is False)
    both_nan = logical_and(isnan(a), isnan(b))
    check_fin = isfinite(b)
    in_range = lax.le(lax.abs(lax.sub(a, b)), lax.add(atol, lax.mul(rtol, lax.abs(b))))
    out = logical_or(lax.eq(a, b), logical_and(check_fin, in_range))
    return logical_or(out, both_nan) if equal_nan else out


@partial(jit, static_argnames=('equal_nan',))
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if all elements are close."""
    from jaxlite._src.lax.reductions import reduce_and
    c = isclose(a, b, rtol, atol, equal_nan)
    return reduce_and(c, tuple(range(c.ndim)))


def array_equal(a1, a2, equal_nan=False):
    """True if the arrays have the same shape and elements."""
    from jaxlite._src.lax.reductions import reduce_and
    a1, a2 = asarray_value(a1), asarray_value(a2)
    if a1.shape != a2.shape:
        return asarray_value(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return reduce_and(eq, tuple(range(eq.ndim)))


def array_equiv(a1, a2):
    """True if the arrays are broadcast-compatible and equal."""
    from jaxlite._src.lax.reductions import reduce_and
    try:
        eq = equal(a1, a2)
    except (TypeError, ValueError):
        return asarray_value(False)
    return reduce_and(eq, tuple(range(eq.ndim)))


def _bitwise(name, op, doc):
    def f(x, y, /):
        x, y = promote_args(name, x, y)
        if dtypes.issubdtype(x.dtype, np.inexact):
            raise TypeError(f"{name} is only defined for integer and boolean types, "
                            f"got {x.dtype.name}")
        return op(x, y)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


bitwise_and = _bitwise("bitwise_and", lax.bitwise_and, "Elementwise bitwise AND.")
bitwise_or = _bitwise("bitwise_or", lax.bitwise_or, "Elementwise bitwise OR.")
bitwise_xor = _bitwise("bitwise_xor", lax.bitwise_xor, "Elementwise bitwise XOR.")


def left_shift(x1, x2, /):
    """Elementwise left shift (booleans shift as int32, as JAX)."""
    x1, x2 = promote_args_numeric("left_shift", x1, x2)
    return lax.shift_left(x1, x2)


def right_shift(x1, x2, /):
    """Elementwise right shift (arithmetic for signed types; booleans shift as int32)."""
    x1, x2 = promote_args_numeric("right_shift", x1, x2)
    if dtypes.issubdtype(x1.dtype, np.unsignedinteger):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def invert(x, /):
    """Elementwise bitwise NOT."""
    (x,) = promote_args("invert", x)
    return lax.bitwise_not(x)


bitwise_not = bitwise_invert = invert


@jit
def bitwise_count(x, /):
    """Number of set bits in the absolute value of each element."""
    (x,) = promote_args("bitwise_count", x)
    return lax.convert_element_type(lax.population_count(absolute(x)), np.uint8)


@jit
def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """Clip values to ``[min, max]`` (either may be None)."""
    arr = arr if arr is not None else a
    min = min if min is not None else a_min
    max = max if max is not None else a_max
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr)
    if any(t is not None and dtypes.issubdtype(dtypes.dtype(t), np.complexfloating)
           for t in (arr, min, max)):
        raise ValueError(
            "Clip received a complex value either through the input or the min/max "
            "keywords. Complex values have no ordering and cannot be clipped. Please convert "
            "to a real value or array by taking the real or imaginary components via "
            "jax.numpy.real/imag respectively.")
    out = asarray_value(arr)
    if min is not None:
        out = maximum(min, out)
    if max is not None:
        out = minimum(max, out)
    return out


@jit
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """Replace NaN and infinities with finite numbers."""
    (x,) = promote_args("nan_to_num", x)
    if not dtypes.issubdtype(x.dtype, np.inexact):
        return x
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return lax.complex(nan_to_num(lax.real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(lax.imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = dtypes.finfo(x.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    from jaxlite._src.numpy.creation import asarray
    # (the replacement values are traced arguments of the jit: asarray converts them)
    out = where(isnan(x), asarray(nan, dtype=x.dtype), x)
    out = where(isposinf(out), asarray(posinf, dtype=x.dtype), out)
    return where(isneginf(out), asarray(neginf, dtype=x.dtype), out)


def _gcd_cond(xs):
    b = not_equal(xs[1], 0)          # (jnp.any of a bool array: one reduce_or)
    return lax_red.reduce_or(b, tuple(range(np.ndim(b))))


def _gcd_body(xs):
    a, b = xs
    a, b = (where(not_equal(b, 0), b, a),
            where(not_equal(b, 0), lax.rem(a, b), lax_const(b, 0)))
    return where(less(a, b), b, a), where(less(a, b), a, b)


@jit
def gcd(x1, x2):
    """Elementwise greatest common divisor (integers): Euclid's algorithm in a while loop
    over all elements, as JAX."""
    from jaxlite._src.lax.control_flow import while_loop
    from jaxlite._src.numpy.shape_ops import broadcast_arrays
    from jaxlite._src.numpy.util import promote_dtypes
    check_arraylike("gcd", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if not dtypes.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = broadcast_arrays(x1, x2)
    g, _ = while_loop(_gcd_cond, _gcd_body, (absolute(x1), absolute(x2)))
    return g


@jit
def lcm(x1, x2):
    """Elementwise least common multiple (integers)."""
    from jaxlite._src.numpy.util import promote_dtypes
    check_arraylike("lcm", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    x1, x2 = absolute(x1), absolute(x2)
    if not dtypes.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(x1, x2)
    return where(equal(d, 0), lax_const(d, 0), multiply(x1, floor_divide(x2, d)))
