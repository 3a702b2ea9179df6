"""Evaluate a jaxpr by binding each equation's primitive in the current trace.

This is how transformations re-trace a jaxpr they hold (the body of a jit call, a custom rule,
a linear jaxpr): evaluating it under a JVP, partial-eval or staging trace transforms it.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.ir import ClosedJaxpr, Literal
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["eval_jaxpr", "jaxpr_as_fun"]


def eval_jaxpr(jaxpr, consts, *args):
    """Run ``jaxpr`` on ``consts`` and ``args``; returns the list of outputs."""
    env = {}
    for v, x in zip(jaxpr.constvars, consts):
        env[v] = x
    if len(args) != len(jaxpr.invars):
        raise TypeError(f"jaxpr takes {len(jaxpr.invars)} arguments, got {len(args)}")
    for v, x in zip(jaxpr.invars, args):
        env[v] = x

    def read(a):
        if type(a) is Literal:
            return ArrayImpl(np.asarray(a.val, a.aval.dtype), a.aval.weak_type)
        return env[a]

    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        out = eqn.primitive.bind(*ins, **eqn.params)
        if eqn.primitive.multiple_results:
            for v, o in zip(eqn.outvars, out):
                env[v] = o
        else:
            env[eqn.outvars[0]] = out
    return [read(a) for a in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr):
    """A Python function evaluating ``closed`` on positional arguments (list of outputs)."""
    def fun(*args):
        return eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return fun
