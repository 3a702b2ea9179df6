"""Forward and reverse mode: the JVP trace, linearize (JVP + partial evaluation) and the
transpose interpreter (backward pass), as JAX builds them.

Rules live in the primitive classes: ``jvp(primals, tangents, **params)`` returns
``(primal_out, tangent_out)`` where tangents may be ``Zero``; ``transpose(ct, *args,
**params)`` returns one cotangent (or None) per argument, where the linear arguments are
``UndefinedPrimal`` and the others are known values. No primitive-specific code here: the
values ``Zero`` and ``UndefinedPrimal`` and the helpers that make or add tangents come from
``prims/ad_util.py``.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.core.dtypes import float0
from jaxlite._src.core.ir import Literal, cached_on_jaxpr
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE
from jaxlite._src.core.trace import Trace, Tracer, ctx, set_current_trace
from jaxlite._src.interpreters.partial_eval import PartialEvalTrace
# The AD values and their helpers live with the rules that take them (prims/ad_util.py).
from jaxlite._src.prims.refs import RefAccum
from jaxlite._src.prims.ad_util import (  # noqa: F401
    UndefinedPrimal, Zero, add_tangents, instantiate, tangent_aval, zeros_like_aval)
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["Zero", "UndefinedPrimal", "JVPTrace", "JVPTracer", "jvp_flat", "linearize_flat",
           "backward_pass", "float0", "tangent_aval", "instantiate", "add_tangents",
           "zeros_like_aval"]


# ----------------------------------------------------------------------------- JVP

def _as_primal(p):
    # a Python scalar primal becomes a weakly typed array, as JAX's transformations make it:
    # rules read ``.dtype`` of their primals
    return asarray_value(p) if type(p) in (float, int, complex, bool) else p


class JVPTracer(Tracer):
    """A value being differentiated forward: its primal and its tangent."""
    __slots__ = ("primal", "tangent")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent

    @property
    def aval(self):
        return aval_of_value(self.primal)

    def _provenance(self):
        p = self.primal
        return p._provenance() if isinstance(p, Tracer) else ""


class JVPTrace(Trace):
    """Applies each primitive's JVP rule to (primal, tangent) pairs."""
    __slots__ = ()

    def lift(self, x):
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, None

    def process_primitive(self, prim, args, params):
        primals, tangents = [], []
        nonzero = False
        for a in args:
            p, t = self.lift(a)
            primals.append(p)
            if t is None or type(t) is Zero:
                tangents.append(t)
            else:
                tangents.append(t)
                nonzero = True
        with set_current_trace(self.parent):
            if not nonzero and not prim.jvp_always:
                return prim.bind(*primals, **params)
            rule = prim.jvp
            if rule is NOT_DIFFERENTIABLE:
                out = prim.bind(*primals, **params)
                return out
            if rule is None:
                raise NotImplementedError(
                    f"Differentiation rule for '{prim.name}' is not implemented in jaxlite.")
            tangents = [Zero.like(p) if t is None else t for p, t in zip(primals, tangents)]
            out_p, out_t = rule(primals, tangents, **params)
        if prim.multiple_results:
            return [self.pack(p, t) for p, t in zip(out_p, out_t)]
        return self.pack(out_p, out_t)

    def pack(self, p, t):
        # a float0 tangent (an integer output's instantiated zero, e.g. from a jit call's
        # JVP) is a symbolic zero: later rules must not compute with it
        if t is None or type(t) is Zero or aval_of_value(t).dtype == float0:
            return p
        return JVPTracer(self, p, t)

    def unpack(self, x):
        """(primal, tangent) of an output of the traced function (tangent may be Zero)."""
        if isinstance(x, JVPTracer) and x._trace is self:
            return x.primal, x.tangent
        return x, Zero.like(x)


def has_python_scalar_primal(x) -> bool:
    """Whether ``x`` is a JVP tracer (at any depth) whose primal is still a Python scalar, as
    ``jvp`` leaves them: jnp's promotion converts such a value (JAX converts concrete
    tracers), which makes its primal and tangent arrays."""
    while isinstance(x, JVPTracer):
        x = x.primal
        if type(x) in (float, int, complex, bool):
            return True
    return False


