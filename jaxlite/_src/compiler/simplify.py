"""XLA's algebraic simplification of float arithmetic, as a jaxpr pass.

Before it runs a program, XLA's ``AlgebraicSimplifier`` (openxla/xla,
``xla/hlo/transforms/simplifiers/algebraic_simplifier.cc``) rewrites arithmetic with
constants so that constant folding can combine them, and a few structural patterns: ``(A +
C1) + C2`` becomes ``A + (C1 + C2)``, ``A - C`` becomes ``A + (-C)``, ``A / C`` becomes ``A *
(1 / C)``, ``(A * C1) * C2`` becomes ``A * (C1 * C2)``, ``(A / B) / C`` becomes ``A / (B *
C)``, ``exp(A) * exp(B)`` becomes ``exp(A + B)``, and so on. Each rewrite changes how the
result rounds, so a jitted ``20 * (t / 13)`` is ``t * (20 * (1 / 13))`` in JAX, not the two
roundings NumPy gives. ``simplify`` applies the same rules, in XLA's order, to a fixed point,
with "constant" meaning what XLA sees as one after its own constant folding: a literal, a
closed-over or folded constant (``fold_constants``), a broadcast of one; and, through
``sink_loop_constants``, a loop-invariant value that XLA turns into a constant inside a
while loop's body and condition (``WhileLoopConstantSinking``: a loop constant, or a carry
the body passes through unchanged whose initial value is a constant; scans become while loops
in XLA, so the same holds for them), and a constant operand of a ``cond``, which XLA
propagates into the branches.

Only compiled programs change: eagerly JAX runs each operation as its own program, so
nothing is rewritten (jaxlite's eager ops do the same).

The matching follows XLA's HLO: operands of an operation whose result is not a scalar are
broadcasts when they are scalar (or of fewer dimensions); a scalar or uniform constant used
so is a *broadcast constant* (``m::Broadcast(m::ConstantScalar())``), a non-uniform array
of the result's shape a *plain constant* (``m::Constant()``), and in a scalar operation
every constant is plain. Some of XLA's rules match only plain constants.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, has_effects

__all__ = ["loop_constants_bound", "simplify", "simplify_arithmetic", "sink_loop_constants"]

_MAX_SWEEPS = 64
_COMMUTATIVE = ("add", "mul")
_HANDLED = ("add", "sub", "mul", "div", "neg", "pow", "log")


def simplify(closed: ClosedJaxpr, foreign=None) -> ClosedJaxpr:
    """Sink constants into loop bodies and cond branches, then rewrite float arithmetic as
    XLA's algebraic simplifier does (see the module docstring). ``foreign``: what
    ``inline_calls`` found reaching loops from outside their function."""
    closed = sink_loop_constants(closed, foreign)
    return simplify_arithmetic(closed)


# ------------------------------------------------------------------ constants of a jaxpr

class _Consts:
    """What is constant in one jaxpr: literals, constvars with values, broadcasts of
    scalar constants (``broadcast_in_dim`` equations too big to fold)."""

    def __init__(self, closed):
        self.known = dict(zip(closed.jaxpr.constvars, closed.consts))
        self.bcast = {}      # var -> scalar value (a broadcast_in_dim of a scalar constant)
        self.uniform = {}    # constvar -> its one value, or None
        self.constvars = list(closed.jaxpr.constvars)
        self.consts = list(closed.consts)

    def value(self, a):
        """The constant's value (a NumPy array or scalar), or None."""
        if isinstance(a, Literal):
            return np.asarray(a.val)
        if a in self.known:
            v = self.known[a]
            if not isinstance(v, (np.ndarray, np.generic)):
                return None      # (not an array: a reference, a key, ...)
            v = np.asarray(v)
            return v if v.dtype == a.aval.dtype else None
        if a in self.bcast:
            return self.bcast[a]
        return None

    def scalar(self, a):
        """A uniform constant's one value (a 0-d array), or None."""
        v = self.value(a)
        if v is None:
            return None
        if v.ndim == 0:
            return v
        if a in self.bcast:
            return self.bcast[a]
        if a not in self.uniform:
            flat = np.ascontiguousarray(v).reshape(-1)
            raw = flat.view(np.uint8).reshape(flat.size, -1)
            self.uniform[a] = np.asarray(flat[0]) if flat.size and \
                bool((raw == raw[:1]).all()) else None
        return self.uniform[a]

    def kind(self, a, shape):
        """How XLA sees atom ``a`` as an operand of an operation of result ``shape``:
        "C" (a plain constant), "B" (a broadcast of a scalar constant), "BN" (a broadcast
        of an array constant), or None (not a constant)."""
        v = self.value(a)
        if v is None:
            return None
        if shape == ():
            return "C"
        if self.scalar(a) is not None:
            return "B"
        return "C" if tuple(v.shape) == tuple(shape) else "BN"

    def atom(self, val, dtype, shape_of_use):
        """An atom holding constant ``val`` (scalar: a literal; else a new constvar)."""
        val = np.asarray(val, dtype)
        if val.ndim == 0:
            return Literal(val[()], ShapedArray((), dtype))
        v = Var(ShapedArray(val.shape, dtype))
        self.known[v] = val
        self.constvars.append(v)
        self.consts.append(val)
        return v


