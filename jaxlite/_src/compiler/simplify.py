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

The rules live in the primitives' classes, as all their rules do: an arithmetic
primitive's ``simplify(s, eqn)`` (prims/xla_simplify.py: XLA's handler of that operation;
``commutative`` ones get a constant operand on the right first), a loop's or cond's
``sink_constants(s, params, vals)``, and ``broadcast_in_dim``'s ``xla_broadcast`` flag for
what XLA matches as ``Broadcast(x)``. This pass runs them to a fixed point and gives them
their context ``s`` (``_Rewriter``: constants and how XLA sees them, the equations around,
builders; ``_Sinking``: binding constants into a jaxpr).

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


def simplify(closed: ClosedJaxpr, foreign=None) -> ClosedJaxpr:
    """Sink constants into loop bodies and cond branches, then rewrite float arithmetic as
    XLA's algebraic simplifier does (see the module docstring). ``foreign``: what
    ``inline_calls`` found reaching loops from outside their function."""
    closed = sink_loop_constants(closed, foreign)
    return simplify_arithmetic(closed)


# ------------------------------------------------------------------ the rewriter

def _fold(fn, *vals):
    with np.errstate(all="ignore"):
        out = fn(*vals)
    return np.asarray(out, vals[0].dtype)


class _Rewriter:
    """One sweep over a jaxpr's equations, rewriting each float arithmetic equation by its
    primitive's ``simplify`` rule (XLA's ``AlgebraicSimplifierVisitor`` handler of that
    operation: prims/xla_simplify.py), and the context those rules get: what is constant in
    the jaxpr (literals, constvars with values, broadcasts of scalar constants too big to
    fold), how XLA sees each operand, and builders of constants and equations."""

    def __init__(self, closed):
        self.known = dict(zip(closed.jaxpr.constvars, closed.consts))
        self.bcast = {}      # var -> scalar value (a broadcast of a scalar constant)
        self.uniform = {}    # constvar -> its one value, or None
        self.constvars = list(closed.jaxpr.constvars)
        self.consts = list(closed.consts)
        self.changed = False

    def run(self, jaxpr):
        self.made = {}
        self.n_uses = {}
        for e in jaxpr.eqns:
            for a in e.invars:
                if isinstance(a, Var):
                    self.n_uses[a] = self.n_uses.get(a, 0) + 1
        for a in jaxpr.outvars:
            if isinstance(a, Var):
                self.n_uses[a] = self.n_uses.get(a, 0) + 1
        self.env = {}
        out = []
        env = self.env
        for e in jaxpr.eqns:
            if env and any(isinstance(a, Var) and a in env for a in e.invars):
                e = e.replace(invars=[self._atom(a) for a in e.invars])
            if getattr(e.primitive, "xla_broadcast", False) and not e.invars[0].aval.shape:
                v = self.value(e.invars[0])
                if v is not None:
                    self.bcast[e.outvars[0]] = v
            rule = self.rule(e)
            new, e = self._rewrite(e, rule) if rule is not None else (None, e)
            if new is None:
                out.append(e)
            else:
                self.changed = True
                out.extend(new)
            for ne in (new or [e]):
                if len(ne.outvars) == 1:
                    self.made[ne.outvars[0]] = ne
        outvars = [self._atom(a) for a in jaxpr.outvars]
        return Jaxpr(self.constvars, jaxpr.invars, out, outvars, jaxpr.debug_info)

    def _atom(self, a):
        while isinstance(a, Var) and a in self.env:
            a = self.env[a]
        return a

    @staticmethod
    def rule(e):
        """The ``simplify`` rule of float arithmetic equation ``e`` (None: not rewritten)."""
        rule = getattr(e.primitive, "simplify", None)
        return rule if rule is not None and len(e.outvars) == 1 and \
            e.outvars[0].aval.dtype.kind in "fc" and not e.params.get("accuracy") else None

    def _rewrite(self, e, rule):
        if getattr(e.primitive, "commutative", False):
            # MLIR's canonicalization (before XLA sees the program) puts a constant operand
            # of a commutative operation on the right
            x, y = e.invars
            if self.value(x) is not None and self.value(y) is None:
                # (a new equation: the one given may be the input jaxpr's own)
                e = e.replace(invars=[y, x])
        return rule(self, e), e

    # constants -----------------------------------------------------------------------
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
            if not flat.size:     # (an empty constant: nothing to rewrite with)
                self.uniform[a] = None
            else:
                raw = flat.view(np.uint8).reshape(flat.size, -1)
                self.uniform[a] = np.asarray(flat[0]) if bool((raw == raw[:1]).all()) \
                    else None
        return self.uniform[a]

    def kind(self, a, e):
        """How XLA sees atom ``a`` as an operand of equation ``e``: "C" (a plain constant),
        "B" (a broadcast of a scalar constant), "BN" (a broadcast of an array constant), or
        None (not a constant)."""
        shape = tuple(e.outvars[0].aval.shape)
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

    def is_all(self, a, x):
        """Whether ``a`` is a numeric constant all of whose elements equal ``x``."""
        v = self.value(a)
        if v is None or v.dtype.kind not in "fciu":
            return False
        if v.ndim == 0:
            return bool(v == x)
        one = self.scalar(a)       # (a uniform array's value, cached)
        if one is not None:
            return bool(one == x)
        with np.errstate(all="ignore"):
            return bool(np.all(v == x))

    def same(self, a, b):
        """Whether two atoms are the same value to XLA (CSE merges equal constants)."""
        if a is b:
            return True
        va, vb = self.value(a), self.value(b)
        if va is None or vb is None or va.dtype != vb.dtype or va.shape != vb.shape:
            return False
        return bool(np.array_equal(np.ascontiguousarray(va).reshape(-1).view(np.uint8),
                                    np.ascontiguousarray(vb).reshape(-1).view(np.uint8)))

    def pow2(self, a):
        """IsAllFpConstantPowerOf2: a float constant whose elements are all +-2^k."""
        v = self.value(a)
        if v is None or v.dtype.kind != "f":
            return False
        m, _ = np.frexp(np.abs(v.astype(np.float64)))
        return bool(np.all(m == 0.5))

    fold = staticmethod(_fold)      # fn(*vals) in vals[0]'s dtype, without warnings

    def cfold(self, fn, e, *cs):
        """The constant ``fn(*values of cs)`` as an atom for an operand of ``e``."""
        dt = e.outvars[0].aval.dtype
        kinds = [self.kind(c, e) for c in cs]
        if all(k == "B" for k in kinds):
            vals = [self.scalar(c) for c in cs]
        else:
            vals = [self.value(c) for c in cs]
        vals = [np.asarray(v, dt) for v in vals]
        return self.atom(_fold(fn, *vals), dt, e.outvars[0].aval.shape)

    # the program around an equation -------------------------------------------------
    def uses(self, a):
        """How many equations (and results) of the jaxpr read ``a``."""
        return self.n_uses.get(a)

    def eqn_of(self, a, prim, e):
        """The equation of ``prim`` computing float operand ``a`` of ``e`` (not broadcast:
        of ``e``'s result shape), or None."""
        m = self.made.get(a) if isinstance(a, Var) else None
        return m if m is not None and m.primitive is prim and \
            m.outvars[0].aval.dtype.kind in "fc" and \
            tuple(a.aval.shape) == tuple(e.outvars[0].aval.shape) else None

    def broadcast_operand(self, op, shape):
        """(b, broadcast equation or None) when ``op`` is XLA's ``Broadcast(b)`` of a
        non-constant ``b`` as an operand of a result of ``shape``, else None."""
        if tuple(op.aval.shape) != shape:
            return (op, None) if isinstance(op, Var) else None
        bc = self.made.get(op) if isinstance(op, Var) else None
        if bc is None or not getattr(bc.primitive, "xla_broadcast", False) or \
                self.value(bc.invars[0]) is not None or \
                not isinstance(bc.invars[0], Var) or len(bc.invars) != 1:
            return None
        return bc.invars[0], bc

    # new equations ------------------------------------------------------------------
    def var(self, shape, dtype):
        return Var(ShapedArray(tuple(shape), dtype))

    def bin(self, prim, x, y, e, out=None):
        """An equation of binary ``prim`` on ``x`` and ``y`` (``e``'s dtype and source)."""
        aval = e.outvars[0].aval
        shape = np.broadcast_shapes(tuple(x.aval.shape), tuple(y.aval.shape))
        o = out if out is not None else self.var(shape, aval.dtype)
        return Eqn(prim, [x, y], {}, [o], e.source_info)

    def un(self, prim, x, e, params=None, out=None):
        """An equation of unary ``prim`` on ``x`` (``e``'s source)."""
        o = out if out is not None else self.var(x.aval.shape, x.aval.dtype)
        return Eqn(prim, [x], dict(params or {}), [o], e.source_info)

    def replace_by(self, e, a):
        """``e``'s result is the atom ``a`` (when their shapes agree, as XLA's
        ReplaceInstructionIfCompatible)."""
        o = e.outvars[0]
        if tuple(a.aval.shape) != tuple(o.aval.shape) or a.aval.dtype != o.aval.dtype:
            return None
        if isinstance(a, Literal):
            return None
        self.env[o] = a
        return []


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
    if not any(_Rewriter.rule(e) is not None for e in jaxpr.eqns):
        return closed
    consts = list(closed.consts)
    changed_any = False
    for _ in range(_MAX_SWEEPS):
        rw = _Rewriter(ClosedJaxpr(jaxpr, consts))
        new = rw.run(jaxpr)
        if not rw.changed:
            break
        changed_any = True
        jaxpr, consts = live_eqns(new), rw.consts
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


