"""``jax.interpreters.ad`` for extension primitives: the rule tables and the helpers JAX
offers to fill them (``defjvp``, ``deflinear``, ``defbilinear`` ...), written over jaxlite's
own AD values (``Zero``, ``UndefinedPrimal``) so rules written for JAX receive and return the
objects jaxlite's interpreters use."""
from __future__ import annotations

from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.extend.primitive import primitive_jvps, primitive_transposes
from jaxlite._src.interpreters.ad import JVPTrace, JVPTracer
from jaxlite._src.prims.ad_util import (
    UndefinedPrimal, Zero, add_tangents, instantiate, zeros_like_aval)

__all__ = ["Zero", "UndefinedPrimal", "JVPTrace", "JVPTracer", "primitive_jvps",
           "primitive_transposes", "defjvp", "defjvp2", "defjvp_zero", "deflinear",
           "deflinear2", "defbilinear", "is_undefined_primal", "instantiate_zeros",
           "zeros_like_aval", "add_tangents", "add_jaxvals", "get_primitive_transpose",
           "zeros_like_jaxval"]


def is_undefined_primal(x):
    """Whether ``x`` is a linear input of a transpose rule (an ``UndefinedPrimal``)."""
    return type(x) is UndefinedPrimal


def instantiate_zeros(t):
    """``t`` with a symbolic ``Zero`` replaced by an array of zeros."""
    return instantiate(t)


def zeros_like_jaxval(x):
    """An array of zeros shaped like the value ``x``."""
    return zeros_like_aval(aval_of_value(x))


def add_jaxvals(x, y):
    """The sum of two tangent values (``add_any``)."""
    return add_tangents(x, y)


def get_primitive_transpose(prim):
    """The transpose rule of ``prim`` (KeyError when it has none)."""
    return primitive_transposes[prim]


def _sum_tangents(ts):
    out = None
    for t in ts:
        if t is None or type(t) is Zero:
            continue
        out = t if out is None else add_tangents(out, t)
    return out


def defjvp(prim, *jvprules):
    """JVP of ``prim`` as a sum of one rule per operand: ``rule(g, *primals, **params)``
    gives the output tangent for operand tangent ``g`` (None: that operand has no
    derivative)."""
    def jvp_rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        ts = [rule(t, *primals, **params) for rule, t in zip(jvprules, tangents)
              if rule is not None and type(t) is not Zero]
        total = _sum_tangents(ts)
        if total is None:
            total = [Zero.like(o) for o in out] if prim.multiple_results else Zero.like(out)
        return out, total
    primitive_jvps[prim] = jvp_rule


def defjvp2(prim, *jvprules):
    """As ``defjvp``, with rules that also take the output: ``rule(g, ans, *primals)``."""
    def jvp_rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        ts = [rule(t, out, *primals, **params) for rule, t in zip(jvprules, tangents)
              if rule is not None and type(t) is not Zero]
        total = _sum_tangents(ts)
        return out, (Zero.like(out) if total is None else total)
    primitive_jvps[prim] = jvp_rule


def defjvp_zero(prim):
    """Declare ``prim``'s output tangent zero whatever its inputs' tangents."""
    def jvp_rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if prim.multiple_results:
            return out, [Zero.like(o) for o in out]
        return out, Zero.like(out)
    primitive_jvps[prim] = jvp_rule


def deflinear(prim, transpose_rule):
    """``prim`` is linear in all its operands: its JVP applies it to the tangents, and its
    transpose is ``transpose_rule(ct, **params)`` (one cotangent per operand)."""
    def jvp_rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, ([Zero.like(o) for o in out] if prim.multiple_results
                         else Zero.like(out))
        return out, prim.bind(*[instantiate(t) for t in tangents], **params)

    def transpose(ct, *args, **params):
        if type(ct) is Zero:
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return transpose_rule(ct, **params)
    primitive_jvps[prim] = jvp_rule
    primitive_transposes[prim] = transpose


def deflinear2(prim, transpose_rule):
    """As ``deflinear``, with ``transpose_rule(ct, *args, **params)`` also given the
    operands (``UndefinedPrimal`` for the linear ones)."""
    def jvp_rule(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            return out, Zero.like(out)
        return out, prim.bind(*[instantiate(t) for t in tangents], **params)

    def transpose(ct, *args, **params):
        if type(ct) is Zero:
            return [Zero(a.aval) if is_undefined_primal(a) else None for a in args]
        return transpose_rule(ct, *args, **params)
    primitive_jvps[prim] = jvp_rule
    primitive_transposes[prim] = transpose


def defbilinear(prim, lhs_rule, rhs_rule):
    """``prim(x, y)`` is linear in each operand: the JVP is ``prim(dx, y) + prim(x, dy)``;
    ``lhs_rule(ct, x, y, **params)`` / ``rhs_rule(...)`` transpose it."""
    def jvp_rule(primals, tangents, **params):
        x, y = primals
        dx, dy = tangents
        out = prim.bind(x, y, **params)
        ts = []
        if type(dx) is not Zero:
            ts.append(prim.bind(dx, y, **params))
        if type(dy) is not Zero:
            ts.append(prim.bind(x, dy, **params))
        total = _sum_tangents(ts)
        return out, (Zero.like(out) if total is None else total)

    def transpose(ct, x, y, **params):
        if is_undefined_primal(x):
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]
    primitive_jvps[prim] = jvp_rule
    primitive_transposes[prim] = transpose