def _is_all(consts, a, x):
    v = consts.value(a)
    if v is None or v.dtype.kind not in "fciu":
        return False
    if v.ndim == 0:
        return bool(v == x)
    one = consts.scalar(a)       # (a uniform array's value, cached)
    if one is not None:
        return bool(one == x)
    with np.errstate(all="ignore"):
        return bool(np.all(v == x))


def _same(consts, a, b):
    """Whether two atoms are the same value to XLA (CSE merges equal constants)."""
    if a is b:
        return True
    va, vb = consts.value(a), consts.value(b)
    if va is None or vb is None or va.dtype != vb.dtype or va.shape != vb.shape:
        return False
    return bool(np.array_equal(np.ascontiguousarray(va).reshape(-1).view(np.uint8),
                                np.ascontiguousarray(vb).reshape(-1).view(np.uint8)))


def _pow2(consts, a):
    """IsAllFpConstantPowerOf2: a float constant whose elements are all +-2^k."""
    v = consts.value(a)
    if v is None or v.dtype.kind != "f":
        return False
    m, _ = np.frexp(np.abs(v.astype(np.float64)))
    return bool(np.all(m == 0.5))


def _fold(fn, *vals):
    with np.errstate(all="ignore"):
        out = fn(*vals)
    return np.asarray(out, vals[0].dtype)


# ------------------------------------------------------------------ the rewriter

