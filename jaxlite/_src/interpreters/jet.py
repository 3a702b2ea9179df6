"""Taylor mode (``jax.experimental.jet``): the jet trace propagates truncated Taylor series.

A ``JetTracer`` holds a primal and its series ``[c1, ..., cK]`` (coefficients not scaled by
factorials; ``None`` for a value whose series is zero). A primitive applies its ``jet`` rule
(prims/taylor.py has the helpers), a primitive without a derivative gives a zero series, a
call primitive (jit, custom_jvp/vjp calls, as JAX's jet differentiates their bodies) runs
its body under the jet trace, and any other differentiable primitive is expanded through
nested forward-mode derivatives of that one primitive: ``g(t) = prim(x(t))`` has the
coefficients ``g^(k)(0) / k!``, exact though exponential in the order (the common primitives
have rules).
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE
from jaxlite._src.core.trace import Trace, Tracer, ctx, set_current_trace
from jaxlite._src.interpreters.ad import jvp_flat
from jaxlite._src.interpreters.eval import eval_jaxpr
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.ad_util import Zero, zeros_like_aval
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["JetTrace", "JetTracer", "jet_flat"]


class JetTracer(Tracer):
    """A value with its truncated Taylor series (``terms`` None: the series is zero)."""
    __slots__ = ("primal", "terms")

    def __init__(self, trace, primal, terms):
        self._trace = trace
        self.primal = primal
        self.terms = terms

    @property
    def aval(self):
        return aval_of_value(self.primal)


class JetTrace(Trace):
    """Applies each primitive's Taylor rule to (primal, series) pairs of order ``order``."""
    __slots__ = ("order",)

    def __init__(self, parent, order):
        super().__init__(parent)
        self.order = order

    def unpack(self, x):
        if isinstance(x, JetTracer) and x._trace is self:
            return x.primal, x.terms
        return x, None

    def process_primitive(self, prim, args, params):
        primals, series = zip(*[self.unpack(a) for a in args]) if args else ((), ())
        primals, series = list(primals), list(series)
        with set_current_trace(self.parent):
            if all(s is None for s in series) or prim.jvp is NOT_DIFFERENTIABLE:
                out = prim.bind(*primals, **params)
                if prim.multiple_results:
                    return [JetTracer(self, o, None) for o in out]
                return JetTracer(self, out, None)
            series = [[zeros_like_aval(aval_of_value(p))] * self.order if s is None else s
                      for p, s in zip(primals, series)]
            body = _call_body(prim, params, len(primals))
            if body is not None:
                outs = self._run_body(body, primals, series)
                return outs if prim.multiple_results else outs[0]
            rule = getattr(prim, "jet", None)
            if rule is not None:
                out, terms = rule(primals, series, **params)
            else:
                out, terms = _by_nested_jvp(prim, primals, series, params, self.order)
        if prim.multiple_results:
            return [JetTracer(self, o, list(t)) for o, t in zip(out, terms)]
        return JetTracer(self, out, list(terms))

    def _run_body(self, closed, primals, series):
        tracers = [JetTracer(self, p, s) for p, s in zip(primals, series)]
        with set_current_trace(self):
            return eval_jaxpr(closed.jaxpr, closed.consts, *tracers)


def _call_body(prim, params, nargs):
    """The ClosedJaxpr a call primitive runs on exactly its operands, or None."""
    name = getattr(prim, "inline_param", None)
    if name is None or not getattr(prim, "inlinable", False):
        return None
    closed = params.get(name)
    if closed is None or not hasattr(closed, "jaxpr") or len(closed.jaxpr.invars) != nargs:
        return None
    return closed


def _by_nested_jvp(prim, primals, series, params, order):
    """The series of ``prim`` from its derivatives along t of ``prim(x(t))`` at t = 0."""
    live = [np.issubdtype(aval_of_value(p).dtype, np.inexact) for p in primals]

    def g(t):
        xs = []
        for p, s, on in zip(primals, series, live):
            if on:
                acc, tk = p, None
                for c in s:
                    tk = t if tk is None else u.mul(tk, t)
                    acc = u.add(acc, u.mul(c, u.convert(tk, aval_of_value(c).dtype)))
                xs.append(acc)
            else:
                xs.append(p)
        out = prim.bind(*xs, **params)
        return list(out) if prim.multiple_results else [out]

    def derivative(h):
        def dh(t):
            _, tangents = jvp_flat(h, [t], [ArrayImpl(np.ones((), t.dtype), False)])
            return [zeros_like_aval(x.aval) if type(x) is Zero else x for x in tangents]
        return dh

    wide = any(aval_of_value(p).dtype == np.float64 for p in primals)
    t0 = ArrayImpl(np.zeros((), np.float64 if wide else np.float32), False)
    fns = [g]
    for _ in range(order):
        fns.append(derivative(fns[-1]))
    vals = [f(t0) for f in fns]
    outs = vals[0]
    terms = [[u.mul(d[i], u.const(d[i], 1.0 / math.factorial(k)))
              for k, d in enumerate(vals[1:], 1)] for i in range(len(outs))]
    return (outs if prim.multiple_results else outs[0],
            terms if prim.multiple_results else terms[0])


def jet_flat(fun, primals, series, order):
    """Run ``fun`` (flat lists) on truncated Taylor series of order ``order``; returns
    (primal outputs, output series), zero series instantiated."""
    trace = JetTrace(ctx.trace, order)
    tracers = [JetTracer(trace, p, list(s)) for p, s in zip(primals, series)]
    with set_current_trace(trace):
        outs = fun(*tracers)
    pairs = [trace.unpack(o) for o in outs]
    out_primals = [p for p, _ in pairs]
    out_terms = [[zeros_like_aval(aval_of_value(p))] * order if s is None else s
                 for p, s in pairs]
    return out_primals, out_terms
