"""Inlining before code generation: nested jit calls and library primitives lowered through a
traceable function replaced by their bodies (``inline_calls``, run by ``passes.optimize``
and by the loop simplifications that must see a body as XLA does)."""
from __future__ import annotations

from jaxlite._src.core.ir import ClosedJaxpr, Eqn, Jaxpr, Var, has_effects

__all__ = ["inline_calls"]


def _subst(env, a):
    return env.get(a, a) if isinstance(a, Var) else a


def _body(e, bodies):
    """The closed jaxpr ``e`` runs in place, when it is inlined (a nested jit or other
    ``inlinable`` call; a library primitive whose registered lowering is a traceable
    function, which XLA compiles inline as well: equinox's loop primitives then update
    their operands in the loop's buffers), or None."""
    p = e.primitive
    if getattr(p, "inlinable", False):
        return e.params[getattr(p, "inline_param", "jaxpr")]
    get = getattr(p, "inline_body", None)
    if get is None or has_effects(e):
        return None
    if e not in bodies:
        bodies[e] = get(e)
    return bodies[e]


def inline_calls(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Replace equations of inlinable call primitives (nested jit) and of library primitives
    lowered through a traceable function by their bodies."""
    jaxpr = closed.jaxpr
    bodies = {}
    if not any(_body(e, bodies) is not None for e in jaxpr.eqns):
        return closed
    constvars = list(jaxpr.constvars)
    consts = list(closed.consts)
    env = {}
    eqns = []

    def emit(j: Jaxpr, in_atoms, inner_consts):
        local = {}
        for v, c in zip(j.constvars, inner_consts):
            nv = Var(v.aval)
            constvars.append(nv)
            consts.append(c)
            local[v] = nv
        for v, a in zip(j.invars, in_atoms):
            local[v] = a
        for e in j.eqns:
            ins = [local.get(a, a) if isinstance(a, Var) else a for a in e.invars]
            sub = _body(e, bodies)
            if sub is not None:
                outs = emit(sub.jaxpr, ins, sub.consts)
                for v, o in zip(e.outvars, outs):
                    local[v] = o
                continue
            outs = [Var(v.aval) for v in e.outvars]
            for v, o in zip(e.outvars, outs):
                local[v] = o
            eqns.append(Eqn(e.primitive, ins, e.params, outs, e.source_info))
        return [local.get(a, a) if isinstance(a, Var) else a for a in j.outvars]

    for e in jaxpr.eqns:
        ins = [_subst(env, a) for a in e.invars]
        sub = _body(e, bodies)
        if sub is not None:
            outs = emit(sub.jaxpr, ins, sub.consts)
            for v, o in zip(e.outvars, outs):
                env[v] = o
        else:
            eqns.append(e.replace(invars=ins))
    outvars = [_subst(env, a) for a in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, eqns, outvars, jaxpr.debug_info), consts)