class _Rewriter:
    """One sweep over a jaxpr's equations, rewriting each float arithmetic equation by
    the first of XLA's rules that matches it (the rules of ``AlgebraicSimplifierVisitor``
    ``HandleAdd`` / ``HandleSubtract`` / ``HandleMultiply`` / ``HandleDivide`` /
    ``HandleNegate``, in that code's order)."""

    def __init__(self, closed, prims):
        self.consts = _Consts(closed)
        self.p = prims
        self.changed = False

    def run(self, jaxpr):
        self.made = {}
        self.uses = {}
        for e in jaxpr.eqns:
            for a in e.invars:
                if isinstance(a, Var):
                    self.uses[a] = self.uses.get(a, 0) + 1
        for a in jaxpr.outvars:
            if isinstance(a, Var):
                self.uses[a] = self.uses.get(a, 0) + 1
        self.env = {}
        out = []
        env = self.env
        for e in jaxpr.eqns:
            if env and any(isinstance(a, Var) and a in env for a in e.invars):
                e = e.replace(invars=[self._atom(a) for a in e.invars])
            if e.primitive.name == "broadcast_in_dim" and not e.invars[0].aval.shape:
                v = self.consts.value(e.invars[0])
                if v is not None:
                    self.consts.bcast[e.outvars[0]] = v
            new, e = self._rewrite(e) if self._eligible(e) else (None, e)
            if new is None:
                out.append(e)
            else:
                self.changed = True
                out.extend(new)
            for ne in (new or [e]):
                if len(ne.outvars) == 1:
                    self.made[ne.outvars[0]] = ne
        outvars = [self._atom(a) for a in jaxpr.outvars]
        return Jaxpr(self.consts.constvars, jaxpr.invars, out, outvars, jaxpr.debug_info)

    def _atom(self, a):
        while isinstance(a, Var) and a in self.env:
            a = self.env[a]
        return a

    @staticmethod
    def _eligible(e):
        return e.primitive.name in _HANDLED and \
            len(e.outvars) == 1 and e.outvars[0].aval.dtype.kind in "fc" and \
            not e.params.get("accuracy")

    # helpers -------------------------------------------------------------------------
    def _eqn_of(self, a, name, e):
        """The equation ``name`` computing operand ``a`` of ``e`` (not broadcast)."""
        m = self.made.get(a) if isinstance(a, Var) else None
        return m if m is not None and m.primitive.name == name and \
            m.outvars[0].aval.dtype.kind in "fc" and \
            tuple(a.aval.shape) == tuple(e.outvars[0].aval.shape) else None

    def _kind(self, a, e):
        return self.consts.kind(a, tuple(e.outvars[0].aval.shape))

    def _var(self, shape, dtype):
        return Var(ShapedArray(tuple(shape), dtype))

    def _bin(self, name, x, y, e, out=None):
        prim = self.p[name]
        aval = e.outvars[0].aval
        shape = np.broadcast_shapes(tuple(x.aval.shape), tuple(y.aval.shape))
        o = out if out is not None else self._var(shape, aval.dtype)
        return Eqn(prim, [x, y], {}, [o], e.source_info)

    def _un(self, name, x, e, params=None, out=None):
        o = out if out is not None else self._var(x.aval.shape, x.aval.dtype)
        return Eqn(self.p[name], [x], dict(params or {}), [o], e.source_info)

    def _replace_by(self, e, a):
        """``e``'s result is the atom ``a`` (when their shapes agree, as XLA's
        ReplaceInstructionIfCompatible)."""
        o = e.outvars[0]
        if tuple(a.aval.shape) != tuple(o.aval.shape) or a.aval.dtype != o.aval.dtype:
            return None
        if isinstance(a, Literal):
            return None
        self.env[o] = a
        return []

    def _cfold(self, fn, e, *cs):
        """The constant ``fn(*values of cs)`` as an atom for an operand of ``e``."""
        dt = e.outvars[0].aval.dtype
        kinds = [self._kind(c, e) for c in cs]
        if all(k == "B" for k in kinds):
            vals = [self.consts.scalar(c) for c in cs]
        else:
            vals = [self.consts.value(c) for c in cs]
        vals = [np.asarray(v, dt) for v in vals]
        return self.consts.atom(_fold(fn, *vals), dt, e.outvars[0].aval.shape)

    # rules ---------------------------------------------------------------------------
    def _rewrite(self, e):
        name = e.primitive.name
        if name in _COMMUTATIVE:
            # MLIR's canonicalization (before XLA sees the program) puts a constant operand
            # of a commutative operation on the right
            x, y = e.invars
            if self.consts.value(x) is not None and self.consts.value(y) is None:
                # (a new equation: the one given may be the input jaxpr's own)
                e = e.replace(invars=[y, x])
        return getattr(self, "_" + name)(e), e

    def _add(self, e):
        c = self.consts
        lhs, rhs = e.invars
        if _is_all(c, rhs, 0) and (r := self._replace_by(e, lhs)) is not None:
            return r
        if _is_all(c, lhs, 0) and (r := self._replace_by(e, rhs)) is not None:
            return r
        kl, kr = self._kind(lhs, e), self._kind(rhs, e)
        if kl == "C" and kr != "C":
            return [self._bin("add", rhs, lhs, e, out=e.outvars[0])]
        inner = self._eqn_of(lhs, "add", e)
        if inner is not None:      # (A + C1) + C2 => A + (C1 + C2)
            a, c1 = inner.invars
            k1, ka = self._kind(c1, e), self._kind(a, e)
            if (ka != "C" and k1 == kr == "C") or (ka is None and k1 == kr == "B"):
                return [self._bin("add", a, self._cfold(np.add, e, c1, rhs), e,
                                  out=e.outvars[0])]
        inner = self._eqn_of(lhs, "sub", e)
        if inner is not None:      # (C1 - A) + C2 => (C1 + C2) - A
            c1, a = inner.invars
            k1, ka = self._kind(c1, e), self._kind(a, e)
            if ka != "C" and ((k1 == kr == "C") or (k1 == kr == "B")):
                return [self._bin("sub", self._cfold(np.add, e, c1, rhs), a, e,
                                  out=e.outvars[0])]
        # A*C + B*C => (A+B)*C for C a power of 2 (both products used only here)
        ml, mr = self._eqn_of(lhs, "mul", e), self._eqn_of(rhs, "mul", e)
        if ml is not None and mr is not None and self.uses.get(lhs) == 1 and \
                self.uses.get(rhs) == 1 and ml is not mr:
            for a, cc in (ml.invars, ml.invars[::-1]):
                if _same(c, mr.invars[0], cc):
                    b = mr.invars[1]
                elif _same(c, mr.invars[1], cc):
                    b = mr.invars[0]
                else:
                    continue
                if not _pow2(c, cc):
                    break
                s = self._bin("add", a, b, e)
                return [s, self._bin("mul", s.outvars[0], cc, e, out=e.outvars[0])]
        return None

    def _sub(self, e):
        c = self.consts
        lhs, rhs = e.invars
        if _is_all(c, rhs, 0) and (r := self._replace_by(e, lhs)) is not None:
            return r
        if self._kind(lhs, e) != "C" and self._kind(rhs, e) is not None:
            # A - Const => A + (-Const)
            if self._kind(rhs, e) == "B":
                neg = c.atom(-np.asarray(c.scalar(rhs)), e.outvars[0].aval.dtype, ())
            else:
                neg = c.atom(_fold(np.negative, np.asarray(c.value(rhs))),
                             e.outvars[0].aval.dtype, rhs.aval.shape)
            return [self._bin("add", lhs, neg, e, out=e.outvars[0])]
        return None

    def _neg(self, e):
        inner = self._eqn_of(e.invars[0], "neg", e)
        if inner is not None:       # negate(negate(x)) => x
            return self._replace_by(e, inner.invars[0])
        return None

    def _mul(self, e):
        c = self.consts
        lhs, rhs = e.invars
        if _is_all(c, rhs, 1) and (r := self._replace_by(e, lhs)) is not None:
            return r
        if _is_all(c, lhs, 1) and (r := self._replace_by(e, rhs)) is not None:
            return r
        nl, nr = self._eqn_of(lhs, "neg", e), self._eqn_of(rhs, "neg", e)
        if nl is not None and nr is not None:      # (-A) * (-B) => A * B
            return [self._bin("mul", nl.invars[0], nr.invars[0], e, out=e.outvars[0])]

        def with_const(v, kinds):
            """(a, c) when ``v`` is a product of a non-constant and a constant of one of
            ``kinds`` (either order), else None."""
            m = self._eqn_of(v, "mul", e)
            if m is None:
                return None
            x, y = m.invars
            for a, cc in ((x, y), (y, x)):
                if self._kind(a, e) != "C" and self._kind(cc, e) in kinds:
                    return a, cc
            return None

        # Mul(Mul(x, c1), Mul(y, c2)) => Mul(Mul(x, y), c1 * c2) (plain constants)
        pl, pr = with_const(lhs, ("C",)), with_const(rhs, ("C",))
        if pl is not None and pr is not None:
            s = self._bin("mul", pl[0], pr[0], e)
            return [s, self._bin("mul", s.outvars[0], self._cfold(np.multiply, e, pl[1],
                                                                   pr[1]), e, out=e.outvars[0])]
        # Mul(Mul(a, c1), c2) => Mul(a, c1 * c2) (plain constants, either order)
        for v, cc in ((lhs, rhs), (rhs, lhs)):
            p = with_const(v, ("C",))
            if p is not None and self._kind(cc, e) == "C":
                return [self._bin("mul", p[0], self._cfold(np.multiply, e, p[1], cc), e,
                                  out=e.outvars[0])]
        # Mul(Mul(a, c), Broadcast(b)) => Mul(a, Broadcast(Mul(b, c))), c a scalar constant
        shape = tuple(e.outvars[0].aval.shape)
        for v, op in ((lhs, rhs), (rhs, lhs)):
            p = with_const(v, ("C", "B"))
            if p is None or c.scalar(p[1]) is None or c.value(op) is not None:
                continue
            bb = self._broadcast_operand(op, shape)
            if bb is None:
                continue
            b, bc = bb
            a, cc = p
            k = c.scalar(cc)
            lit = c.atom(k, e.outvars[0].aval.dtype, ())
            t = self._bin("mul", b, lit, e)
            out = [t]
            if bc is None:          # (an implicit broadcast of b: b's shape differs)
                nb = t.outvars[0]
            else:
                nb = self._var(bc.outvars[0].aval.shape, bc.outvars[0].aval.dtype)
                out.append(Eqn(bc.primitive, [t.outvars[0]], bc.params, [nb],
                               bc.source_info))
            out.append(self._bin("mul", a, nb, e, out=e.outvars[0]))
            return out
        # (A * C1) * C2 => A * (C1 * C2)
        inner = self._eqn_of(lhs, "mul", e)
        if inner is not None:
            a, c1 = inner.invars
            k1, k2, ka = self._kind(c1, e), self._kind(rhs, e), self._kind(a, e)
            if (ka != "C" and k1 == k2 == "C") or (k1 == k2 == "B"):
                return [self._bin("mul", a, self._cfold(np.multiply, e, c1, rhs), e,
                                  out=e.outvars[0])]
        # exp(A) * exp(B) => exp(A + B)
        xl, xr = self._eqn_of(lhs, "exp", e), self._eqn_of(rhs, "exp", e)
        if xl is not None and xr is not None and xl.params == xr.params:
            s = self._bin("add", xl.invars[0], xr.invars[0], e)
            return [s, self._un("exp", s.outvars[0], e, xl.params, out=e.outvars[0])]
        return None

    def _broadcast_operand(self, op, shape):
        """(b, broadcast equation or None) when ``op`` is XLA's ``Broadcast(b)`` of a
        non-constant ``b`` as an operand of a result of ``shape``, else None."""
        if tuple(op.aval.shape) != shape:
            return (op, None) if isinstance(op, Var) else None
        bc = self._eqn_of_any(op, "broadcast_in_dim")
        if bc is None or self.consts.value(bc.invars[0]) is not None or \
                not isinstance(bc.invars[0], Var) or len(bc.invars) != 1:
            return None
        return bc.invars[0], bc

    def _eqn_of_any(self, a, name):
        e = self.made.get(a) if isinstance(a, Var) else None
        return e if e is not None and e.primitive.name == name else None

    def _div(self, e):
        c = self.consts
        a, b = e.invars
        if _is_all(c, b, 1) and (r := self._replace_by(e, a)) is not None:
            return r
        shape = tuple(e.outvars[0].aval.shape)
        bb = self._broadcast_operand(b, shape) if c.value(b) is None else None
        if bb is not None:                # A / Broadcast(B) => A * Broadcast(1 / B)
            b_in, bc = bb
            dt = e.outvars[0].aval.dtype
            r = self._bin("div", Literal(np.ones((), dt)[()], ShapedArray((), dt)), b_in, e)
            out = [r]
            nb = r.outvars[0]
            if bc is not None:
                nb = self._var(bc.outvars[0].aval.shape, dt)
                out.append(Eqn(bc.primitive, [r.outvars[0]], bc.params, [nb], bc.source_info))
            out.append(self._bin("mul", a, nb, e, out=e.outvars[0]))
            return out
        xa, xb = self._eqn_of(a, "exp", e), self._eqn_of(b, "exp", e)
        if xa is not None and xb is not None and xa.params == xb.params:
            s = self._bin("sub", xa.invars[0], xb.invars[0], e)     # exp(A)/exp(B)
            return [s, self._un("exp", s.outvars[0], e, xa.params, out=e.outvars[0])]
        if xb is not None:                                          # A/exp(B)
            n = self._un("neg", xb.invars[0], e)
            x = self._un("exp", n.outvars[0], e, xb.params)
            return [n, x, self._bin("mul", a, x.outvars[0], e, out=e.outvars[0])]
        pb = self._eqn_of(b, "pow", e)
        if pb is not None:                                          # A/pow(B,C)
            n = self._un("neg", pb.invars[1], e)
            p = Eqn(pb.primitive, [pb.invars[0], n.outvars[0]], pb.params,
                    [self._var(pb.outvars[0].aval.shape, pb.outvars[0].aval.dtype)],
                    pb.source_info)
            return [n, p, self._bin("mul", a, p.outvars[0], e, out=e.outvars[0])]
        for root, inv in (("sqrt", "rsqrt"), ("rsqrt", "sqrt")):
            r = self._eqn_of(b, root, e)                             # A/sqrt(B), A/rsqrt(B)
            if r is not None and self.uses.get(b) == 1:
                s = self._un(inv, r.invars[0], e, r.params)
                return [s, self._bin("mul", a, s.outvars[0], e, out=e.outvars[0])]
        kb = self._kind(b, e)
        if self._kind(a, e) != "C" and kb is not None:              # A / C => A * (1 / C)
            one = np.ones((), e.outvars[0].aval.dtype)
            if kb == "B":
                inv = c.atom(_fold(np.divide, one, np.asarray(c.scalar(b), one.dtype)),
                             one.dtype, ())
            else:
                inv = c.atom(_fold(np.divide, one, np.asarray(c.value(b), one.dtype)),
                             one.dtype, b.aval.shape)
            return [self._bin("mul", a, inv, e, out=e.outvars[0])]
        da, db = self._eqn_of(a, "div", e), self._eqn_of(b, "div", e)
        if da is not None and db is not None:     # (A/B)/(C/D) => (A*D)/(B*C)
            (p, q), (r, s) = da.invars, db.invars
            m1, m2 = self._bin("mul", p, s, e), self._bin("mul", q, r, e)
            return [m1, m2, self._bin("div", m1.outvars[0], m2.outvars[0], e,
                                      out=e.outvars[0])]
        if da is not None:                        # (A/B)/C => A/(B*C)
            p, q = da.invars
            m = self._bin("mul", q, b, e)
            return [m, self._bin("div", p, m.outvars[0], e, out=e.outvars[0])]
        if db is not None:                        # A/(B/C) => (A*C)/B
            q, r = db.invars
            m = self._bin("mul", a, r, e)
            return [m, self._bin("div", m.outvars[0], q, e, out=e.outvars[0])]
        return None

    def _pow(self, e):
        a, b = e.invars
        if a.aval.dtype != b.aval.dtype:      # (an integer exponent)
            return None
        x = self._eqn_of(a, "exp", e)
        if x is not None and tuple(b.aval.shape) == tuple(e.outvars[0].aval.shape):
            m = self._bin("mul", x.invars[0], b, e)      # pow(exp(A), B) => exp(A*B)
            return [m, self._un("exp", m.outvars[0], e, x.params, out=e.outvars[0])]
        return None

    def _log(self, e):
        (a,) = e.invars
        x = self._eqn_of(a, "exp", e)
        if x is not None:                                 # ln(exp(A)) => A
            return self._replace_by(e, x.invars[0])
        shape, dt = tuple(e.outvars[0].aval.shape), e.outvars[0].aval.dtype
        p = self._eqn_of(a, "pow", e)
        if p is not None and p.invars[1].aval.dtype == dt and \
                tuple(p.invars[1].aval.shape) == shape and \
                tuple(p.invars[0].aval.shape) == shape:
            # ln(pow(A, B)) => select(B == 0, 0, ln(|A|) * B) (B * ln(A) for complex A)
            base, ex = p.invars
            out = []
            if dt.kind != "c":
                ab = self._un("abs", base, e)
                out.append(ab)
                base = ab.outvars[0]
            lg = self._un("log", base, e, e.params)
            m = self._bin("mul", lg.outvars[0], ex, e)
            out += [lg, m]
            if dt.kind == "c":
                out[-1] = self._bin("mul", lg.outvars[0], ex, e, out=e.outvars[0])
                return out
            zero = self.consts.atom(np.zeros(shape, dt) if shape else np.zeros((), dt),
                                    dt, shape)
            z0 = Literal(np.zeros((), dt)[()], ShapedArray((), dt))
            isz = Eqn(self.p["eq"], [ex, z0], {},
                      [Var(ShapedArray(shape, np.dtype(np.bool_)))], e.source_info)
            out += [isz, Eqn(self.p["select_n"], [isz.outvars[0], m.outvars[0], zero], {},
                             [e.outvars[0]], e.source_info)]
            return out
        for root, k in (("sqrt", 0.5), ("rsqrt", -0.5)):  # ln(sqrt(A)) => ln(A) * 0.5
            r = self._eqn_of(a, root, e)
            if r is not None:
                lg = self._un("log", r.invars[0], e, e.params)
                half = Literal(np.asarray(k, dt)[()], ShapedArray((), dt))
                return [lg, self._bin("mul", lg.outvars[0], half, e, out=e.outvars[0])]
        return None


