"""Arrays of extended dtypes (typed PRNG keys) as NumPy data: the physical pass and the eager
rule.

The transformations carry a key array as one value with an extended aval (``key<fry>[3]``),
as JAX does. Below them, values are NumPy data: the dtype's ``physical_aval`` (``u32[3,2]``,
the key words in trailing dimensions). ``physicalize`` rewrites a jaxpr so that nothing in it
has an extended type, before the other passes and the code generator see it:

- a primitive with a ``physical`` rule (the key primitives) is replaced by what that rule
  computes on the data;
- a higher-order primitive gets its jaxprs physicalized;
- any other primitive applied to key arrays (reshape, transpose, slicing, gather,
  concatenate, select_n, broadcast_in_dim: what indexing, vmap, scan and cond do to keys) is
  applied to the data with the trailing key dimensions mapped over by its batching rule, so
  no primitive needs code for extended dtypes; one whose outputs are not all keys rejects
  them with JAX's error.

Eager execution (``Primitive.bind`` with a concrete key array among its operands) takes the
same route on the data, then wraps the results of extended type again.
"""
from __future__ import annotations

import weakref

from jaxlite._src.core import dtypes
from jaxlite._src.core import primitive as core_primitive
from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from jaxlite._src.core.trace import set_current_trace
from jaxlite._src.interpreters.batching import batch_fun
from jaxlite._src.interpreters.staging import trace_to_jaxpr

__all__ = ["physicalize", "needs_physical", "apply_physical", "eager_extended"]

_ext = dtypes.ExtendedDType
_needs_cache = weakref.WeakKeyDictionary()
_closed_cache = weakref.WeakKeyDictionary()


def _is_ext(aval) -> bool:
    return isinstance(aval.dtype, _ext)


def _phys(aval):
    return aval.dtype.physical_aval(aval) if isinstance(aval.dtype, _ext) else aval


def _jaxpr_params(params):
    for v in params.values():
        for j in (v if type(v) is tuple else (v,)):
            if isinstance(j, (ClosedJaxpr, Jaxpr)):
                return True
    return False


def _eqn_needs(eqn) -> bool:
    if getattr(eqn.primitive, "physical", None) is not None:
        return True
    if any(_is_ext(a.aval) for a in eqn.invars) or any(_is_ext(v.aval) for v in eqn.outvars):
        return True
    return _params_need(eqn.params)


def _params_need(params) -> bool:
    for v in params.values():
        for j in (v if type(v) is tuple else (v,)):
            if isinstance(j, ClosedJaxpr):
                j = j.jaxpr
            if isinstance(j, Jaxpr) and needs_physical(j):
                return True
    return False


def needs_physical(jaxpr: Jaxpr) -> bool:
    """Whether anything in ``jaxpr`` (or a jaxpr it carries) has an extended dtype."""
    hit = _needs_cache.get(jaxpr)
    if hit is None:
        hit = (any(_is_ext(v.aval) for v in jaxpr.invars) or
               any(_is_ext(v.aval) for v in jaxpr.constvars) or
               any(_is_ext(a.aval) for a in jaxpr.outvars) or
               any(_eqn_needs(e) for e in jaxpr.eqns))
        _needs_cache[jaxpr] = hit
    return hit


def _phys_param(v):
    if type(v) is tuple:
        return tuple(_phys_param(j) for j in v)
    if isinstance(v, ClosedJaxpr):
        return physicalize(v)
    if isinstance(v, Jaxpr) and needs_physical(v):
        closed = physicalize(ClosedJaxpr(v, [None] * len(v.constvars)))
        if closed.consts[len(v.constvars):]:
            raise NotImplementedError("jaxlite: key arrays in an open jaxpr parameter whose "
                                      "data needs constants")
        return closed.jaxpr
    return v


def _generic(prim, in_avals, out_avals, vals, params):
    """``prim`` on key data: the trailing key dimensions mapped over with its batch rule."""
    ext_out = [a.dtype for a in out_avals if _is_ext(a)]
    if len(ext_out) != len(out_avals):
        names = ", ".join(str(a.dtype) for a in in_avals)
        raise TypeError(f"{prim.name} does not accept dtype{'s' if len(in_avals) > 1 else ''}"
                        f" {names}.")
    trail = tuple(ext_out[0].physical_shape)
    for d in ext_out[1:] + [a.dtype for a in in_avals if _is_ext(a)]:
        if tuple(d.physical_shape) != trail:
            raise TypeError(f"{prim.name}: operands of extended dtypes {d} and {ext_out[0]} "
                            "have different data layouts")
    mapped = [_is_ext(a) for a in in_avals]

    def run(xs, level):
        if level < 0:
            out = prim.bind(*xs, **params)
            return list(out) if prim.multiple_results else [out]
        in_dims = [len(a.shape) + level if m else None for a, m in zip(in_avals, mapped)]
        out_dims = [len(a.shape) + level for a in out_avals]
        outs, _ = batch_fun(lambda *ys: run(ys, level - 1), trail[level], list(xs), in_dims,
                            out_dims)
        return outs

    return run(vals, len(trail) - 1)