class _Sinking:
    """The context the control-flow primitives' ``sink_constants`` rules get (``While``,
    ``Scan``, ``Cond``): binding constants into a jaxpr, and which carries a body passes
    through."""

    bind = staticmethod(_bind_constants)

    @staticmethod
    def passes_through(body: ClosedJaxpr):
        """A test ``(k_in, k_out)``: whether ``body``'s result ``k_out`` is its input
        ``k_in`` unchanged, as XLA sees the body, its nested calls inlined."""
        from jaxlite._src.compiler.inline import inline_calls
        seen = inline_calls(body).jaxpr
        return lambda k_in, k_out: seen.outvars[k_out] is seen.invars[k_in]


_SINKING = _Sinking()


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
    rule = getattr(e.primitive, "sink_constants", None)
    if rule is None:
        return e
    far = (foreign or {}).get(e.outvars[0], ()) if e.outvars else ()
    new = rule(_SINKING, e.params, _sinkable([_array_value(v) for v in vals], far))
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
        rule = getattr(e.primitive, "sink_constants", None)
        if rule is not None:
            far = foreign.get(e.outvars[0], ()) if e.outvars else ()
            new = rule(_SINKING, e.params, _sinkable([val(a) for a in e.invars], far))
            if new is not None:
                changed = True
                e = e.replace(params=new)
        eqns.append(e)
    if not changed:
        return closed
    return ClosedJaxpr(jaxpr.replace(eqns=eqns), closed.consts)