def _prims():
    from jaxlite._src.prims import elementwise as ew
    return {"add": ew.add_p, "sub": ew.sub_p, "mul": ew.mul_p, "div": ew.div_p,
            "neg": ew.neg_p, "exp": ew.exp_p, "sqrt": ew.sqrt_p, "rsqrt": ew.rsqrt_p,
            "log": ew.log_p, "abs": ew.abs_p, "eq": ew.eq_p, "select_n": ew.select_n_p}


def live_eqns(jaxpr):
    """``jaxpr`` without the equations whose outputs nothing uses (effectful ones kept)."""
    live = {a for a in jaxpr.outvars if isinstance(a, Var)}
    kept = []
    for e in reversed(jaxpr.eqns):
        if any(v in live for v in e.outvars) or has_effects(e):
            kept.append(e)
            live.update(a for a in e.invars if isinstance(a, Var))
    kept.reverse()
    return jaxpr.replace(eqns=kept)


def simplify_arithmetic(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Rewrite float arithmetic as XLA's algebraic simplifier does, to a fixed point."""
    jaxpr = closed.jaxpr
    if not any(_Rewriter._eligible(e) for e in jaxpr.eqns):
        return closed
    prims = _prims()
    consts = list(closed.consts)
    changed_any = False
    for _ in range(_MAX_SWEEPS):
        rw = _Rewriter(ClosedJaxpr(jaxpr, consts), prims)
        new = rw.run(jaxpr)
        if not rw.changed:
            break
        changed_any = True
        jaxpr, consts = live_eqns(new), rw.consts.consts
    if not changed_any:
        return closed
    return ClosedJaxpr(jaxpr, consts)


# ------------------------------------------------------------------ loop constants

def _bind_constants(closed: ClosedJaxpr, values: dict) -> ClosedJaxpr:
    """``closed`` with its inputs at positions ``values`` (position -> constant value)
    replaced, in its equations and results, by those constants (the inputs stay, unused)."""
    jaxpr = closed.jaxpr
    env, constvars, consts = {}, list(jaxpr.constvars), list(closed.consts)
    for k, val in values.items():
        v = jaxpr.invars[k]
        val = np.asarray(val, v.aval.dtype)
        if val.ndim == 0:
            env[v] = Literal(val[()], ShapedArray((), v.aval.dtype, v.aval.weak_type))
        else:
            nv = Var(v.aval)
            constvars.append(nv)
            consts.append(val)
            env[v] = nv

    def sub(a):
        return env.get(a, a) if isinstance(a, Var) else a
    eqns = [e.replace(invars=[sub(a) for a in e.invars]) for e in jaxpr.eqns]
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, eqns, [sub(a) for a in jaxpr.outvars],
                             jaxpr.debug_info), consts)


