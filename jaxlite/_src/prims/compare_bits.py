"""Elementwise comparisons (eq/ne also of key arrays; lt/le/gt/ge of ordered operands),
logical and bitwise operations and shifts: not differentiable. Each is one class."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE
from jaxlite._src.prims import numba_exprs as nx
from jaxlite._src.prims.base import BinaryElementwise, Comparison

__all__ = ["eq_p", "ne_p", "lt_p", "le_p", "gt_p", "ge_p", "and_p", "or_p", "xor_p",
           "shift_left_p", "shift_right_logical_p", "shift_right_arithmetic_p"]


# ----------------------------------------------------------------------------- comparisons

class _KeyComparison(Comparison):
    """eq / ne, which also compare key arrays (of one key dtype), as JAX's do."""
    accepts_extended = True

    def abstract_eval(self, x, y):
        if not (dtypes.is_extended(x.dtype) or dtypes.is_extended(y.dtype)):
            return super().abstract_eval(x, y)
        if x.dtype != y.dtype:
            raise TypeError(f"{self.name} requires arguments to have the same dtypes, got "
                            f"{x.dtype}, {y.dtype}.")
        from jaxlite._src.prims.base import broadcast_shapes_or_scalar
        return ShapedArray(broadcast_shapes_or_scalar(self.name, [x.shape, y.shape]),
                           np.dtype(bool))

    def physical_extended(self, in_avals, out_avals, x, y):
        """On key data: compare the words, then all (eq) / any (ne) over the key's words."""
        from jaxlite._src.prims import reductions, shape as sp
        out = tuple(out_avals[0].shape)
        trail = tuple(in_avals[0].dtype.physical_shape)
        full = out + trail

        def bcast(v, a):
            dims = tuple(range(len(out) - len(a.shape), len(full)))
            return sp.broadcast_in_dim_p.bind(v, shape=full, broadcast_dimensions=dims,
                                              sharding=None)
        words = self.bind(bcast(x, in_avals[0]), bcast(y, in_avals[1]))
        red = reductions.reduce_and_p if self.name == "eq" else reductions.reduce_or_p
        return red.bind(words, axes=tuple(range(len(out), len(full))))


class Eq(_KeyComparison):
    name, np_fn = "eq", np.equal
    hlo_attrs = ("direction=EQ",)
    numba_expr = nx.infix("==")


class Ne(_KeyComparison):
    name, np_fn = "ne", np.not_equal
    hlo_attrs = ("direction=NE",)
    numba_expr = nx.infix("!=")


class _OrderComparison(Comparison):
    """lt / le / gt / ge: of ordered operands only (complex ones raise JAX's TypeError)."""
    kind = "ordered"


class Lt(_OrderComparison):
    name, np_fn = "lt", np.less
    hlo_attrs = ("direction=LT",)
    numba_expr = nx.infix("<")


class Le(_OrderComparison):
    name, np_fn = "le", np.less_equal
    hlo_attrs = ("direction=LE",)
    numba_expr = nx.infix("<=")


class Gt(_OrderComparison):
    name, np_fn = "gt", np.greater
    hlo_attrs = ("direction=GT",)
    numba_expr = nx.infix(">")


class Ge(_OrderComparison):
    name, np_fn = "ge", np.greater_equal
    hlo_attrs = ("direction=GE",)
    numba_expr = nx.infix(">=")


# ----------------------------------------------------------------------------- logic / bits

class And(BinaryElementwise):
    name, np_fn, kind = "and", np.bitwise_and, "int_or_bool"
    hlo_op = "and"
    jvp = NOT_DIFFERENTIABLE
    numba_expr = nx.bool_only("{0} and {1}")


class Or(BinaryElementwise):
    name, np_fn, kind = "or", np.bitwise_or, "int_or_bool"
    hlo_op = "or"
    jvp = NOT_DIFFERENTIABLE
    numba_expr = nx.bool_only("{0} or {1}")


class Xor(BinaryElementwise):
    name, np_fn, kind = "xor", np.bitwise_xor, "int_or_bool"
    hlo_op = "xor"
    jvp = NOT_DIFFERENTIABLE
    numba_expr = nx.bool_only("{0} != {1}")


def _shift_amount_ok(x, y):
    bits = x.dtype.itemsize * 8
    return (y >= 0) & (y < bits)


class ShiftLeft(BinaryElementwise):
    name, kind = "shift_left", "int"
    hlo_op = "shift-left"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, y):
        ok = _shift_amount_ok(x, y)
        return np.asarray(np.where(ok, np.left_shift(x, np.where(ok, y, 0)), 0), x.dtype)


class ShiftRightLogical(BinaryElementwise):
    name, kind = "shift_right_logical", "int"
    hlo_op = "shift-right-logical"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, y):
        ok = _shift_amount_ok(x, y)
        u = np.dtype(f"u{x.dtype.itemsize}")
        r = np.right_shift(x.astype(u), np.where(ok, y, 0).astype(u))
        return np.asarray(np.where(ok, r, 0), u).astype(x.dtype)


class ShiftRightArithmetic(BinaryElementwise):
    name, kind = "shift_right_arithmetic", "int"
    hlo_op = "shift-right-arithmetic"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, y):
        # the sign bit is replicated for unsigned operands too (XLA shifts their bits as
        # signed integers); an amount outside [0, bits) fills with the sign bit
        bits = x.dtype.itemsize * 8
        signed = np.dtype(f"i{x.dtype.itemsize}")
        amount = np.where(_shift_amount_ok(x, y), y, bits - 1).astype(signed)
        return np.asarray(np.right_shift(x.view(signed) if x.dtype.kind == "u" else x,
                                         amount)).view(x.dtype)


eq_p, ne_p, lt_p, le_p, gt_p, ge_p = Eq(), Ne(), Lt(), Le(), Gt(), Ge()
and_p, or_p, xor_p = And(), Or(), Xor()
shift_left_p, shift_right_logical_p = ShiftLeft(), ShiftRightLogical()
shift_right_arithmetic_p = ShiftRightArithmetic()
