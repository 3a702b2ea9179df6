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


def _has_jaxprs(e):
    return any(isinstance(v, (ClosedJaxpr, Jaxpr)) or isinstance(v, tuple) and v and
               isinstance(v[0], (ClosedJaxpr, Jaxpr)) for v in e.params.values())


def _own(e):
    """Whether JAX lowers call ``e`` to a function of its own (a nested jit), rather than
    inline into the caller's function."""
    return getattr(e.primitive, "own_function", False)


def inline_calls(closed: ClosedJaxpr, foreign: dict | None = None) -> ClosedJaxpr:
    """Replace equations of inlinable call primitives (nested jit) and of library primitives
    lowered through a traceable function by their bodies.

    ``foreign`` (a dict to fill) receives, for each control-flow equation of the result
    (keyed by its first output), the positions of its array operands that are no constant
    of its own function: computed from the function's parameters or from calls. JAX lowers
    a nested jit (a primitive with ``own_function``) to a function of its own, and its MLIR
    stage sinks the constants of one function into that function's loops; what reaches a
    loop through a call is sunk later by XLA's ``WhileLoopConstantSinking`` only if it is a
    constant there, and a uniform array is a broadcast to XLA, which that pass keeps out
    (``simplify.sink_loop_constants``)."""
    jaxpr = closed.jaxpr
    bodies = {}
    if not any(_body(e, bodies) is not None for e in jaxpr.eqns):
        return closed
    constvars = list(jaxpr.constvars)
    consts = list(closed.consts)
    env = {}
    eqns = []

    def note(e, ins, mine):
        # (a function's own constants: its literals, closed-over constants and what it
        # computes from them alone)
        if foreign is None:
            return
        if _has_jaxprs(e) and e.outvars:
            far = frozenset(k for k, a in enumerate(ins)
                            if isinstance(a, Var) and a not in mine and a.aval.shape)
            if far:
                foreign[e.outvars[0]] = far
        if all(not isinstance(a, Var) or a in mine for a in ins) and not has_effects(e):
            mine.update(e.outvars)

    def emit(j: Jaxpr, in_atoms, inner_consts, caller_mine, own):
        # (``mine``: the constants of the function the body's equations end up in: a new
        # one for a nested jit, else the caller's)
        mine = set() if own else caller_mine
        local = {}
        for v, c in zip(j.constvars, inner_consts):
            nv = Var(v.aval)
            constvars.append(nv)
            consts.append(c)
            local[v] = nv
            mine.add(nv)
        for v, a in zip(j.invars, in_atoms):
            local[v] = a
        for e in j.eqns:
            ins = [local.get(a, a) if isinstance(a, Var) else a for a in e.invars]
            sub = _body(e, bodies)
            if sub is not None:
                outs = emit(sub.jaxpr, ins, sub.consts, mine, _own(e))
                for v, o in zip(e.outvars, outs):
                    local[v] = o
                continue
            outs = [Var(v.aval) for v in e.outvars]
            for v, o in zip(e.outvars, outs):
                local[v] = o
            ne = Eqn(e.primitive, ins, e.params, outs, e.source_info)
            note(ne, ins, mine)
            eqns.append(ne)
        return [local.get(a, a) if isinstance(a, Var) else a for a in j.outvars]

    top = set(jaxpr.constvars)
    for e in jaxpr.eqns:
        ins = [_subst(env, a) for a in e.invars]
        sub = _body(e, bodies)
        if sub is not None:
            outs = emit(sub.jaxpr, ins, sub.consts, top, _own(e))
            for v, o in zip(e.outvars, outs):
                env[v] = o
        else:
            ne = e.replace(invars=ins)
            note(ne, ins, top)
            eqns.append(ne)
    outvars = [_subst(env, a) for a in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(constvars, jaxpr.invars, eqns, outvars, jaxpr.debug_info), consts)