def _passes_through(body: ClosedJaxpr, k_in, k_out):
    return body.jaxpr.outvars[k_out] is body.jaxpr.invars[k_in]


def _sunk_params(e, vals):
    """The params of control-flow equation ``e`` with its inputs whose values ``vals`` gives
    (None: not a constant) bound inside its jaxprs as XLA sinks them, or None."""
    from jaxlite._src.compiler.inline import inline_calls
    name, p = e.primitive.name, e.params
    if name == "while":
        cn, bn = p["cond_nconsts"], p["body_nconsts"]
        # (a carry passed through a nested call counts as passed through, as XLA sees the
        # body with its calls inlined; the constants are bound into the body as it is, whose
        # nested jits stay functions of their own for ``inline_calls``'s ``foreign``)
        body, cond = p["body_jaxpr"], p["cond_jaxpr"]
        seen = inline_calls(body)
        nk = len(e.invars) - cn - bn
        cvals = {k: vals[k] for k in range(cn) if vals[k] is not None}
        bvals = {k: vals[cn + k] for k in range(bn) if vals[cn + k] is not None}
        for k in range(nk):
            v = vals[cn + bn + k]
            if v is not None and _passes_through(seen, bn + k, k):
                bvals[bn + k] = v
                cvals[cn + k] = v
        if cvals or bvals:
            return dict(p, body_jaxpr=_bind_constants(body, bvals) if bvals else body,
                        cond_jaxpr=_bind_constants(cond, cvals) if cvals else cond)
    elif name == "scan":
        nc, nk = p["num_consts"], p["num_carry"]
        body = p["jaxpr"]
        seen = inline_calls(body)
        bvals = {k: vals[k] for k in range(nc) if vals[k] is not None}
        for k in range(nk):
            v = vals[nc + k]
            if v is not None and _passes_through(seen, nc + k, k):
                bvals[nc + k] = v
        if bvals:
            return dict(p, jaxpr=_bind_constants(body, bvals))
    elif name == "cond":
        ops = {k - 1: v for k, v in enumerate(vals) if k and v is not None}
        if ops:
            return dict(p, branches=tuple(_bind_constants(b, ops) for b in p["branches"]))
    return None


