"""Backward sharding propagation: layouts for values the forward pass leaves whole.

The partitioner's forward pass gives each result the layout of its operands, so a value
computed only from whole (replicated or uncommitted) inputs stays whole even when every use
of it meets a split operand, or the program's ``out_shardings`` ask for a split result: the
chain is computed whole on every device and sliced where it meets the split value. GSPMD also
propagates layouts backward, from uses to definitions, so that such chains run on blocks.

``backward_layouts`` does that for one jaxpr, generically from each primitive's
``sharding_rule`` (which operand dimension becomes which result dimension):

1. an estimate of every value's layout, forward, as the partitioner will give it (the first
   operand's split of each result dimension wins; unknown (None) for primitives partitioned by
   their own ``partition`` hook, calls, primitives with dimensions computed whole, or without
   a rule);
2. backward, the layout each use wants of its operand: the result's layout (the one asked of
   it, else its estimate) mapped through the rule, contracted dimensions whole;
3. a value estimated whole gets a layout when all its uses want the same split layout (a
   program output wants the layout ``out_shardings`` asks for, else nothing: as in JAX, an
   unconstrained result takes the layout it is computed in; a use of unknown layout wants
   nothing certain, so the value stays whole).

Splitting a whole value is a local slice (no communication), so the result never moves more
bytes than the forward pass alone: values are only ever split where every use would split
them anyway, one step earlier.
"""
from __future__ import annotations

from jaxlite._src.core import dtypes
from jaxlite._src.core.ir import Literal

__all__ = ["backward_layouts", "first_split"]


def first_split(layouts, dims_map, ndim):
    """The forward pass's result layout: for each result dimension, the split of the first
    operand dimension mapped to it (an axis used once); returns (layout, axes used)."""
    out = [()] * ndim
    used = set()
    for d, m in zip(layouts, dims_map):
        for k, od in enumerate(m):
            if od is not None and d[k] and not out[od] and not (set(d[k]) & used):
                out[od] = d[k]
                used |= set(d[k])
    return tuple(out), used


def _rule(prim, eqn, rules):
    """The primitive's dimension map for ``eqn`` when the generic forward pass applies to it
    (None: its layout is not known here). ``rules`` caches the rule's answer per equation
    (the forward pass reads it there)."""
    if getattr(prim, "partition", None) is not None or getattr(prim, "inlinable", False):
        return None
    rule = getattr(prim, "sharding_rule", None)
    if rule is None:
        return None
    try:
        m = rule([a.aval for a in eqn.invars], **eqn.params)
    except Exception:  # noqa: BLE001 - no usable rule: layout unknown
        m = None
    rules[eqn] = m
    if getattr(prim, "whole_dims", None) is not None or (
            prim.multiple_results and len({v.aval.ndim for v in eqn.outvars}) != 1):
        return None
    return m


def _whole(layout):
    return layout is not None and not any(layout)


def backward_layouts(jaxpr, in_layouts, asked, factor, rules):
    """(chosen, per_use) for ``jaxpr``: ``chosen`` {var: layout}, the values the forward
    pass leaves whole but whose uses all want split the same way (their equation is computed
    on blocks); ``per_use`` {(equation index, operand index): layout}, the split layout an
    equation wants of an operand estimated whole (a local slice of it: each use of a whole
    input may take its own). ``in_layouts``: the layout of each input; ``asked``: {var:
    layout} already asked of values (``out_shardings``, sharding constraints); ``factor(axes)``:
    the number of blocks a split over ``axes`` makes; ``rules``: a dict filled with each
    equation's ``sharding_rule`` answer (for the forward pass)."""
    est = {}
    for v, d in zip(jaxpr.invars, in_layouts):
        est[v] = d
    for v in jaxpr.constvars:
        est[v] = ((),) * v.aval.ndim

    def layout_of(a):
        if type(a) is Literal:
            return ((),) * a.aval.ndim
        return est.get(a)
    maps = []
    for e in jaxpr.eqns:
        m = _rule(e.primitive, e, rules)
        maps.append(m)
        ins = [layout_of(a) for a in e.invars]
        if m is None or any(d is None for d in ins):
            for v in e.outvars:
                est[v] = None
            continue
        shape = e.outvars[0].aval.shape
        out, _ = first_split(ins, m, len(shape))
        out = tuple(a if not a or shape[k] % factor(a) == 0 else () for k, a in enumerate(out))
        for v in e.outvars:
            est[v] = out
    wants = {}
    for v in jaxpr.outvars:
        # (a result whose layout is not asked for takes the one its computation gets)
        if type(v) is not Literal and v in asked:
            wants.setdefault(v, []).append(asked[v])
    chosen = {}

    def resolve(v):
        if v in asked:
            return asked[v]
        if not _whole(est.get(v)) or isinstance(v.aval.dtype, dtypes.ExtendedDType):
            return None
        ws = wants.get(v)
        if not ws or any(w is None for w in ws) or len(set(ws)) != 1 or _whole(ws[0]):
            return None
        w = ws[0]
        if any(axes and s % factor(axes) for s, axes in zip(v.aval.shape, w)):
            return None
        chosen[v] = w
        return w
    per_use = {}
    n = len(jaxpr.eqns)
    for i, e, m in zip(range(n - 1, -1, -1), reversed(jaxpr.eqns), reversed(maps)):
        ts = []
        for v in e.outvars:
            t = resolve(v)
            ts.append(t if t is not None else est.get(v))
        target = ts[0] if ts and all(t == ts[0] for t in ts) else None
        for k, a in enumerate(e.invars):
            if type(a) is Literal:
                continue
            if m is None or target is None:
                want = None
            else:
                want = tuple(target[od] if od is not None else () for od in m[k])
                if _whole(est.get(a)) and not _whole(want) and not any(
                        axes and s % factor(axes) for s, axes in zip(a.aval.shape, want)) \
                        and not isinstance(a.aval.dtype, dtypes.ExtendedDType):
                    per_use[(i, k)] = want
            wants.setdefault(a, []).append(want)
    for v in jaxpr.invars:
        resolve(v)
    return chosen, per_use
