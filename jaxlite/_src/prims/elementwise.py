"""Elementwise primitives: arithmetic and transcendental functions (comparisons, logic and
bitwise operations are in compare_bits.py, complex numbers and their parts in
complex_parts.py, dtype conversion and selection in conversion.py). Each is one class;
most take a line or two."""
from __future__ import annotations

import numpy as np

from jaxlite._src.prims import taylor
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, aval_nbytes
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims import numba_exprs as nx, xla_simplify
from jaxlite._src.prims.xla_kernels import xla_class
from jaxlite._src.prims.base import (BinaryElementwise, UnaryElementwise,
                                      broadcast_batcher,
                                      broadcast_shapes_or_scalar, check_dtype_kind)

# ----------------------------------------------------------------------------- arithmetic


def _bshape(x, y):
    """The result shape of a binary op (rank-0 operands and size-1 dims broadcast)."""
    xs, ys = tuple(u.aval(x).shape), tuple(u.aval(y).shape)
    if not xs or not ys or xs == ys:
        return xs or ys
    return tuple(np.broadcast_shapes(xs, ys))


def _lin_binary_transpose(ct, x, y, sign_y):
    if u.is_zero(ct):
        return [None, None]
    cx = u.unbroadcast(ct, u.aval(x)) if u.is_undefined(x) else None
    cy = None
    if u.is_undefined(y):
        cy = u.unbroadcast(ct if sign_y > 0 else u.neg(ct), u.aval(y))
    return [cx, cy]


class Add(BinaryElementwise):
    name, np_fn, kind = "add", np.add, "num"
    hlo_op = "add"
    adds = 1
    commutative = True     # (XLA's simplifier sees a constant operand on the right)
    simplify = xla_simplify.add
    numba_expr = nx.infix("+")

    def jvp(self, primals, tangents):
        x, y = primals
        tx, ty = tangents
        shape = _bshape(x, y)
        if u.is_zero(tx):
            return self.bind(x, y), u.bcast(ty, shape)
        if u.is_zero(ty):
            return self.bind(x, y), u.bcast(tx, shape)
        return self.bind(x, y), self.bind(tx, ty)

    def transpose(self, ct, x, y):
        return _lin_binary_transpose(ct, x, y, 1)


class AddAny(BinaryElementwise):
    """Sum of two tangents or cotangents (JAX's ``add_any``, emitted by autodiff)."""
    name, np_fn, kind = "add_any", np.add, "any"
    numba_expr = nx.infix("+")
    hlo_op = "add"
    adds = 1

    def jvp(self, primals, tangents):
        return Add.jvp(self, primals, tangents)

    def transpose(self, ct, x, y):
        return _lin_binary_transpose(ct, x, y, 1)


class Sub(BinaryElementwise):
    name, np_fn, kind = "sub", np.subtract, "num"
    hlo_op = "subtract"
    adds = -1
    simplify = xla_simplify.subtract
    numba_expr = nx.infix("-")

    def jvp(self, primals, tangents):
        x, y = primals
        tx, ty = tangents
        shape = _bshape(x, y)
        if u.is_zero(tx):
            return self.bind(x, y), u.bcast(u.neg(ty), shape)
        if u.is_zero(ty):
            return self.bind(x, y), u.bcast(tx, shape)
        return self.bind(x, y), self.bind(tx, ty)

    def transpose(self, ct, x, y):
        return _lin_binary_transpose(ct, x, y, -1)