def _array_value(v):
    """A constant's value as an array, or None for what is no array constant (a reference
    whose contents change as the program runs, a key, ...)."""
    return np.asarray(v) if isinstance(v, (np.ndarray, np.generic, bool, int, float,
                                           complex)) else None


def _xla_constant(v):
    """``v`` if XLA holds it as a constant instruction, None if as a broadcast (an array
    of one repeated value: JAX lowers such constants as broadcasts of a scalar, and XLA's
    simplifier turns any other into one)."""
    if v is None or v.ndim == 0 or v.size < 2:
        return v
    flat = np.ascontiguousarray(v).reshape(-1)
    size = flat.dtype.itemsize
    raw = flat.view(f"u{size}") if size in (1, 2, 4, 8) else \
        flat.view(np.uint8).reshape(flat.size, -1)
    return None if bool((raw == raw[:1]).all()) else v


def _sinkable(vals, far):
    """The operands' values as they are sunk: those at positions ``far`` (reaching the loop
    from outside its function) only when they are constants to XLA (not broadcasts)."""
    return [_xla_constant(v) if k in far else v for k, v in enumerate(vals)]


def loop_constants_bound(e, vals, foreign=None):
    """Control-flow equation ``e`` whose inputs are the constants ``vals``, with them bound
    inside its jaxprs as XLA sinks them: ``fold_constants`` evaluates a loop so at compile
    time, so that the result has the bits XLA's program computes when it runs it (XLA does
    not fold while loops: it runs them, their invariant constants sunk into the body)."""
    if e.primitive.name not in ("while", "scan", "cond"):
        return e
    far = (foreign or {}).get(e.outvars[0], ()) if e.outvars else ()
    new = _sunk_params(e, _sinkable([_array_value(v) for v in vals], far))
    return e if new is None else e.replace(params=new)