def jvp_flat(fun, primals, tangents):
    """Run ``fun`` (flat lists in, flat list out) forward-differentiated; returns
    (primal outputs, tangent outputs) with Zero for tangents that are known to vanish."""
    trace = JVPTrace(ctx.trace)
    # Python scalar primals stay Python scalars, as in JAX's jvp (a custom_jvp rule sees
    # them as given); grad and linearize make them arrays (below)
    tracers = [JVPTracer(trace, p, t) if type(t) is not Zero else p
               for p, t in zip(primals, tangents)]
    with set_current_trace(trace):
        outs = fun(*tracers)
    pairs = [trace.unpack(o) for o in outs]
    return [p for p, _ in pairs], [t for _, t in pairs]


# ----------------------------------------------------------------------------- linearize

def linearize_flat(fun, primals, diff_mask=None):
    """Linearize ``fun`` at ``primals``: returns (primal outputs, linear ClosedJaxpr-like
    triple). The JVP runs over a partial-evaluation trace in which primals are known and
    tangents unknown, so primal work happens now and only tangent work is staged.

    Returns (out_primals, jaxpr, consts, out_tangent_is_zero) where ``jaxpr`` maps the
    tangents of the differentiated inputs to the output tangents.
    """
    parent = ctx.trace
    pe = PartialEvalTrace(parent)
    diff_mask = diff_mask or [True] * len(primals)
    tangents = [pe.new_arg(tangent_aval(aval_of_value(p))) if d else
                Zero.like(p) for p, d in zip(primals, diff_mask)]
    jvp_trace = JVPTrace(pe)
    tracers = [JVPTracer(jvp_trace, _as_primal(p), t) if type(t) is not Zero else p
               for p, t in zip(primals, tangents)]
    with set_current_trace(jvp_trace):
        outs = fun(*tracers)
    pairs = [jvp_trace.unpack(o) for o in outs]
    out_primals = [p for p, _ in pairs]
    zero_mask = [type(t) is Zero for _, t in pairs]
    out_tangents = [None if z else t for (_, t), z in zip(pairs, zero_mask)]
    jaxpr, consts = pe.finish([t for t in out_tangents if t is not None])
    return out_primals, jaxpr, consts, zero_mask, [
        tangent_aval(aval_of_value(p)) for p in out_primals]


# ----------------------------------------------------------------------------- transpose