class Mul(BinaryElementwise):
    name, np_fn, kind = "mul", np.multiply, "num"
    hlo_op = "multiply"
    commutative = True
    simplify = xla_simplify.multiply
    numba_expr = nx.infix("*")
    selects_by_bool_factor = True   # (XLA's simplifier: passes.bool_products)

    @staticmethod
    def product_operands(eqn):
        return eqn.invars

    def jvp(self, primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = self.bind(x, y)
        a = None if u.is_zero(tx) else self.bind(tx, y)
        b = None if u.is_zero(ty) else self.bind(x, ty)
        t = a if b is None else b if a is None else u.add_any(a, b)
        return out, u.bcast(t, _bshape(x, y))

    def transpose(self, ct, x, y):
        if u.is_zero(ct):
            return [None, None]
        if u.is_undefined(x) and u.is_undefined(y):
            raise ValueError("mul is not linear in both operands at once")
        if u.is_undefined(x):
            return [u.unbroadcast(self.bind(ct, y), u.aval(x)), None]
        return [None, u.unbroadcast(self.bind(x, ct), u.aval(y))]


_RECIPROCAL = (np.dtype(np.float32), np.dtype(np.float64))


class Div(BinaryElementwise):
    """Division; integer division rounds toward zero as in C (lax.div)."""
    name, kind = "div", "num"
    hlo_op = "divide"
    simplify = xla_simplify.divide
    numba_expr = nx.divide

    def jvp(self, primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = self.bind(x, y)
        a = None if u.is_zero(tx) else self.bind(tx, y)
        # JAX's rule: -ty * x * y**-2 (the staged backward pass needs only y**-2 and x)
        b = None if u.is_zero(ty) else u.mul(u.mul(u.neg(ty), x),
                                              integer_pow_p.bind(y, y=-2))
        t = a if b is None else b if a is None else u.add_any(a, b)
        return out, u.bcast(t, _bshape(x, y))

    def transpose(self, ct, x, y):
        if u.is_zero(ct):
            return [None, None]
        if u.is_undefined(y):
            raise ValueError("div is linear only in its numerator")
        return [u.unbroadcast(self.bind(ct, y), u.aval(x)), None]

    def impl(self, x, y):
        if x.dtype.kind in "iu":
            with np.errstate(divide="ignore", invalid="ignore"):
                q = np.trunc(np.true_divide(x, y))
            q = np.where(y == 0, -1 if x.dtype.kind == "i" else np.iinfo(x.dtype).max, q)
            return np.asarray(q).astype(x.dtype)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if x.dtype in _RECIPROCAL and np.shape(y) != np.shape(x) and \
                    np.shape(y) != np.broadcast_shapes(np.shape(x), np.shape(y)):
                # a broadcast divisor: XLA multiplies by its reciprocal (one rounding more)
                return np.multiply(x, np.true_divide(x.dtype.type(1), y))
            return np.true_divide(x, y)

    def lower_py(self, ctx, ins):
        return None

    def batch(self, size, args, dims, **params):
        """vmap's rule (``broadcast_batcher``: an unbatched divisor stays unbroadcast, so
        XLA's multiplication by its reciprocal applies, as in JAX's vmap); over the devices
        of a pmap/shard_map's batched form (``BatchTrace.per_device``) a device dividing by
        a divisor of its own result's shape (one rounding) gets that divisor broadcast over
        the devices too, so the division stays one rounding."""
        from jaxlite._src.prims.batch_util import per_device_batching
        x, y = args
        dx, dy = dims
        if per_device_batching() and dx is not None and dy is None:
            xa, ya = u.aval(x), u.aval(y)
            own = xa.shape[:dx] + xa.shape[dx + 1:]
            if xa.dtype in _RECIPROCAL and \
                    tuple(np.broadcast_shapes(own, ya.shape)) == tuple(ya.shape):
                from jaxlite._src.prims.shape import broadcast_in_dim_p
                y = broadcast_in_dim_p.bind(
                    y, shape=(size,) + tuple(ya.shape),
                    broadcast_dimensions=tuple(range(1, 1 + len(ya.shape))), sharding=None)
                dy = 0
        return broadcast_batcher(self, size, [x, y], [dx, dy], params)

    @staticmethod
    def reciprocal_divisor(eqn):
        """Whether ``eqn`` divides by a divisor broadcast over the result (rank 0, or
        size-1 dimensions): XLA's simplifier rewrites ``a / broadcast(b)`` into ``a *
        broadcast(1 / b)`` (``impl`` and tier 2's loops do as well)."""
        return eqn.invars[1].aval.shape != eqn.outvars[0].aval.shape and \
            eqn.outvars[0].aval.dtype in _RECIPROCAL


class Rem(BinaryElementwise):
    """Remainder with the sign of the dividend (C fmod semantics, lax.rem)."""
    name, kind = "rem", "real_num"
    hlo_op = "remainder"

    def jvp(self, primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = self.bind(x, y)
        t = None if u.is_zero(tx) else u.bcast(tx, _bshape(x, y))
        if not u.is_zero(ty):
            q = div_p.bind(x, y)
            trunc = u.mul(sign_p.bind(q), floor_p.bind(abs_p.bind(q)))
            b = u.mul(u.neg(ty), trunc)
            t = b if t is None else u.add_any(t, b)
        return out, t

    def impl(self, x, y):
        with np.errstate(divide="ignore", invalid="ignore"):
            if x.dtype.kind in "iu":
                safe = np.where(y == 0, 1, y)
                return np.asarray(np.where(y == 0, x, np.fmod(x, safe))).astype(x.dtype)
            return np.fmod(x, y)

    def numba(self, code, eqn, ins):
        """Tier 2's loop code (``compiler/numba_bodies.py``): floats through NumPy's fmod
        loop; int32 elements as C's truncated remainder (computed in int64), the dividend
        where the divisor is 0 (as ``impl``)."""
        dt = eqn.invars[0].aval.dtype
        if dt.kind == "f":
            return [code.ufunc(eqn, ins, ufunc=np.fmod)]
        if dt != np.int32:
            return None
        return [code.elementwise(eqn, ins, expr=lambda v: (
            f"np.int32({v[0]} if {v[1]} == 0 else (abs(np.int64({v[0]})) % "
            f"abs(np.int64({v[1]}))) * (1 if {v[0]} >= 0 else -1))"))]


class Pow(BinaryElementwise):
    """``x ** y``: x inexact; y of x's dtype or any integer dtype (as lax.pow)."""
    name, kind = "pow", "inexact"
    hlo_op = "power"
    simplify = xla_simplify.power

    def impl(self, x, y):
        if y.dtype != x.dtype:   # an integer exponent: computed in x's dtype (as XLA)
            y = y.astype(x.dtype)
        return np.power(x, y)

    def abstract_eval(self, x, y):
        if x.dtype != y.dtype and not (dtypes.issubdtype(x.dtype, np.inexact)
                                       and dtypes.issubdtype(y.dtype, np.integer)):
            raise TypeError("the first argument to pow must have an inexact dtype (float or "
                            "complex), and the second argument must have an inexact or "
                            "integer dtype, and two inexact dtypes must match, but got "
                            f"{x.dtype} and {y.dtype} respectively.")
        check_dtype_kind(self.name, self.kind, x.dtype)
        shape = broadcast_shapes_or_scalar(self.name, [x.shape, y.shape])
        return ShapedArray(shape, x.dtype, self.out_weak((x, y), {}))

    def lower_py(self, ctx, ins):
        return None

    def lower_stmts(self, ctx, ins, outs, eqn):
        """Exponents of the base's dtype: ``impl``'s ``np.power`` call written inline (no
        dtype test and method call per run); integer exponents go through ``impl``."""
        x, y = (a.aval.dtype for a in eqn.invars)
        if x != y:
            return None
        return [f"{outs[0]} = np.power({ins[0]}, {ins[1]})"]

    def numba(self, code, eqn, ins):
        """Tier 2's loop code (``compiler/numba_bodies.py``): NumPy's power loop, for
        exponents of the base's dtype."""
        x, y = (a.aval.dtype for a in eqn.invars)
        return [code.ufunc(eqn, ins, ufunc=np.power)] if x == y else None

    def jvp(self, primals, tangents):
        # JAX's rules: d/dx = y x^(y-1) (0 where an integer y is 0); d/dy = log(x) x^y
        x, y = primals
        tx, ty = tangents
        out = self.bind(x, y)
        t = None
        if not u.is_zero(tx):
            t = u.mul(tx, _pow_dx(self, x, y))
        if not u.is_zero(ty):
            safe_x = u.select(u.eq(x, u.const(x, 0)), u.ones(x), x)
            b = u.mul(ty, u.mul(log_p.bind(safe_x), out))
            t = b if t is None else u.add_any(t, b)
        return out, u.bcast(t, _bshape(x, y))


def _pow_dx(prim, x, y):
    # JAX casts both operands to their (strong) result type first
    x, y = [v if not u.aval(v).weak_type else convert_element_type_p.bind(
        v, new_dtype=u.aval(v).dtype, weak_type=False, sharding=None) for v in (x, y)]
    ydt = u.aval(y).dtype
    if not dtypes.issubdtype(ydt, np.integer):
        return u.mul(y, prim.bind(x, u.sub(y, u.const(y, 1))))
    xs, ys = tuple(u.aval(x).shape), tuple(u.aval(y).shape)
    yf = u.convert(y, u.aval(x).dtype)
    if xs != ys:
        shape = _bshape(x, y)
        x, yf = u.bcast(x, shape), u.bcast(yf, shape)
    zero = u.eq(yf, u.const(yf, 0))
    safe_y = u.select(zero, u.ones(yf), yf)
    return u.select(zero, u.zeros(u.aval(yf)), u.mul(safe_y, prim.bind(x, u.sub(yf, u.ones(yf)))))


def _balanced_eq(x, z, y):
    """1 where x == z, halved where y == z too: how a tie shares the derivative (as JAX)."""
    shape = u.aval(z).shape
    num = u.select(u.bcast(u.eq(x, z), shape), u.ones(z), u.zeros(u.aval(z)))
    den_pred = u.bcast(u.eq(y, z), shape)
    twos = u.bcast(u.const(z, 2), shape)
    return u.div(num, u.select(den_pred, twos, u.ones(z)))


class _Chooser(BinaryElementwise):
    def jvp(self, primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = self.bind(x, y)
        t = None
        if not u.is_zero(tx):
            t = u.mul(u.bcast(tx, u.aval(out).shape), _balanced_eq(x, out, y))
        if not u.is_zero(ty):
            b = u.mul(u.bcast(ty, u.aval(out).shape), _balanced_eq(y, out, x))
            t = b if t is None else u.add_any(t, b)
        return out, t


class Max(_Chooser):
    """Elementwise maximum: NumPy's for real dtypes; complex operands compare as XLA's
    lowering in JAX (``mlir._minmax_hlo``): by the real parts, by the imaginary parts where
    the real parts are equal, and ``y`` wherever that comparison is false (a NaN part
    included), so a NaN is returned only when it is in ``y`` or both."""
    name, np_fn, kind = "max", np.maximum, "any"
    hlo_op = "maximum"
    _cmp = staticmethod(np.greater)

    def impl(self, x, y):
        if x.dtype.kind != "c":
            return self.np_fn(x, y)
        return self.complex_choose(x, y)

    def complex_choose(self, x, y):
        """JAX's choice between complex ``x`` and ``y`` (see the class)."""
        rx, ry = np.real(x), np.real(y)
        which = np.where(rx == ry, self._cmp(np.imag(x), np.imag(y)), self._cmp(rx, ry))
        return np.asarray(np.where(which, x, y), x.dtype)

    def _complex(self, eqn):
        return any(a.aval.dtype.kind == "c" for a in eqn.invars)

    def lower_stmts(self, ctx, ins, outs, eqn):
        """Tier 1: complex operands call ``complex_choose``; real ones keep ``lower_py``'s
        NumPy ufunc (None here)."""
        if not self._complex(eqn):
            return None
        fn = ctx.bind_global(self.complex_choose, self.name + "_complex_")
        return [f"{outs[0]} = {fn}({', '.join(ins)})"]

    def accepts_out(self, eqn):
        """Whether tier 1 may hand the call an ``out=`` buffer: the real dtypes' ufunc."""
        return not self._complex(eqn)

    def ufunc_for(self, eqn):
        """The NumPy ufunc computing ``eqn`` (real dtypes), or None (complex operands)."""
        return None if self._complex(eqn) or eqn.params else self.np_fn


class Min(Max):
    """Elementwise minimum (complex operands: as ``Max``, with "less than")."""
    name, np_fn = "min", np.minimum
    hlo_op = "minimum"
    _cmp = staticmethod(np.less)


class Atan2(BinaryElementwise):
    """``atan2(x, y)``, the angle of ``(y, x)``; complex operands (accepted, as JAX) use
    XLA's formula ``-i log((y + i x) / sqrt(y^2 + x^2))``."""
    name, np_fn, kind = "atan2", np.arctan2, "inexact"
    hlo_op = "atan2"

    def impl(self, x, y):
        if x.dtype.kind != "c":
            return np.arctan2(x, y)
        with np.errstate(all="ignore"):
            r = -1j * np.log((y + 1j * x) / np.sqrt(y * y + x * x))
        return np.asarray(r, x.dtype)

    def jvp(self, primals, tangents):
        x, y = primals
        tx, ty = tangents
        out = self.bind(x, y)
        den = u.add(u.mul(x, x), u.mul(y, y))
        t = None if u.is_zero(tx) else u.mul(tx, u.div(y, den))
        if not u.is_zero(ty):
            b = u.mul(ty, u.div(u.neg(x), den))
            t = b if t is None else u.add_any(t, b)
        return out, u.bcast(t, _bshape(x, y))


class Nextafter(BinaryElementwise):
    name, np_fn, kind = "nextafter", np.nextafter, "float"

    def jvp(self, primals, tangents):
        raise NotImplementedError("Differentiation rule for 'nextafter' not implemented")


# ----------------------------------------------------------------------------- unary


def _unary(name, fn, kind="inexact", cls_name=None, tangent=None, hlo=None):
    """A unary elementwise primitive from its NumPy function and its JVP
    ``tangent(g, x, y)`` (g the input tangent, y the output), written with primitive ops."""
    cls = type(cls_name or name.title().replace("_", ""), (UnaryElementwise,),
               {"name": name, "np_fn": staticmethod(fn) if not isinstance(fn, np.ufunc)
                else fn, "kind": kind, "__doc__": f"Elementwise {name} (lax.{name}).",
                "tangent": staticmethod(tangent) if tangent is not None else None,
                "hlo_op": hlo})
    return xla_class(cls)()


def _c(x, v):
    return u.const(x, v)




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
    """Round half away from zero as XLA's round-nearest-afz: from the truncation, whose
    remainder ``x - trunc(x)`` is exact (``|x| + 0.5`` would round 0.49999997 up), with the
    sign of ``x`` kept (-0.3 and -0.0 round to -0.0)."""
    t = np.trunc(x)
    r = np.copysign(np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t), x)
    return np.asarray(r, x.dtype) if np.ndim(x) else x.dtype.type(r)


def _cbrt(x):
    return np.cbrt(x)


def _is_finite(x):
    return np.isfinite(x)


def _population_count(x):
    # the bits of the two's-complement word (NumPy counts |x| for signed integers)
    return np.bitwise_count(x.view(np.dtype(f"u{x.dtype.itemsize}"))).astype(x.dtype)


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


sign_p = _unary("sign", _sign, "num", hlo="sign")
floor_p = _unary("floor", np.floor, "float", hlo="floor")
ceil_p = _unary("ceil", np.ceil, "float", hlo="ceil")
is_finite_p = _unary("is_finite", _is_finite, "float", "IsFinite", hlo="is-finite")
exp_p = _unary("exp", np.exp, tangent=lambda g, x, y: u.mul(g, y), hlo="exponential")
exp2_p = _unary("exp2", np.exp2,
                tangent=lambda g, x, y: u.mul(log_p.bind(_c(x, 2)), u.mul(g, y)))
log_p = _unary("log", np.log, tangent=lambda g, x, y: u.div(g, x), hlo="log")
expm1_p = _unary("expm1", np.expm1, tangent=lambda g, x, y: u.mul(g, u.add(y, _c(y, 1))),
                 hlo="exponential-minus-one")
log1p_p = _unary("log1p", np.log1p, tangent=lambda g, x, y: u.div(g, u.add(x, _c(x, 1))),
                 hlo="log-plus-one")
tanh_p = _unary("tanh", np.tanh, tangent=lambda g, x, y: u.mul(
    u.add(g, u.mul(g, y)), u.sub(_c(x, 1), y)), hlo="tanh")
logistic_p = _unary("logistic", _logistic, tangent=lambda g, x, y: u.mul(
    g, u.mul(y, u.sub(_c(y, 1), y))))
sin_p = _unary("sin", np.sin, tangent=lambda g, x, y: u.mul(g, cos_p.bind(x)), hlo="sine")
cos_p = _unary("cos", np.cos, tangent=lambda g, x, y: u.neg(u.mul(g, sin_p.bind(x))), hlo="cosine")
tan_p = _unary("tan", np.tan, tangent=lambda g, x, y: u.mul(
    g, u.add(_c(x, 1), square_p.bind(y))), hlo="tan")
asin_p = _unary("asin", np.arcsin, tangent=lambda g, x, y: u.mul(
    g, rsqrt_p.bind(u.sub(_c(x, 1), square_p.bind(x)))))
acos_p = _unary("acos", np.arccos, tangent=lambda g, x, y: u.mul(
    g, u.neg(rsqrt_p.bind(u.sub(_c(x, 1), square_p.bind(x))))))
atan_p = _unary("atan", np.arctan, tangent=lambda g, x, y: u.div(
    g, u.add(_c(x, 1), square_p.bind(x))))
sinh_p = _unary("sinh", np.sinh, tangent=lambda g, x, y: u.mul(g, cosh_p.bind(x)))
cosh_p = _unary("cosh", np.cosh, tangent=lambda g, x, y: u.mul(g, sinh_p.bind(x)))
asinh_p = _unary("asinh", np.arcsinh, tangent=lambda g, x, y: u.mul(
    g, rsqrt_p.bind(u.add(square_p.bind(x), _c(x, 1)))))
acosh_p = _unary("acosh", np.arccosh, tangent=lambda g, x, y: u.mul(
    g, rsqrt_p.bind(u.mul(u.sub(x, _c(x, 1)), u.add(x, _c(x, 1))))))
atanh_p = _unary("atanh", np.arctanh, tangent=lambda g, x, y: u.mul(
    u.div(_c(x, 1), u.add(_c(x, 1), x)), u.div(g, u.sub(_c(x, 1), x))))
sqrt_p = _unary("sqrt", np.sqrt, tangent=lambda g, x, y: u.mul(g, u.div(_c(x, 0.5), y)),
                hlo="sqrt")
rsqrt_p = _unary("rsqrt", _rsqrt, tangent=lambda g, x, y: u.mul(
    g, u.mul(_c(x, -0.5), u.div(y, x))), hlo="rsqrt")
cbrt_p = _unary("cbrt", _cbrt, "float", tangent=lambda g, x, y: u.mul(
    g, u.mul(_c(x, 1 / 3), integer_pow_p.bind(y, y=-2))), hlo="cbrt")
not_p = _unary("not", np.invert, "int_or_bool", hlo="not")
population_count_p = _unary("population_count", _population_count, "int", hlo="popcnt")
clz_p = _unary("clz", _clz, "int", hlo="count-leading-zeros")
square_p = _unary("square", np.square, "num",
                  tangent=lambda g, x, y: u.mul(g, u.mul(_c(x, 2), x)))


def _square_hlo(self, b, x):
    """x * x, as XLA has no square instruction."""
    return b.op("multiply", b.out_avals[0], (x, x))


type(square_p).hlo = _square_hlo
type(square_p).product_operands = staticmethod(lambda eqn: (eqn.invars[0],) * 2)


def _logistic_hlo(self, b, x):
    """1 / (1 + exp(-x)), as JAX lowers logistic."""
    out = b.out_avals[0]
    one = b.broadcast_to(b.scalar(1, out.dtype), out.update(shape=()), out.shape)
    e = b.op("exponential", out, (b.op("negate", out, (x,)),))
    return b.op("divide", out, (one, b.op("add", out, (e, one))))


type(logistic_p).hlo = _logistic_hlo


def _logistic_cost(self, avals_in, avals_out, literals, **params):
    """The cost of JAX's lowering (``_logistic_hlo``): a broadcast of 1, then negate, exp,
    add and divide (3 flops and 1 transcendental per element)."""
    out = avals_out[0]
    n, b, s = int(np.prod(out.shape, dtype=np.int64)), aval_nbytes(out), out.dtype.itemsize
    ops = [(0, 0, [s], b)] if out.shape else []
    return ops + [(n, 0, [b], b), (0, n, [b], b), (n, 0, [b, b], b), (n, 0, [b, b], b)]


type(logistic_p).cost = _logistic_cost
type(log_p).simplify = xla_simplify.log
# tier 2's scalar numba code (bodies in numba_exprs.py)
type(sqrt_p).numba_expr = nx.float_only("np.sqrt({0})")
type(floor_p).numba_expr = nx.float_only("np.floor({0})")
type(ceil_p).numba_expr = nx.float_only("np.ceil({0})")
type(square_p).numba_expr, type(not_p).numba_expr = nx.square, nx.bool_only("not {0}")
# Piecewise-constant or non-numeric results: zero derivative (as JAX's defjvp_zero).
for _p in (is_finite_p, not_p, population_count_p, clz_p, floor_p, ceil_p, sign_p):
    type(_p).jvp = NOT_DIFFERENTIABLE


class Neg(UnaryElementwise):
    """Negation (linear)."""
    name, np_fn, kind = "neg", np.negative, "num"
    hlo_op = "negate"
    simplify = xla_simplify.negate
    numba_expr = nx.negate

    def jvp(self, primals, tangents):
        return self.bind(primals[0]), self.bind(tangents[0])

    def transpose(self, ct, x):
        return [None if u.is_zero(ct) else self.bind(ct)]


neg_p = Neg()
is_finite_p.out_dtype = np.dtype(bool)


class Abs(UnaryElementwise):
    """Absolute value; complex inputs give their real-valued magnitude."""
    name, np_fn, kind = "abs", np.abs, "signed_num"
    hlo_op = "abs"
    numba_expr = nx.float_only("abs({0})")

    def abstract_eval(self, x):
        out = super().abstract_eval(x)
        if x.dtype.kind == "c":
            out = out.update(dtype=np.float64 if x.dtype == np.complex128 else np.float32)
        return out

    def jvp(self, primals, tangents):
        (x,), (t,) = primals, tangents
        y = self.bind(x)
        if u.aval(x).dtype.kind == "c":
            # d|x| = Re(conj(x) t) / |x|  (0 where x == 0)
            safe = u.select(u.eq(y, u.const(y, 0)), u.ones(y), y)
            cy = u.convert(safe, u.aval(x).dtype)
            return y, real_p.bind(u.div(u.mul(conj_p.bind(x, input_dtype=u.aval(x).dtype), t),
                                        cy))
        return y, u.select(ge_p.bind(x, u.const(x, 0)), t, u.neg(t))


class Round(UnaryElementwise):
    """Round to integral value; ``rounding_method`` 0 rounds half away from zero, 1 to even."""
    name, kind = "round", "float"

    def impl(self, x, rounding_method=0):
        return _round_half_even(x) if int(rounding_method) == 1 else _round_away(x)

    def abstract_eval(self, x, rounding_method=0):
        return super().abstract_eval(x)

    def lower_py(self, ctx, ins, rounding_method=0):
        return None

    def hlo(self, b, x, rounding_method=0):
        op = "round-nearest-even" if int(rounding_method) == 1 else "round-nearest-afz"
        return b.op(op, b.out_avals[0], (x,))

    jvp = NOT_DIFFERENTIABLE


def by_squaring(x, n, mul):
    """``x ** n`` (``n >= 1``) by repeated squaring, XLA's order of products: the result
    gathers the powers ``x ** 2**k`` of ``n``'s set bits, lowest first (``mul(acc, base)``)."""
    acc, base = None, x
    while n:
        if n & 1:
            acc = base if acc is None else mul(acc, base)
        n >>= 1
        if n:
            base = mul(base, base)
    return acc


class IntegerPow(UnaryElementwise):
    """``x ** y`` for a static Python integer exponent ``y``: products by repeated squaring
    (a reciprocal of them for ``y < 0``), as XLA computes it, so the bits are JAX's (a
    correctly rounded ``pow`` differs from them in the last bit)."""
    name, kind = "integer_pow", "num"
    numba_expr = nx.integer_pow

    def product_operands(self, eqn):
        """The factors of the last product of ``by_squaring`` (``x ** (n - 2**h)`` and
        ``x ** 2**h``, ``2**h`` the highest power of two in n; two halves for n = 2**h)."""
        x, n = eqn.invars[0], eqn.params["y"]
        if n < 2:
            return None
        high = 1 << (n.bit_length() - 1)
        lo, hi = (high // 2, high // 2) if n == high else (n - high, high)
        return [x if k == 1 else (self, x, {"y": k}) for k in (lo, hi)]

    def ufunc_for(self, eqn):
        """The NumPy ufunc of tier 2's chunks: ``multiply`` for a square (of ``x, x``)."""
        return np.multiply if eqn.params.get("y") == 2 else None

    def ufunc_operands(self, eqn, ins):
        """The operands of ``ufunc_for``'s call: ``x, x``."""
        return [ins[0], ins[0]]

    def impl(self, x, y):
        if y == 0:
            return np.ones_like(x)
        acc = np.array(by_squaring(x, abs(y), np.multiply), x.dtype,
                       copy=True if abs(y) == 1 else None)
        if y > 0:
            return acc
        with np.errstate(divide="ignore"):
            return np.asarray(np.reciprocal(acc), x.dtype)

    def check_operands(self, vals, params):
        if params["y"] < 0 and vals[0].dtype.kind in "iu":   # (the dtype cache ignores y)
            self.abstract_eval(ShapedArray(vals[0].shape, vals[0].dtype), **params)
        super().check_operands(vals, params)

    def abstract_eval(self, x, y):
        if y < 0 and x.dtype.kind in "iu":
            raise TypeError(f"Integers cannot be raised to negative powers, got "
                            f"integer_pow({x.str_short()}, {y})")
        return super().abstract_eval(x)

    def lower_py(self, ctx, ins, y):
        if 2 <= y <= 4:     # (larger powers repeat products in one expression: impl)
            return by_squaring(ins[0], y, lambda a, b: f"({a} * {b})")
        return None

    def hlo(self, b, x, y):
        """Multiplications by repeated squaring (a reciprocal for y < 0), as JAX lowers it."""
        out = b.out_avals[0]
        if y == 0:
            return b.broadcast_to(b.scalar(1, out.dtype), out.update(shape=()), out.shape)
        if y < 0:
            one = b.broadcast_to(b.scalar(1, out.dtype), out.update(shape=()), out.shape)
        acc = by_squaring(x, abs(y), lambda p, q: b.op("multiply", out, (p, q)))
        if y < 0:
            acc = b.op("divide", out, (one, acc))
        return acc

    def jvp(self, primals, tangents, y):
        (x,), (t,) = primals, tangents
        out = self.bind(x, y=y)
        if y == 0:
            return out, u.zeros(u.aval(x))
        d = u.const(x, y) if y == 1 else u.mul(u.const(x, y), x if y == 2 else
                                               self.bind(x, y=y - 1))
        return out, u.mul(t, d)


add_p, sub_p, mul_p, div_p, rem_p, pow_p = Add(), Sub(), Mul(), Div(), Rem(), xla_class(Pow)()
add_any_p = AddAny()
max_p, min_p, atan2_p = Max(), Min(), xla_class(Atan2)()
nextafter_p = Nextafter()
abs_p, round_p = Abs(), Round()
integer_pow_p = IntegerPow()

# comparisons, logic and bits live in compare_bits.py; the elementwise namespace keeps them
from jaxlite._src.prims.compare_bits import (  # noqa: E402,F401
    eq_p, ne_p, lt_p, le_p, gt_p, ge_p, and_p, or_p, xor_p, shift_left_p,
    shift_right_logical_p, shift_right_arithmetic_p)

# complex numbers and their parts live in complex_parts.py; the elementwise namespace keeps them
from jaxlite._src.prims.complex_parts import complex_p, conj_p, imag_p, real_p

# conversion and selection live in conversion.py; the elementwise namespace keeps them
from jaxlite._src.prims.conversion import (  # noqa: E402,F401
    convert_element_type_p, select_n_p, clamp_p, bitcast_convert_type_p, where)

__all__ = [n for n in list(globals()) if n.endswith("_p")]
_ = (dtypes, check_dtype_kind)

# Taylor-mode rules (jax.experimental.jet; helpers in taylor.py)
for _p in (add_p, sub_p, neg_p, add_any_p, real_p, imag_p, conj_p, complex_p):
    _p.jet = taylor.linear(_p)
mul_p.jet = taylor.bilinear(mul_p)
div_p.jet, pow_p.jet, integer_pow_p.jet = taylor.div, taylor.pow, taylor.integer_pow
exp_p.jet, log_p.jet, logistic_p.jet, tanh_p.jet = (taylor.exp, taylor.log, taylor.logistic,
                                                    taylor.tanh)
sin_p.jet, cos_p.jet, sinh_p.jet, cosh_p.jet = taylor.sin, taylor.cos, taylor.sinh, taylor.cosh