def sink_loop_constants(closed: ClosedJaxpr, foreign=None) -> ClosedJaxpr:
    """Constants reaching a while loop's body or condition (its constants, and the carries
    the body passes through unchanged starting from a constant), a scan's body (the same)
    or a cond's branches become constants inside them, as XLA's
    ``WhileLoopConstantSinking`` and conditional simplification make them: the bodies'
    arithmetic with them is then simplified like any constant's. JAX's MLIR stage sinks
    every constant of the loop's own function; what comes from outside it (``foreign``,
    from ``inline_calls``: through a nested jit) is sunk by XLA, which keeps broadcasts
    out, so an array of one repeated value stays a loop operand."""
    jaxpr = closed.jaxpr
    known = dict(zip(jaxpr.constvars, closed.consts))
    foreign = foreign or {}

    def val(a):
        if isinstance(a, Literal):
            return np.asarray(a.val)
        return _array_value(known.get(a)) if isinstance(a, Var) else None

    eqns, changed = [], False
    for e in jaxpr.eqns:
        if e.primitive.name in ("while", "scan", "cond"):
            far = foreign.get(e.outvars[0], ()) if e.outvars else ()
            new = _sunk_params(e, _sinkable([val(a) for a in e.invars], far))
            if new is not None:
                changed = True
                e = e.replace(params=new)
        eqns.append(e)
    if not changed:
        return closed
    return ClosedJaxpr(jaxpr.replace(eqns=eqns), closed.consts)
