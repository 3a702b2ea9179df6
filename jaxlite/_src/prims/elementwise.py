"""Elementwise primitives: arithmetic, transcendental functions, comparisons, logic, bitwise
operations and dtype conversion. Each is one class; most take a line or two."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.prims.base import (BinaryElementwise, Comparison, UnaryElementwise,
                                      check_dtype_kind)

# ----------------------------------------------------------------------------- arithmetic


class Add(BinaryElementwise):
    name, np_fn, kind = "add", np.add, "any"


class Sub(BinaryElementwise):
    name, np_fn, kind = "sub", np.subtract, "num"


class Mul(BinaryElementwise):
    name, np_fn, kind = "mul", np.multiply, "any"


class Div(BinaryElementwise):
    """Division; integer division rounds toward zero as in C (lax.div)."""
    name, kind = "div", "num"

    def impl(self, x, y):
        if x.dtype.kind in "iu":
            with np.errstate(divide="ignore", invalid="ignore"):
                q = np.trunc(np.true_divide(x, y))
            q = np.where(y == 0, -1 if x.dtype.kind == "i" else np.iinfo(x.dtype).max, q)
            return np.asarray(q).astype(x.dtype)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.true_divide(x, y)

    def lower_py(self, ctx, ins):
        return None


class Rem(BinaryElementwise):
    """Remainder with the sign of the dividend (C fmod semantics, lax.rem)."""
    name, kind = "rem", "num"

    def impl(self, x, y):
        with np.errstate(divide="ignore", invalid="ignore"):
            if x.dtype.kind in "iu":
                safe = np.where(y == 0, 1, y)
                return np.asarray(np.where(y == 0, x, np.fmod(x, safe))).astype(x.dtype)
            return np.fmod(x, y)


class Pow(BinaryElementwise):
    name, np_fn, kind = "pow", np.power, "inexact"


class Max(BinaryElementwise):
    name, np_fn, kind = "max", np.maximum, "any"


class Min(BinaryElementwise):
    name, np_fn, kind = "min", np.minimum, "any"


class Atan2(BinaryElementwise):
    name, np_fn, kind = "atan2", np.arctan2, "float"


class Nextafter(BinaryElementwise):
    name, np_fn, kind = "nextafter", np.nextafter, "float"
    jvp = NOT_DIFFERENTIABLE


class Complex(BinaryElementwise):
    """Build a complex number from real and imaginary parts (lax.complex)."""
    name, kind = "complex", "float"

    def impl(self, x, y):
        dt = np.complex128 if x.dtype == np.float64 else np.complex64
        return np.asarray(x + 1j * np.asarray(y, dt), dt) if np.ndim(x) or np.ndim(y) else \
            dt(x + 1j * y)

    def abstract_eval(self, x, y):
        out = super().abstract_eval(x, y)
        return out.update(dtype=np.complex128 if x.dtype == np.float64 else np.complex64)


# ----------------------------------------------------------------------------- unary


def _unary(name, fn, kind="inexact", cls_name=None):
    cls = type(cls_name or name.title().replace("_", ""), (UnaryElementwise,),
               {"name": name, "np_fn": staticmethod(fn) if not isinstance(fn, np.ufunc)
                else fn, "kind": kind, "__doc__": f"Elementwise {name} (lax.{name})."})
    return cls()


def _sign(x):
    if x.dtype.kind == "c":
        a = np.abs(x)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(a == 0, 0, x / np.where(a == 0, 1, a)).astype(x.dtype)
    return np.sign(x)


def _abs(x):
    r = np.abs(x)
    return r


def _rsqrt(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.asarray(1 / np.sqrt(x), x.dtype) if np.ndim(x) else x.dtype.type(1 / np.sqrt(x))


def _logistic(x):
    with np.errstate(over="ignore"):
        return np.asarray(1 / (1 + np.exp(-x)), x.dtype) if np.ndim(x) else \
            x.dtype.type(1 / (1 + np.exp(-x)))


def _round_half_even(x):
    return np.round(x)


def _round_away(x):
    return np.asarray(np.sign(x) * np.floor(np.abs(x) + x.dtype.type(0.5)), x.dtype) \
        if np.ndim(x) else x.dtype.type(np.sign(x) * np.floor(np.abs(x) + 0.5))


def _cbrt(x):
    return np.cbrt(x)


def _is_finite(x):
    return np.isfinite(x)


def _population_count(x):
    return np.bitwise_count(x).astype(x.dtype)


def _clz(x):
    bits = x.dtype.itemsize * 8
    u = x.astype(np.dtype(f"u{x.dtype.itemsize}"))
    out = np.full(np.shape(u), bits, dtype=np.int64)
    v = np.asarray(u).astype(np.uint64)
    nz = v != 0
    if np.any(nz):
        out = np.where(nz, bits - (np.floor(np.log2(np.where(nz, v, 1).astype(np.float64)))
                                   .astype(np.int64) + 1), out)
    return np.asarray(out, x.dtype)


neg_p = _unary("neg", np.negative, "num")
sign_p = _unary("sign", _sign, "num")
floor_p = _unary("floor", np.floor, "float")
ceil_p = _unary("ceil", np.ceil, "float")
is_finite_p = _unary("is_finite", _is_finite, "float", "IsFinite")
exp_p = _unary("exp", np.exp)
exp2_p = _unary("exp2", np.exp2)
log_p = _unary("log", np.log)
expm1_p = _unary("expm1", np.expm1)
log1p_p = _unary("log1p", np.log1p)
tanh_p = _unary("tanh", np.tanh)
logistic_p = _unary("logistic", _logistic)
sin_p = _unary("sin", np.sin)
cos_p = _unary("cos", np.cos)
tan_p = _unary("tan", np.tan)
asin_p = _unary("asin", np.arcsin)
acos_p = _unary("acos", np.arccos)
atan_p = _unary("atan", np.arctan)
sinh_p = _unary("sinh", np.sinh)
cosh_p = _unary("cosh", np.cosh)
asinh_p = _unary("asinh", np.arcsinh)
acosh_p = _unary("acosh", np.arccosh)
atanh_p = _unary("atanh", np.arctanh)
sqrt_p = _unary("sqrt", np.sqrt)
rsqrt_p = _unary("rsqrt", _rsqrt)
cbrt_p = _unary("cbrt", _cbrt, "float")
not_p = _unary("not", np.invert, "int_or_bool")
population_count_p = _unary("population_count", _population_count, "int")
clz_p = _unary("clz", _clz, "int")
square_p = _unary("square", np.square, "num")
for _p in (is_finite_p, not_p, population_count_p, clz_p, floor_p, ceil_p, sign_p):
    type(_p).jvp = NOT_DIFFERENTIABLE if _p in (is_finite_p, not_p, population_count_p,
                                                  clz_p) else None
is_finite_p.out_dtype = np.dtype(bool)


class Abs(UnaryElementwise):
    """Absolute value; complex inputs give their real-valued magnitude."""
    name, np_fn, kind = "abs", np.abs, "signed_num"

    def abstract_eval(self, x):
        out = super().abstract_eval(x)
        if x.dtype.kind == "c":
            out = out.update(dtype=np.float64 if x.dtype == np.complex128 else np.float32)
        return out


class Real(UnaryElementwise):
    name, np_fn, kind = "real", np.real, "complex"

    def abstract_eval(self, x):
        out = super().abstract_eval(x)
        return out.update(dtype=np.float64 if x.dtype == np.complex128 else np.float32)

    def lower_py(self, ctx, ins):
        return f"np.real({ins[0]})"


class Imag(Real):
    name, np_fn = "imag", np.imag

    def lower_py(self, ctx, ins):
        return f"np.imag({ins[0]})"


class Conj(UnaryElementwise):
    name, np_fn, kind = "conj", np.conjugate, "inexact"

    def impl(self, x, input_dtype=None):
        return np.conjugate(x) if x.dtype.kind == "c" else x.astype(
            np.complex128 if x.dtype == np.float64 else np.complex64)

    def abstract_eval(self, x, input_dtype=None):
        dt = x.dtype if x.dtype.kind == "c" else np.dtype(
            np.complex128 if x.dtype == np.float64 else np.complex64)
        return ShapedArray(x.shape, dt, x.weak_type)

    def lower_py(self, ctx, ins, input_dtype=None):
        return None


class Round(UnaryElementwise):
    """Round to integral value; ``rounding_method`` 0 rounds half away from zero, 1 to even."""
    name, kind = "round", "float"

    def impl(self, x, rounding_method=0):
        return _round_half_even(x) if int(rounding_method) == 1 else _round_away(x)

    def abstract_eval(self, x, rounding_method=0):
        return super().abstract_eval(x)

    def lower_py(self, ctx, ins, rounding_method=0):
        return None


class IntegerPow(UnaryElementwise):
    """``x ** y`` for a static Python integer exponent ``y``."""
    name, kind = "integer_pow", "num"

    def impl(self, x, y):
        if y == 2:
            return x * x
        if y < 0:
            with np.errstate(divide="ignore"):
                return np.asarray(np.reciprocal(np.power(x, -y)), x.dtype)
        return np.power(x, x.dtype.type(y))

    def abstract_eval(self, x, y):
        if y < 0 and x.dtype.kind in "iu":
            raise TypeError(f"Integers cannot be raised to negative powers, got {y}")
        return super().abstract_eval(x)

    def lower_py(self, ctx, ins, y):
        if y == 2:
            return f"{ins[0]} * {ins[0]}"
        return None


# ----------------------------------------------------------------------------- comparisons

class Eq(Comparison):
    name, np_fn = "eq", np.equal


class Ne(Comparison):
    name, np_fn = "ne", np.not_equal


class Lt(Comparison):
    name, np_fn, kind = "lt", np.less, "any"


class Le(Comparison):
    name, np_fn = "le", np.less_equal


class Gt(Comparison):
    name, np_fn = "gt", np.greater


class Ge(Comparison):
    name, np_fn = "ge", np.greater_equal


# ----------------------------------------------------------------------------- logic / bits

class And(BinaryElementwise):
    name, np_fn, kind = "and", np.bitwise_and, "int_or_bool"
    jvp = NOT_DIFFERENTIABLE


class Or(BinaryElementwise):
    name, np_fn, kind = "or", np.bitwise_or, "int_or_bool"
    jvp = NOT_DIFFERENTIABLE


class Xor(BinaryElementwise):
    name, np_fn, kind = "xor", np.bitwise_xor, "int_or_bool"
    jvp = NOT_DIFFERENTIABLE


def _shift_amount_ok(x, y):
    bits = x.dtype.itemsize * 8
    return (y >= 0) & (y < bits)


class ShiftLeft(BinaryElementwise):
    name, kind = "shift_left", "int"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, y):
        ok = _shift_amount_ok(x, y)
        return np.asarray(np.where(ok, np.left_shift(x, np.where(ok, y, 0)), 0), x.dtype)


class ShiftRightLogical(BinaryElementwise):
    name, kind = "shift_right_logical", "int"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, y):
        ok = _shift_amount_ok(x, y)
        u = np.dtype(f"u{x.dtype.itemsize}")
        r = np.right_shift(x.astype(u), np.where(ok, y, 0).astype(u))
        return np.asarray(np.where(ok, r, 0), u).astype(x.dtype)


class ShiftRightArithmetic(BinaryElementwise):
    name, kind = "shift_right_arithmetic", "int"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, y):
        bits = x.dtype.itemsize * 8
        return np.asarray(np.right_shift(x, np.clip(y, 0, bits - 1)), x.dtype)


# ----------------------------------------------------------------------------- conversion

class ConvertElementType(Primitive):
    """Cast to ``new_dtype``; ``weak_type`` sets the weak type of the result."""
    name = "convert_element_type"
    weak_rule = "param"
    hidden_params = ("sharding",)

    def impl(self, x, new_dtype, weak_type=False, sharding=None):
        if x.dtype == new_dtype:
            return x
        if x.dtype.kind == "c" and new_dtype.kind != "c":
            x = np.real(x)
        if x.dtype.kind == "f" and new_dtype.kind in "iu":
            info = np.iinfo(new_dtype)
            with np.errstate(invalid="ignore"):
                x = np.where(np.isnan(x), 0, np.clip(x, info.min, info.max))
        with np.errstate(invalid="ignore", over="ignore"):
            return np.asarray(x).astype(new_dtype) if np.ndim(x) else new_dtype.type(x)

    def abstract_eval(self, x, new_dtype, weak_type=False, sharding=None):
        return ShapedArray(x.shape, new_dtype, weak_type)

    def lower_py(self, ctx, ins, new_dtype, weak_type=False, sharding=None):
        return None


convert_element_type_p = ConvertElementType()


class Select(Primitive):
    """``select_n(which, *cases)``: pick elementwise from ``cases`` by the bool/int ``which``."""
    name = "select_n"

    def impl(self, which, *cases):
        if len(cases) == 1:
            return cases[0]
        if which.dtype == np.bool_:
            return np.where(which, cases[1], cases[0])
        return np.choose(which, cases)

    def abstract_eval(self, which, *cases):
        if not cases:
            raise TypeError("select_n called with no cases")
        if which.dtype != np.bool_ and which.dtype.kind not in "iu":
            raise TypeError("select_n `which` must be boolean or integer type")
        if which.dtype == np.bool_ and len(cases) > 2:
            raise TypeError("select_n with boolean `which` cannot have > 2 cases")
        dt = cases[0].dtype
        for c in cases[1:]:
            if c.shape != cases[0].shape or c.dtype != dt:
                raise TypeError("select_n cases must have the same shapes and dtypes, got "
                                f"{', '.join(c.str_short() for c in cases)}.")
        if which.shape and which.shape != cases[0].shape:
            raise TypeError("select_n `which` must be scalar or have the same shape as cases, "
                            f"got `which` shape {which.shape} but case shape "
                            f"{cases[0].shape}.")
        return ShapedArray(cases[0].shape, dt, self.out_weak((which,) + cases, {}))

    def lower_py(self, ctx, ins):
        if len(ins) == 3:
            return f"np.where({ins[0]}, {ins[2]}, {ins[1]})"
        return None


select_n_p = Select()
# select_n's weak type follows its cases, not the predicate.
select_n_p.weak_rule = lambda flags: all(flags[1:])


class Clamp(Primitive):
    """``clamp(lo, x, hi)``: elementwise min(max(x, lo), hi)."""
    name = "clamp"

    def impl(self, lo, x, hi):
        return np.asarray(np.minimum(np.maximum(x, lo), hi), x.dtype) if np.ndim(x) else \
            x.dtype.type(min(max(x, lo), hi))

    def abstract_eval(self, lo, x, hi):
        for a in (lo, hi):
            if a.dtype != x.dtype:
                raise TypeError("lax.clamp requires arguments to have the same dtypes, got "
                                f"{lo.dtype.name}, {x.dtype.name}, {hi.dtype.name}.")
            if a.shape and a.shape != x.shape:
                raise TypeError(f"clamp requires min.shape == operand.shape or "
                                f"min.shape == (), got {a.shape}.")
        return ShapedArray(x.shape, x.dtype, self.out_weak((lo, x, hi), {}))


clamp_p = Clamp()
clamp_p.weak_rule = lambda flags: flags[1]

class BitcastConvertType(Primitive):
    """Reinterpret the bits of each element as ``new_dtype`` (same item size)."""
    name = "bitcast_convert_type"
    weak_rule = "never"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, new_dtype):
        return np.asarray(x).view(new_dtype)

    def abstract_eval(self, x, new_dtype):
        if x.dtype.itemsize != new_dtype.itemsize:
            raise TypeError("bitcast_convert_type between types of different widths is only "
                            "supported with a trailing dimension; got "
                            f"{x.dtype.name} -> {new_dtype.name}")
        return ShapedArray(x.shape, new_dtype, False)


bitcast_convert_type_p = BitcastConvertType()
add_p, sub_p, mul_p, div_p, rem_p, pow_p = Add(), Sub(), Mul(), Div(), Rem(), Pow()
max_p, min_p, atan2_p, nextafter_p, complex_p = Max(), Min(), Atan2(), Nextafter(), Complex()
abs_p, real_p, imag_p, conj_p, round_p = Abs(), Real(), Imag(), Conj(), Round()
integer_pow_p = IntegerPow()
eq_p, ne_p, lt_p, le_p, gt_p, ge_p = Eq(), Ne(), Lt(), Le(), Gt(), Ge()
and_p, or_p, xor_p = And(), Or(), Xor()
shift_left_p, shift_right_logical_p = ShiftLeft(), ShiftRightLogical()
shift_right_arithmetic_p = ShiftRightArithmetic()

__all__ = [n for n in list(globals()) if n.endswith("_p")]
_ = (dtypes, check_dtype_kind)