def apply_physical(prim, in_avals, out_avals, vals, params):
    """The outputs (a list, as data) of ``prim`` applied to the data ``vals`` of operands of
    abstract values ``in_avals`` (giving ``out_avals``)."""
    rule = getattr(prim, "physical", None)
    if rule is not None:
        out = rule(in_avals, *vals, **params)
        return list(out) if prim.multiple_results else [out]
    if _jaxpr_params(params):
        new = {k: _phys_param(v) for k, v in params.items()}
        out = prim.bind(*vals, **new)
        return list(out) if prim.multiple_results else [out]
    if any(_is_ext(a) for a in in_avals) or any(_is_ext(a) for a in out_avals):
        own = getattr(prim, "physical_extended", None)   # e.g. eq/ne of keys
        if own is not None:
            return [own(in_avals, out_avals, *vals, **params)]
        return _generic(prim, in_avals, out_avals, vals, params)
    out = prim.bind(*vals, **params)
    return list(out) if prim.multiple_results else [out]


def _const_data(aval, c):
    if not _is_ext(aval) or c is None:
        return c
    return aval.dtype.to_physical(c)


def physicalize(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``closed`` with every value of extended dtype replaced by its data (see the module
    docstring); returned unchanged when it has none."""
    jaxpr = closed.jaxpr
    if not needs_physical(jaxpr):
        return closed
    hit = _closed_cache.get(closed)
    if hit is not None:
        return hit
    consts = [_const_data(v.aval, c) for v, c in zip(jaxpr.constvars, closed.consts)]
    env = {}

    def fresh(v):
        nv = Var(_phys(v.aval)) if _is_ext(v.aval) else v
        env[v] = nv
        return nv

    constvars = [fresh(v) for v in jaxpr.constvars]
    invars = [fresh(v) for v in jaxpr.invars]

    def sub(a):
        return a if type(a) is Literal else env.get(a, a)

    eqns = []
    for eqn in jaxpr.eqns:
        ins = [sub(a) for a in eqn.invars]
        if not _eqn_needs(eqn):
            eqns.append(eqn.replace(invars=ins) if ins != eqn.invars else eqn)
            continue
        in_avals = [a.aval for a in eqn.invars]
        out_avals = [v.aval for v in eqn.outvars]
        prim, params = eqn.primitive, eqn.params

        def fn(*xs):
            return apply_physical(prim, in_avals, out_avals, list(xs), params)

        with set_current_trace(None):
            sj, tconsts, cvals = trace_to_jaxpr(fn, [_phys(a) for a in in_avals], parent=None)
        local = dict(zip(sj.invars, ins))
        for v, c in zip(sj.constvars, cvals):
            nv = Var(v.aval)
            constvars.append(nv)
            consts.append(c)
            local[v] = nv
        for e in sj.eqns:
            outs = [Var(v.aval) for v in e.outvars]
            for v, nv in zip(e.outvars, outs):
                local[v] = nv
            eqns.append(e.replace(invars=[a if type(a) is Literal else local[a]
                                          for a in e.invars], outvars=outs,
                                  source_info=eqn.source_info))
        for v, a in zip(eqn.outvars, sj.outvars):
            env[v] = a if type(a) is Literal else local[a]
    outvars = [sub(a) for a in jaxpr.outvars]
    new = ClosedJaxpr(Jaxpr(constvars, invars, eqns, outvars, jaxpr.debug_info), consts)
    _needs_cache[new.jaxpr] = False
    _closed_cache[closed] = new
    return new


def eager_extended(prim, args, params):
    """Run ``prim`` eagerly on operands some of which are concrete arrays of extended
    dtype: on their data, with results of extended dtype wrapped again."""
    in_avals = [aval_of_value(a) for a in args]
    core_primitive.check_extended(prim, in_avals, params)
    vals = [a.dtype.to_physical(a) if _is_ext(av) else a for a, av in zip(args, in_avals)]
    out = prim.abstract_eval(*in_avals, **params)
    out_avals = list(out) if prim.multiple_results else [out]
    outs = apply_physical(prim, in_avals, out_avals, vals, params)
    outs = [a.dtype.from_physical(o) if _is_ext(a) else o for a, o in zip(out_avals, outs)]
    return outs if prim.multiple_results else outs[0]


core_primitive.extended_eager[0] = eager_extended