def backward_pass(jaxpr, consts, linear_mask, args, cts_out):
    """Transpose the linear ``jaxpr``: given cotangents of its outputs, return cotangents of
    its inputs flagged in ``linear_mask`` (others are known values in ``args``).

    Non-linear equations (all inputs known) are evaluated forward first; the linear ones are
    then transposed in reverse order. Cotangents are Zero where nothing flows.
    """
    env = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[v] = c
    linear = set()
    # the cotangent of a linear ref is a ref accumulating cotangents (a RefAccum: made
    # once, read and written by the transposes of every equation using the ref)
    ref_cts = {}
    for v, lin, a in zip(jaxpr.invars, linear_mask, args):
        if lin:
            linear.add(v)
            if _is_ref(v.aval):
                ref_cts[v] = a if isinstance(a, RefAccum) else RefAccum(v.aval)
        else:
            env[v] = a

    def is_linear(a):
        return type(a) is not Literal and a in linear

    def read(a):
        if type(a) is Literal:
            return ArrayImpl(np.asarray(a.val, a.aval.dtype), a.aval.weak_type)
        return env[a]

    lin_eqns = []
    for eqn in jaxpr.eqns:
        # (a tangent ref made with known operands, ``stage_known``, is linear)
        stage = eqn.primitive.stage_known
        if any(is_linear(a) for a in eqn.invars) or (stage is not None and
                                                     stage(eqn.params)):
            lin_eqns.append(eqn)
            linear.update(eqn.outvars)
            for v in eqn.outvars:
                if _is_ref(v.aval):
                    ref_cts[v] = RefAccum(v.aval)
        else:
            out = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
            outs = out if eqn.primitive.multiple_results else [out]
            for v, o in zip(eqn.outvars, outs):
                env[v] = o

    ct_env = {}

    def write_ct(v, ct):
        if type(v) is Literal or ct is None or type(ct) is Zero or v not in linear:
            return
        acc = ref_cts.get(v)
        if acc is not None:     # (a value's cotangent flowing into a ref's: freeze)
            acc.accum(ct)
            return
        prev = ct_env.get(v)
        ct_env[v] = ct if prev is None else add_tangents(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        write_ct(v, ct)
    # the linear values some output depends on: JAX's linearized jaxpr keeps (after DCE) and
    # transposes exactly the equations computing them, zero cotangents or not
    live = {v for v in jaxpr.outvars if type(v) is not Literal}
    for eqn in reversed(lin_eqns):
        prim = eqn.primitive
        cts = [ref_cts[v] if v in ref_cts else ct_env.pop(v, None) for v in eqn.outvars]
        is_live = any(v in live for v in eqn.outvars)
        if is_live:
            live.update(a for a in eqn.invars if type(a) is not Literal)
        if all(c is None for c in cts) and not (prim.transpose_always and is_live) and not any(
                type(a) is not Literal and a in ref_cts for a in eqn.invars):
            continue    # (an equation using a ref always moves cotangents through it)
        cts = [Zero(tangent_aval(v.aval)) if c is None else c
               for c, v in zip(cts, eqn.outvars)]
        rule = prim.transpose
        if rule is None or rule is NOT_DIFFERENTIABLE:
            raise NotImplementedError(
                f"Transpose rule (for reverse-mode differentiation) for '{prim.name}' is not "
                "implemented in jaxlite.")
        ins = [(ref_cts[a] if a in ref_cts else UndefinedPrimal(a.aval)) if is_linear(a)
               else read(a) for a in eqn.invars]
        cts_in = rule(cts if prim.multiple_results else cts[0], *ins, **eqn.params)
        for a, ct in zip(eqn.invars, cts_in):
            if is_linear(a):
                write_ct(a, ct)
    # (a ref whose accumulator the caller passed in keeps its cotangent there)
    return [(None if isinstance(a, RefAccum) else ref_cts[v].freeze() if v in ref_cts
             else ct_env.get(v)) if lin and type(v) is not Literal else None
            for v, lin, a in zip(jaxpr.invars, linear_mask, args)]


def _is_ref(aval) -> bool:
    return getattr(aval, "is_ref", False)


# ----------------------------------------------------------------------------- jaxpr-level

def jvp_jaxpr_nz(closed, nonzeros, instantiate_outs):
    """Like ``jvp_jaxpr`` but tangent outputs exist only where they are structurally nonzero
    or ``instantiate_outs`` asks for them; returns (ClosedJaxpr, out_nonzeros)."""
    inst = tuple(instantiate_outs) if isinstance(instantiate_outs, (list, tuple)) else \
        bool(instantiate_outs)
    out, nz = _jvp_jaxpr_nz(closed, tuple(bool(n) for n in nonzeros), inst)
    return out, list(nz)


@cached_on_jaxpr
def _jvp_jaxpr_nz(closed, nonzeros, instantiate_outs):
    from jaxlite._src.core.ir import ClosedJaxpr
    from jaxlite._src.interpreters.eval import eval_jaxpr
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    avals = closed.in_avals
    n = len(avals)
    inst = list(instantiate_outs) if isinstance(instantiate_outs, (list, tuple)) else \
        [bool(instantiate_outs)] * len(closed.out_avals)
    store = {}

    def fun(*args):
        primals, nz_tangents = list(args[:n]), iter(args[n:])
        tangents = [next(nz_tangents) if nz else Zero(tangent_aval(a))
                    for a, nz in zip(avals, nonzeros)]
        outs_p, outs_t = jvp_flat(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                                  primals, tangents)
        nz = [type(t) is not Zero or i for t, i in zip(outs_t, inst)]
        store["nz"] = nz
        return list(outs_p) + [instantiate(t) for t, z in zip(outs_t, nz) if z]

    t_avals = [tangent_aval(a) for a, nz in zip(avals, nonzeros) if nz]
    jaxpr, _, consts = trace_to_jaxpr(fun, list(avals) + t_avals)
    return ClosedJaxpr(jaxpr, consts), tuple(store["nz"])


def jvp_jaxpr(closed, nonzeros):
    """The JVP of ``closed`` as a new ClosedJaxpr taking (primals..., tangents of the inputs
    flagged in ``nonzeros``...) and returning (primal outs..., tangent outs...), with zero
    tangents instantiated."""
    return jvp_jaxpr_nz(closed, nonzeros, True)[0]


def transpose_jaxpr(closed, linear_mask, ref_mask=(), split_known=False):
    """The transpose of ``closed`` (linear in the inputs flagged by ``linear_mask``) as a
    ClosedJaxpr taking (non-linear inputs..., output cotangents...) and returning the
    cotangents of the linear inputs (zeros instantiated).

    ``split_known``: ``closed`` may compute non-linear values with equations that also
    compute linear ones (a rematerialized body recomputing its primal part); it is first
    split by partial evaluation with the linear inputs unknown, and only the unknown part
    is transposed (JAX's ``remat_transpose``)."""
    return _transpose_jaxpr(closed, tuple(bool(x) for x in linear_mask),
                            tuple(bool(x) for x in ref_mask) if ref_mask else (),
                            bool(split_known) and not any(ref_mask))


def transpose_args(args):
    """For a transpose rule calling ``transpose_jaxpr``: (linear mask, ref mask, known
    operands) of its arguments, where the cotangent of a ref (a RefAccum) is passed to the
    transposed program as its ref (a known operand the program updates)."""
    linear = [type(a) is UndefinedPrimal for a in args]
    refs = [isinstance(a, RefAccum) for a in args]
    known = [a.inst().ref if r else a for a, lin, r in zip(args, linear, refs) if not lin]
    return linear, (refs if any(refs) else ()), known


@cached_on_jaxpr
def _transpose_jaxpr(closed, linear_mask, ref_mask=(), split_known=False):
    from jaxlite._src.core.ir import ClosedJaxpr
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    avals = closed.in_avals
    known_avals = [a for a, lin in zip(avals, linear_mask) if not lin]
    ct_avals = [tangent_aval(a) for a in closed.out_avals]
    nk = len(known_avals)

    refs = list(ref_mask) or [False] * len(avals)
    if split_known and any(linear_mask):
        from jaxlite._src.interpreters.eval import eval_jaxpr
        from jaxlite._src.interpreters.partial_eval import partial_eval_jaxpr
        known_j, unknown_j, _, n_res = partial_eval_jaxpr(closed, list(linear_mask), True)
        n_lin = sum(linear_mask)

        def fun(*args):
            kouts = eval_jaxpr(known_j.jaxpr, known_j.consts, *args[:nk])
            res = kouts[len(kouts) - n_res:]
            cts = backward_pass(unknown_j.jaxpr, unknown_j.consts,
                                [False] * n_res + [True] * n_lin,
                                list(res) + [None] * n_lin, list(args[nk:]))[n_res:]
            lin_avals = [a for a, lin in zip(avals, linear_mask) if lin]
            return [instantiate(Zero(tangent_aval(a)) if c is None else c)
                    for c, a in zip(cts, lin_avals)]
        jaxpr, _, consts = trace_to_jaxpr(fun, known_avals + ct_avals)
        return ClosedJaxpr(jaxpr, consts)

    def fun(*args):
        known, cts = iter(args[:nk]), list(args[nk:])
        # (a known ref operand flagged in ref_mask is the cotangent ref of a linear ref)
        full = [None if lin else RefAccum(a, next(known)) if r else next(known)
                for lin, r, a in zip(linear_mask, refs, avals)]
        res = backward_pass(closed.jaxpr, closed.consts,
                            [lin or r for lin, r in zip(linear_mask, refs)], full, cts)
        return [instantiate(Zero(tangent_aval(a)) if c is None else c)
                for c, a, lin in zip(res, avals, linear_mask) if lin]

    jaxpr, _, consts = trace_to_jaxpr(fun, known_avals + ct_avals)
    return ClosedJaxpr(jaxpr, consts)
