"""Partial evaluation: run what is known now, stage what depends on unknown inputs.

A ``PartialEvalTrace`` owns tracers for the unknown values. A primitive none of whose
arguments is unknown is handed to the parent trace (evaluated eagerly, or recorded by an
enclosing jit); otherwise it becomes an equation of the staged jaxpr, and the known values it
reads become the jaxpr's constants (the residuals). ``linearize`` runs a JVP over this trace
with known primals and unknown tangents; ``partial_eval_jaxpr`` splits a jaxpr in two.
"""
from __future__ import annotations

from jaxlite._src.core.trace import set_current_trace
from jaxlite._src.interpreters.staging import StagingTrace, StagingTracer

__all__ = ["PartialEvalTrace", "partial_eval_jaxpr"]


class PartialEvalTrace(StagingTrace):
    """A staging trace that forwards primitives with only known inputs to its parent."""
    __slots__ = ()

    def process_primitive(self, prim, args, params):
        for a in args:
            if isinstance(a, StagingTracer) and a._trace is self:
                break
        else:
            stage = prim.stage_known
            if stage is None or not stage(params):
                with set_current_trace(self.parent):
                    return prim.bind(*args, **params)
            # (a primitive may ask to be staged with known operands: the ref a JVP makes
            # for a tangent belongs to the linear part)
        rule = getattr(prim, "partial_eval", None)
        if rule is not None:
            return rule(self, args, params)
        return super().process_primitive(prim, args, params)

    def is_unknown(self, x):
        return isinstance(x, StagingTracer) and x._trace is self

    def finish(self, outs):
        """The staged jaxpr computing ``outs`` from the unknown inputs, and the values of its
        constants (known values: concrete arrays or tracers of enclosing traces)."""
        jaxpr = self.to_jaxpr(outs)
        consts = [t for t, _ in self.tracer_consts] + list(self.const_vals)
        return jaxpr, consts


def partial_eval_jaxpr(closed, unknowns, instantiate=False):
    """Split ``closed`` (a ClosedJaxpr) given which inputs are unknown.

    Returns (known ClosedJaxpr, unknown Jaxpr, out_unknowns, num_residuals): the known jaxpr
    takes the known inputs and returns the known outputs followed by residuals; the unknown
    jaxpr takes the residuals followed by the unknown inputs and returns the unknown outputs.
    ``instantiate`` (a bool, or one per output) forces outputs to be unknown.
    """
    from jaxlite._src.core.ir import ClosedJaxpr
    from jaxlite._src.interpreters.eval import eval_jaxpr
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    jaxpr = closed.jaxpr
    known_avals = [v.aval for v, u in zip(jaxpr.invars, unknowns) if not u]
    result = {}

    def known_fun(*known_in):
        pe = PartialEvalTrace(_current())
        it = iter(known_in)
        args = [pe.new_arg(v.aval) if u else next(it) for v, u in zip(jaxpr.invars, unknowns)]
        with set_current_trace(pe):
            outs = eval_jaxpr(jaxpr, closed.consts, *args)
        inst = list(instantiate) if isinstance(instantiate, (list, tuple)) else \
            [bool(instantiate)] * len(outs)
        out_unknown = [pe.is_unknown(o) or i for o, i in zip(outs, inst)]
        unknown_outs = [o for o, u in zip(outs, out_unknown) if u]
        staged = pe.to_jaxpr(unknown_outs)
        residuals = [t for t, _ in pe.tracer_consts]
        n_tr = len(residuals)
        # the staged jaxpr's constants: residual tracers (from the known trace) first, then
        # concrete arrays, which stay constants of the unknown jaxpr
        result["unknown"] = staged.replace(constvars=staged.constvars[n_tr:],
                                           invars=staged.constvars[:n_tr] + staged.invars)
        result["unknown_consts"] = list(pe.const_vals)
        result["out_unknown"] = out_unknown
        result["n_res"] = n_tr
        known_outs = [o for o, u in zip(outs, out_unknown) if not u]
        return known_outs + residuals

    kjaxpr, _, kconsts = trace_to_jaxpr(known_fun, known_avals)
    known = ClosedJaxpr(kjaxpr, kconsts)
    unknown = ClosedJaxpr(result["unknown"], result["unknown_consts"])
    return known, unknown, result["out_unknown"], result["n_res"]


def _current():
    from jaxlite._src.core.trace import ctx
    return ctx.trace

