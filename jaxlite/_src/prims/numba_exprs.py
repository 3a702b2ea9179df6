"""Tier 2's scalar numba code of the lax primitives numba computes with NumPy's bits: the
bodies of the ``numba_expr`` and ``numba_vector_access`` rules (below), declared in the
primitive classes (as ``xla_simplify.py`` and ``taylor.py`` hold other rules' bodies).

``numba_expr(self, eqn, ins)`` is the source computing ``eqn``'s one result from its operands'
scalar sources ``ins``, or None when numba would not compute it as NumPy does for these dtypes
(the caller has checked every dtype is one of ``NUMBA_DTYPES``). The compiler
(``compiler/numba_kernels.py``) casts it to the result's NumPy scalar type. A primitive with a
numba twin of XLA's math of its own declares ``numba_scalar`` instead (``xla_kernels.py``).
"""
from __future__ import annotations

import numpy as np

__all__ = ["FLOAT_KINDS", "NUMBA_DTYPES", "bool_only", "convert", "divide", "float_only",
           "infix", "integer_pow", "negate", "operand", "product", "read_element",
           "select", "square", "write_element"]

FLOAT_KINDS = {np.dtype(np.float32), np.dtype(np.float64)}
NUMBA_DTYPES = FLOAT_KINDS | {np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.bool_)}


def _in_dt(eqn):
    return eqn.invars[0].aval.dtype


_TYPES = {}


def _np_type(dt):
    """``np.<name>`` of the dtype ``dt`` (cached: ``dtype.name`` costs microseconds, and
    ``numba_expr_ok`` asks every equation of a program)."""
    t = _TYPES.get(dt)
    if t is None:
        t = _TYPES[dt] = f"np.{dt.name}"
    return t


_by_squaring = []


def _squaring():
    """``elementwise.by_squaring`` (imported once: elementwise imports this module)."""
    if not _by_squaring:
        from jaxlite._src.prims.elementwise import by_squaring
        _by_squaring.append(by_squaring)
    return _by_squaring[0]


def infix(op):
    """The rule ``a <op> b`` (numba's arithmetic and comparisons are NumPy's for every
    numba dtype)."""
    def numba_expr(self, eqn, ins):
        return f"{ins[0]} {op} {ins[1]}"
    return numba_expr


def float_only(fmt):
    """The rule ``fmt.format(*ins)`` for float operands (numba's integer division, square
    root, ... are Python's, not NumPy's)."""
    def numba_expr(self, eqn, ins):
        return fmt.format(*ins) if _in_dt(eqn) in FLOAT_KINDS else None
    return numba_expr


def bool_only(fmt):
    """The rule ``fmt.format(*ins)`` for boolean operands (Python's ``and``/``or``/``not``)."""
    def numba_expr(self, eqn, ins):
        return fmt.format(*ins) if _in_dt(eqn) == np.bool_ else None
    return numba_expr


def operand(self, eqn, ins):
    """The operand itself (a broadcast of a scalar: the cast makes the result's type)."""
    return ins[0]


def negate(self, eqn, ins):
    """``-a``, not for booleans (numba negates them as integers)."""
    return None if _in_dt(eqn) == np.bool_ else f"-{ins[0]}"


def square(self, eqn, ins):
    """``a * a``."""
    return f"{ins[0]} * {ins[0]}"


def product(self, eqn, ins):
    """``a * b`` for floats: the one product of an outer product's element (only outer
    products of one contracted element of size 1 reach tier 2's loops)."""
    return f"{ins[0]} * {ins[1]}" if _in_dt(eqn) in FLOAT_KINDS else None


def divide(self, eqn, ins):
    """``a / b`` for floats; ``a * (1 / b)`` when XLA's simplifier turns the division by a
    broadcast divisor into a product (``Div.reciprocal_divisor``)."""
    if _in_dt(eqn) not in FLOAT_KINDS:
        return None
    if self.reciprocal_divisor(eqn):
        return f"{ins[0]} * ({_np_type(eqn.outvars[0].aval.dtype)}(1) / {ins[1]})"
    return f"{ins[0]} / {ins[1]}"


def integer_pow(self, eqn, ins):
    """Products by repeated squaring (XLA's order, ``by_squaring``), each cast to the
    type; the reciprocal of them for a negative exponent (floats only)."""
    y = eqn.params["y"]
    if not (y > 0 or (y < 0 and _in_dt(eqn) in FLOAT_KINDS)):
        return None
    t = _np_type(eqn.outvars[0].aval.dtype)
    e = _squaring()(ins[0], abs(y), lambda a, b: f"{t}({a} * {b})")
    return e if y > 0 else f"{t}(1) / {e}"


def select(self, eqn, ins):
    """``select_n`` of two cases by a boolean: Python's conditional expression."""
    if len(eqn.invars) != 3 or _in_dt(eqn) != np.bool_:
        return None
    return f"{ins[2]} if {ins[0]} else {ins[1]}"


def convert(self, eqn, ins):
    """The operand itself, when the cast to the result's type gives NumPy's value: to a
    float, to the same type, from a boolean, or to an integer at least as wide."""
    in_dt, new = _in_dt(eqn), eqn.params["new_dtype"]
    if new in FLOAT_KINDS or new == in_dt or (in_dt == np.bool_ and new != np.bool_) or \
            (in_dt.kind == "i" and new.kind == "i" and new.itemsize >= in_dt.itemsize):
        return ins[0]
    return None


# ------------------------------------------------- elements of vectors in tier 2's scalar loops
#
# ``numba_vector_access(self, eqn, v)``: the lines of a loop body reading or updating one
# element of ``eqn``'s first operand, a vector the loop holds as an array, or None when
# ``eqn`` has no such form. ``v`` (compiler/numba_kernels.py's ``VectorAccess``) gives
# ``v.arr`` (the array's name), ``v.n`` (its length), ``v.in_place`` (whether this equation
# may write it: the array is writable and nothing reads the old value later),
# ``v.scalar(a)`` (an operand's scalar source, or None), ``v.nm`` (the name to bind a read
# element or an index to), ``v.indent``; ``v.updated()`` makes the result that same array.

def read_element(self, eqn, v):
    """``dynamic_slice`` of one element: the element, read now (later writes to the
    array do not change it); the start is clamped as XLA does."""
    if eqn.params["slice_sizes"] != (1,):
        return None
    s = v.scalar(eqn.invars[1])
    return None if s is None else [f"{v.indent}{v.nm} = {v.arr}[min(max({s}, 0), {v.n - 1})]"]


def write_element(self, eqn, v):
    """``dynamic_update_slice`` of one element, written in place (clamped start)."""
    if not v.in_place:
        return None
    upd, s = v.scalar(eqn.invars[1]), v.scalar(eqn.invars[2])
    if upd is None or s is None or eqn.invars[1].aval.shape != (1,):
        return None
    v.updated()
    return [f"{v.indent}{v.arr}[min(max({s}, 0), {v.n - 1})] = {upd}"]

