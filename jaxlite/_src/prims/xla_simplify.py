"""XLA's algebraic simplifier's rules for the float arithmetic primitives.

Each function here is the ``simplify(self, s, eqn)`` rule of one primitive class of
elementwise.py (``Add.simplify = add``, ``Div.simplify = divide``, ...): XLA's ``AlgebraicSimplifierVisitor``
``HandleAdd`` / ``HandleSubtract`` / ``HandleMultiply`` / ``HandleDivide`` /
``HandleNegate`` / ``HandlePower`` / ``HandleLog`` (openxla/xla,
``xla/hlo/transforms/simplifiers/algebraic_simplifier.cc``), its patterns tried in that
code's order. A rule returns the equations replacing ``eqn`` (``[]`` when its result is
another atom), or None when no pattern matches.

``s`` is the simplifier's context (compiler/simplify.py's ``_Rewriter``, passed in: prims do
not import the compiler): what is constant and how XLA sees it as an operand
(``s.value``, ``s.scalar``, ``s.kind``: "C" a plain constant, "B" a broadcast of a scalar
constant, "BN" a broadcast of an array constant, None no constant), the equation computing an
operand (``s.eqn_of``), its number of uses, and builders of new constants and equations
(``s.atom``, ``s.cfold``, ``s.bin``, ``s.un``, ``s.replace_by``). New equations bind the
primitives themselves (``mul_p``, ``exp_p``, ...), never the lax wrappers.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.ir import Eqn, Literal, Var

__all__ = ["add", "divide", "log", "multiply", "negate", "power", "subtract"]


def _ew():
    from jaxlite._src.prims import elementwise
    return elementwise


def add(self, s, e):
    """HandleAdd: ``A + 0``, constants to the right, ``(A + C1) + C2``, ``(C1 - A) + C2``,
    ``A*C + B*C`` for a power of two ``C``."""
    ew = _ew()
    lhs, rhs = e.invars
    if s.is_all(rhs, 0) and (r := s.replace_by(e, lhs)) is not None:
        return r
    if s.is_all(lhs, 0) and (r := s.replace_by(e, rhs)) is not None:
        return r
    kl, kr = s.kind(lhs, e), s.kind(rhs, e)
    if kl == "C" and kr != "C":
        return [s.bin(self, rhs, lhs, e, out=e.outvars[0])]
    inner = s.eqn_of(lhs, self, e)
    if inner is not None:      # (A + C1) + C2 => A + (C1 + C2)
        a, c1 = inner.invars
        k1, ka = s.kind(c1, e), s.kind(a, e)
        if (ka != "C" and k1 == kr == "C") or (ka is None and k1 == kr == "B"):
            return [s.bin(self, a, s.cfold(np.add, e, c1, rhs), e, out=e.outvars[0])]
    inner = s.eqn_of(lhs, ew.sub_p, e)
    if inner is not None:      # (C1 - A) + C2 => (C1 + C2) - A
        c1, a = inner.invars
        k1, ka = s.kind(c1, e), s.kind(a, e)
        if ka != "C" and ((k1 == kr == "C") or (k1 == kr == "B")):
            return [s.bin(ew.sub_p, s.cfold(np.add, e, c1, rhs), a, e, out=e.outvars[0])]
    # A*C + B*C => (A+B)*C for C a power of 2 (both products used only here)
    ml, mr = s.eqn_of(lhs, ew.mul_p, e), s.eqn_of(rhs, ew.mul_p, e)
    if ml is not None and mr is not None and s.uses(lhs) == 1 and s.uses(rhs) == 1 and \
            ml is not mr:
        for a, cc in (ml.invars, ml.invars[::-1]):
            if s.same(mr.invars[0], cc):
                b = mr.invars[1]
            elif s.same(mr.invars[1], cc):
                b = mr.invars[0]
            else:
                continue
            if not s.pow2(cc):
                break
            t = s.bin(self, a, b, e)
            return [t, s.bin(ew.mul_p, t.outvars[0], cc, e, out=e.outvars[0])]
    return None


def subtract(self, s, e):
    """HandleSubtract: ``A - 0``, ``A - C => A + (-C)``."""
    lhs, rhs = e.invars
    if s.is_all(rhs, 0) and (r := s.replace_by(e, lhs)) is not None:
        return r
    if s.kind(lhs, e) != "C" and s.kind(rhs, e) is not None:
        # A - Const => A + (-Const)
        if s.kind(rhs, e) == "B":
            neg = s.atom(-np.asarray(s.scalar(rhs)), e.outvars[0].aval.dtype, ())
        else:
            neg = s.atom(s.fold(np.negative, np.asarray(s.value(rhs))),
                         e.outvars[0].aval.dtype, rhs.aval.shape)
        return [s.bin(_ew().add_p, lhs, neg, e, out=e.outvars[0])]
    return None


def negate(self, s, e):
    """HandleNegate: ``-(-x) => x``."""
    inner = s.eqn_of(e.invars[0], self, e)
    if inner is not None:       # negate(negate(x)) => x
        return s.replace_by(e, inner.invars[0])
    return None


def _with_const(s, mul_p, v, e, kinds):
    """(a, c) when ``v`` is a product of a non-constant and a constant of one of ``kinds``
    (either order), else None."""
    m = s.eqn_of(v, mul_p, e)
    if m is None:
        return None
    x, y = m.invars
    for a, cc in ((x, y), (y, x)):
        if s.kind(a, e) != "C" and s.kind(cc, e) in kinds:
            return a, cc
    return None


def multiply(self, s, e):
    """HandleMultiply: ``A * 1``, ``(-A) * (-B)``, products of constants gathered,
    ``exp(A) * exp(B) => exp(A + B)``."""
    ew = _ew()
    lhs, rhs = e.invars
    if s.is_all(rhs, 1) and (r := s.replace_by(e, lhs)) is not None:
        return r
    if s.is_all(lhs, 1) and (r := s.replace_by(e, rhs)) is not None:
        return r
    nl, nr = s.eqn_of(lhs, ew.neg_p, e), s.eqn_of(rhs, ew.neg_p, e)
    if nl is not None and nr is not None:      # (-A) * (-B) => A * B
        return [s.bin(self, nl.invars[0], nr.invars[0], e, out=e.outvars[0])]
    # Mul(Mul(x, c1), Mul(y, c2)) => Mul(Mul(x, y), c1 * c2) (plain constants)
    pl, pr = _with_const(s, self, lhs, e, ("C",)), _with_const(s, self, rhs, e, ("C",))
    if pl is not None and pr is not None:
        t = s.bin(self, pl[0], pr[0], e)
        return [t, s.bin(self, t.outvars[0], s.cfold(np.multiply, e, pl[1], pr[1]), e,
                         out=e.outvars[0])]
    # Mul(Mul(a, c1), c2) => Mul(a, c1 * c2) (plain constants, either order)
    for v, cc in ((lhs, rhs), (rhs, lhs)):
        p = _with_const(s, self, v, e, ("C",))
        if p is not None and s.kind(cc, e) == "C":
            return [s.bin(self, p[0], s.cfold(np.multiply, e, p[1], cc), e,
                          out=e.outvars[0])]
    # Mul(Mul(a, c), Broadcast(b)) => Mul(a, Broadcast(Mul(b, c))), c a scalar constant
    shape = tuple(e.outvars[0].aval.shape)
    for v, op in ((lhs, rhs), (rhs, lhs)):
        p = _with_const(s, self, v, e, ("C", "B"))
        if p is None or s.scalar(p[1]) is None or s.value(op) is not None:
            continue
        bb = s.broadcast_operand(op, shape)
        if bb is None:
            continue
        b, bc = bb
        a, cc = p
        lit = s.atom(s.scalar(cc), e.outvars[0].aval.dtype, ())
        t = s.bin(self, b, lit, e)
        out = [t]
        if bc is None:          # (an implicit broadcast of b: b's shape differs)
            nb = t.outvars[0]
        else:
            nb = s.var(bc.outvars[0].aval.shape, bc.outvars[0].aval.dtype)
            out.append(Eqn(bc.primitive, [t.outvars[0]], bc.params, [nb], bc.source_info))
        out.append(s.bin(self, a, nb, e, out=e.outvars[0]))
        return out
    # (A * C1) * C2 => A * (C1 * C2)
    inner = s.eqn_of(lhs, self, e)
    if inner is not None:
        a, c1 = inner.invars
        k1, k2, ka = s.kind(c1, e), s.kind(rhs, e), s.kind(a, e)
        if (ka != "C" and k1 == k2 == "C") or (k1 == k2 == "B"):
            return [s.bin(self, a, s.cfold(np.multiply, e, c1, rhs), e, out=e.outvars[0])]
    # exp(A) * exp(B) => exp(A + B)
    xl, xr = s.eqn_of(lhs, ew.exp_p, e), s.eqn_of(rhs, ew.exp_p, e)
    if xl is not None and xr is not None and xl.params == xr.params:
        t = s.bin(ew.add_p, xl.invars[0], xr.invars[0], e)
        return [t, s.un(ew.exp_p, t.outvars[0], e, xl.params, out=e.outvars[0])]
    return None


def divide(self, s, e):
    """HandleDivide: ``A / 1``, ``A / Broadcast(B)``, divisions by exponentials, powers and
    roots become products, ``A / C => A * (1 / C)``, quotients of quotients merged."""
    ew = _ew()
    a, b = e.invars
    if s.is_all(b, 1) and (r := s.replace_by(e, a)) is not None:
        return r
    shape = tuple(e.outvars[0].aval.shape)
    bb = s.broadcast_operand(b, shape) if s.value(b) is None else None
    if bb is not None:                # A / Broadcast(B) => A * Broadcast(1 / B)
        b_in, bc = bb
        dt = e.outvars[0].aval.dtype
        r = s.bin(self, Literal(np.ones((), dt)[()], ShapedArray((), dt)), b_in, e)
        out = [r]
        nb = r.outvars[0]
        if bc is not None:
            nb = s.var(bc.outvars[0].aval.shape, dt)
            out.append(Eqn(bc.primitive, [r.outvars[0]], bc.params, [nb], bc.source_info))
        out.append(s.bin(ew.mul_p, a, nb, e, out=e.outvars[0]))
        return out
    xa, xb = s.eqn_of(a, ew.exp_p, e), s.eqn_of(b, ew.exp_p, e)
    if xa is not None and xb is not None and xa.params == xb.params:
        t = s.bin(ew.sub_p, xa.invars[0], xb.invars[0], e)     # exp(A)/exp(B)
        return [t, s.un(ew.exp_p, t.outvars[0], e, xa.params, out=e.outvars[0])]
    if xb is not None:                                          # A/exp(B)
        n = s.un(ew.neg_p, xb.invars[0], e)
        x = s.un(ew.exp_p, n.outvars[0], e, xb.params)
        return [n, x, s.bin(ew.mul_p, a, x.outvars[0], e, out=e.outvars[0])]
    pb = s.eqn_of(b, ew.pow_p, e)
    if pb is not None:                                          # A/pow(B,C)
        n = s.un(ew.neg_p, pb.invars[1], e)
        p = Eqn(pb.primitive, [pb.invars[0], n.outvars[0]], pb.params,
                [s.var(pb.outvars[0].aval.shape, pb.outvars[0].aval.dtype)], pb.source_info)
        return [n, p, s.bin(ew.mul_p, a, p.outvars[0], e, out=e.outvars[0])]
    for root, inv in ((ew.sqrt_p, ew.rsqrt_p), (ew.rsqrt_p, ew.sqrt_p)):
        r = s.eqn_of(b, root, e)                                 # A/sqrt(B), A/rsqrt(B)
        if r is not None and s.uses(b) == 1:
            t = s.un(inv, r.invars[0], e, r.params)
            return [t, s.bin(ew.mul_p, a, t.outvars[0], e, out=e.outvars[0])]
    kb = s.kind(b, e)
    if s.kind(a, e) != "C" and kb is not None:                  # A / C => A * (1 / C)
        one = np.ones((), e.outvars[0].aval.dtype)
        if kb == "B":
            inv = s.atom(s.fold(np.divide, one, np.asarray(s.scalar(b), one.dtype)),
                         one.dtype, ())
        else:
            inv = s.atom(s.fold(np.divide, one, np.asarray(s.value(b), one.dtype)),
                         one.dtype, b.aval.shape)
        return [s.bin(ew.mul_p, a, inv, e, out=e.outvars[0])]
    da, db = s.eqn_of(a, self, e), s.eqn_of(b, self, e)
    if da is not None and db is not None:     # (A/B)/(C/D) => (A*D)/(B*C)
        (p, q), (r, t) = da.invars, db.invars
        m1, m2 = s.bin(ew.mul_p, p, t, e), s.bin(ew.mul_p, q, r, e)
        return [m1, m2, s.bin(self, m1.outvars[0], m2.outvars[0], e, out=e.outvars[0])]
    if da is not None:                        # (A/B)/C => A/(B*C)
        p, q = da.invars
        m = s.bin(ew.mul_p, q, b, e)
        return [m, s.bin(self, p, m.outvars[0], e, out=e.outvars[0])]
    if db is not None:                        # A/(B/C) => (A*C)/B
        q, r = db.invars
        m = s.bin(ew.mul_p, a, r, e)
        return [m, s.bin(self, m.outvars[0], q, e, out=e.outvars[0])]
    return None


def power(self, s, e):
    """HandlePower: ``pow(exp(A), B) => exp(A * B)``."""
    ew = _ew()
    a, b = e.invars
    if a.aval.dtype != b.aval.dtype:      # (an integer exponent)
        return None
    x = s.eqn_of(a, ew.exp_p, e)
    if x is not None and tuple(b.aval.shape) == tuple(e.outvars[0].aval.shape):
        m = s.bin(ew.mul_p, x.invars[0], b, e)      # pow(exp(A), B) => exp(A*B)
        return [m, s.un(ew.exp_p, m.outvars[0], e, x.params, out=e.outvars[0])]
    return None


def log(self, s, e):
    """HandleLog: ``ln(exp(A)) => A``, ``ln(pow(A, B))``, ``ln(sqrt(A))``,
    ``ln(rsqrt(A))``."""
    ew = _ew()
    (a,) = e.invars
    x = s.eqn_of(a, ew.exp_p, e)
    if x is not None:                                 # ln(exp(A)) => A
        return s.replace_by(e, x.invars[0])
    shape, dt = tuple(e.outvars[0].aval.shape), e.outvars[0].aval.dtype
    p = s.eqn_of(a, ew.pow_p, e)
    if p is not None and p.invars[1].aval.dtype == dt and \
            tuple(p.invars[1].aval.shape) == shape and \
            tuple(p.invars[0].aval.shape) == shape:
        # ln(pow(A, B)) => select(B == 0, 0, ln(|A|) * B) (B * ln(A) for complex A)
        base, ex = p.invars
        out = []
        if dt.kind != "c":
            ab = s.un(ew.abs_p, base, e)
            out.append(ab)
            base = ab.outvars[0]
        lg = s.un(self, base, e, e.params)
        m = s.bin(ew.mul_p, lg.outvars[0], ex, e)
        out += [lg, m]
        if dt.kind == "c":
            out[-1] = s.bin(ew.mul_p, lg.outvars[0], ex, e, out=e.outvars[0])
            return out
        zero = s.atom(np.zeros(shape, dt) if shape else np.zeros((), dt), dt, shape)
        z0 = Literal(np.zeros((), dt)[()], ShapedArray((), dt))
        isz = Eqn(ew.eq_p, [ex, z0], {}, [Var(ShapedArray(shape, np.dtype(np.bool_)))],
                  e.source_info)
        out += [isz, Eqn(ew.select_n_p, [isz.outvars[0], m.outvars[0], zero], {},
                         [e.outvars[0]], e.source_info)]
        return out
    for root, k in ((ew.sqrt_p, 0.5), (ew.rsqrt_p, -0.5)):  # ln(sqrt(A)) => ln(A) * 0.5
        r = s.eqn_of(a, root, e)
        if r is not None:
            lg = s.un(self, r.invars[0], e, e.params)
            half = Literal(np.asarray(k, dt)[()], ShapedArray((), dt))
            return [lg, s.bin(ew.mul_p, lg.outvars[0], half, e, out=e.outvars[0])]
    return None
