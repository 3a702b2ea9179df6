"""Jaxpr-to-jaxpr passes run before code generation: inlining of nested jit calls, constant
folding, common-subexpression elimination and dead-code elimination."""
from __future__ import annotations

import contextlib
import threading

import numpy as np

from jaxlite._src.compiler.inline import inline_calls
from jaxlite._src.compiler.physical import physicalize
from jaxlite._src.compiler.simplify import live_eqns, loop_constants_bound, simplify
from jaxlite._src.core import fpe
from jaxlite._src.core.avals import ShapeDtypeStruct
from jaxlite._src.core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, has_effects
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["optimize", "inline_calls", "fold_constants", "cse", "absorb_permutations",
           "absorb_sums", "keep_sum_order", "unit_sums", "masked_updates",
           "contract_products", "dce"]

# Constant folding never materialises results bigger than this many elements.
FOLD_MAX_SIZE = 1 << 16



def _check_valued(closed):
    # a ShapeDtypeStruct the traced function returned or closed over is a constant with a
    # type and no value (eval_shape and make_jaxpr accept it): running it fails, as in JAX
    for c in closed.consts:
        if isinstance(c, ShapeDtypeStruct):
            raise TypeError("A ShapeDtypeStruct does not have a value and cannot be used as "
                            "a constant in a JAX function: pass arrays, or use it only under "
                            f"jax.eval_shape / jax.make_jaxpr (got {c}).")


def optimize(closed: ClosedJaxpr, xla_simplify: bool = True) -> ClosedJaxpr:
    """Run the standard pass pipeline and return an equivalent, smaller ClosedJaxpr.
    ``xla_simplify=False`` leaves out the rewrites XLA makes after lowering (``simplify``),
    for the program as JAX hands it to XLA (its HLO text)."""
    _check_valued(closed)
    if any(isinstance(c, ArrayImpl) or hasattr(type(c), "_runtime_value")
           for c in closed.consts):   # (make_jaxpr's consts; refs become their buffers)
        closed = ClosedJaxpr(closed.jaxpr, [c._value if isinstance(c, ArrayImpl) and
                                            c.is_fully_addressable else
                                            c._runtime_value() if
                                            hasattr(type(c), "_runtime_value") else c
                                            for c in closed.consts])
    closed = physicalize(closed)   # key arrays become their uint32 data
    foreign = {}    # (loop operands from outside the loop's function: a nested jit's)
    closed = inline_calls(closed, foreign)
    _check_valued(closed)
    closed = bool_products(closed)
    closed = fold_constants(closed, foreign)
    if xla_simplify:
        # XLA's algebraic simplifier's float rewrites (A / sqrt(B) => A * rsqrt(B) among
        # them); before cse, as XLA's first simplification sees the program
        closed = simplify(closed, foreign)
    closed = cse(closed)
    closed = absorb_permutations(closed)
    if not getattr(_order, "keep", False):
        closed = absorb_sums(closed)
    closed = unit_sums(closed)
    closed = masked_updates(closed)
    closed = contract_products(closed)
    closed = dce(closed)
    return closed


_order = threading.local()


@contextlib.contextmanager
def keep_sum_order():
    """Within this block ``optimize`` keeps every sum in its order (no ``absorb_sums``):
    for programs whose bits must equal another execution's, e.g. a pmap run batched on
    one thread, whose device sums must add up as the per-device programs do."""
    prev = getattr(_order, "keep", False)
    _order.keep = True
    try:
        yield
    finally:
        _order.keep = prev


def _subst(env, a):
    return env.get(a, a) if isinstance(a, Var) else a


def fold_constants(closed: ClosedJaxpr, foreign=None) -> ClosedJaxpr:
    """Evaluate at compile time the equations whose inputs are all literals or constants
    (and whose results are small), turning their outputs into constants (a loop as XLA runs
    it, with the constants it sinks: ``foreign`` as for ``simplify``)."""
    jaxpr = closed.jaxpr
    known = dict(zip(jaxpr.constvars, closed.consts))
    new_constvars = list(jaxpr.constvars)
    new_consts = list(closed.consts)
    eqns = []
    env = {}
    for e in jaxpr.eqns:
        ins = [_subst(env, a) for a in e.invars]
        prim = e.primitive
        foldable = (not getattr(prim, "no_fold", False) and not has_effects(e)
                    and all(isinstance(a, Literal) or a in known for a in ins)
                    and all(v.aval.size <= FOLD_MAX_SIZE for v in e.outvars))
        if foldable:
            vals = [a.val if isinstance(a, Literal) else known[a] for a in ins]
            try:   # (a loop as XLA runs it: its constants sunk into the body)
                out = fpe.quiet_call(prim.impl, *vals,
                                     **loop_constants_bound(e, vals, foreign).params)
            except Exception:
                foldable = False
        if not foldable:
            eqns.append(e.replace(invars=ins))
            continue
        outs = out if prim.multiple_results else [out]
        for v, o in zip(e.outvars, outs):
            o = np.asarray(o, v.aval.dtype) if np.shape(o) != () else o
            if v.aval.shape == ():
                env[v] = Literal(o, v.aval)
            else:
                nv = Var(v.aval)
                known[nv] = o
                new_constvars.append(nv)
                new_consts.append(o)
                env[v] = nv
    outvars = [_subst(env, a) for a in jaxpr.outvars]
    return ClosedJaxpr(Jaxpr(new_constvars, jaxpr.invars, eqns, outvars, jaxpr.debug_info),
                       new_consts)


def _atom_key(a):
    if isinstance(a, Literal):
        v = np.asarray(a.val)
        return ("lit", v.dtype, v.tobytes(), a.aval.weak_type)
    return a


def _params_key(params):
    try:
        key = tuple(sorted((k, _hashable(v)) for k, v in params.items()))
        hash(key)
        return key
    except TypeError:
        return None


def _hashable(v):
    if isinstance(v, (ClosedJaxpr, Jaxpr)):
        return ("jaxpr", id(v))
    if isinstance(v, np.ndarray):
        return ("nd", v.dtype, v.shape, v.tobytes())
    return v


def cse(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Merge equations that apply the same primitive with the same params to the same inputs
    (never effectful ones, nor primitives marked ``no_cse`` such as ``pure_callback``, whose
    calls JAX does not merge either)."""
    jaxpr = closed.jaxpr
    env = {}
    seen = {}
    eqns = []
    for e in jaxpr.eqns:
        ins = [_subst(env, a) for a in e.invars]
        if not getattr(e.primitive, "no_cse", False) and not has_effects(e):
            pk = _params_key(e.params)
            if pk is not None:
                key = (e.primitive, tuple(_atom_key(a) for a in ins), pk)
                prev = seen.get(key)
                if prev is not None:
                    for v, p in zip(e.outvars, prev):
                        env[v] = p
                    continue
                seen[key] = e.outvars
        eqns.append(e.replace(invars=ins))
    outvars = [_subst(env, a) for a in jaxpr.outvars]
    return ClosedJaxpr(jaxpr.replace(eqns=eqns, outvars=outvars), closed.consts)


def _use_counts(jaxpr):
    uses = {}
    for e in jaxpr.eqns:
        for a in e.invars:
            if isinstance(a, Var):
                uses[a] = uses.get(a, 0) + 1
    for a in jaxpr.outvars:
        if isinstance(a, Var):
            uses[a] = uses.get(a, 0) + 1
    return uses


def absorb_permutations(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Fold a pure relayout (``output_permutation``) of a value used nowhere else into the
    equation producing it, when that primitive can compute the permuted result directly
    (``permute_output``): e.g. ``transpose(dot_general(a, b))`` becomes ``dot_general(b, a)``,
    which yields a row-major array instead of a strided view."""
    return _absorb_into_producer(closed, "output_permutation", "permute_output")


def absorb_sums(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Fold a sum over some axes (``output_sum_axes``) of a value used nowhere else into the
    equation producing it, when that primitive can compute the summed result directly
    (``sum_output``): ``reduce_sum(dot_general(a, b), batch axes)`` becomes one contraction
    over those axes too. Such sums come from vmapped collectives (a pmap's gradient psum
    run batched) and per-example gradients; one BLAS call replaces a stack of products and
    a pass over their results. (The terms are added in another order: float results may
    differ in the last bits, as when XLA rewrites the same pattern.)"""
    return _absorb_into_producer(closed, "output_sum_axes", "sum_output")


def _absorb_into_producer(closed, consumer_rule, producer_rule):
    """Replace ``consumer(producer(...))``, where the producer's result has no other use, by
    one equation of the producer's primitive: ``consumer_rule(**params)`` describes what the
    consumer does (None: nothing to fold), ``producer_rule(that, invars, **params)`` gives
    (invars, params) of the producer computing it directly, or None."""
    jaxpr = closed.jaxpr
    producer = {}
    for i, e in enumerate(jaxpr.eqns):
        if getattr(e.primitive, producer_rule) is not None and not e.primitive.multiple_results:
            producer[e.outvars[0]] = i
    if not producer:
        return closed
    uses = _use_counts(jaxpr)
    eqns = list(jaxpr.eqns)
    dropped = set()
    for i, e in enumerate(eqns):
        rel = getattr(e.primitive, consumer_rule)
        if rel is None or not isinstance(e.invars[0], Var):
            continue
        j = producer.get(e.invars[0])
        if j is None or j in dropped or uses[e.invars[0]] != 1:
            continue
        what = rel(**e.params)
        if what is None:
            continue
        p = eqns[j]
        new = getattr(p.primitive, producer_rule)(what, p.invars, **p.params)
        if new is None:
            continue
        invars, params = new
        eqns[i] = Eqn(p.primitive, invars, params, list(e.outvars), p.source_info)
        dropped.add(j)
    if not dropped:
        return closed
    eqns = [e for k, e in enumerate(eqns) if k not in dropped]
    return ClosedJaxpr(jaxpr.replace(eqns=eqns), closed.consts)


def unit_sums(closed: ClosedJaxpr) -> ClosedJaxpr:
    """A sum over size-1 axes that a relayout just inserted into a value (autodiff's
    transpose of ``b[None]``) becomes the equation the sum's primitive gives for the value
    itself (``sum_of_unit_axes``; reduce_sum: ``add(value, 0)``, same bits), which tier 2
    fuses; the relayout may then die."""
    jaxpr = closed.jaxpr
    producer = {}
    eqns = list(jaxpr.eqns)
    changed = False
    for i, e in enumerate(eqns):
        p = e.primitive
        if p.inserts_unit_axes is not None and p.inserts_unit_axes(e):
            producer[e.outvars[0]] = e
            continue
        x = e.invars[0] if e.invars else None
        if p.sum_of_unit_axes is None or not isinstance(x, Var) or x not in producer:
            continue
        new = p.sum_of_unit_axes(e, producer[x].invars[0])
        if new is not None:
            eqns[i] = new
            changed = True
    if not changed:
        return closed
    return ClosedJaxpr(jaxpr.replace(eqns=eqns), closed.consts)


def masked_updates(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``select_n(p, x, update(x, ...))`` (either order), where nothing else reads the
    update's result, becomes the update with the selection moved into it, as the update's
    primitive writes it (``masked_update``; scatter: index vectors pointing out of bounds
    where ``p`` keeps ``x``), as XLA's simplifier rewrites it. A vmapped loop's update of a
    carried buffer (equinox's while loops: the batched predicate selects between the
    updated and the old buffer) is then one update, made in place, not a whole-buffer
    select per step. Same values."""
    jaxpr = closed.jaxpr
    made = {e.outvars[0]: e for e in jaxpr.eqns if len(e.outvars) == 1}
    uses = _use_counts(jaxpr)
    eqns, dropped, changed = list(jaxpr.eqns), set(), False
    for i, e in enumerate(eqns):
        if not e.primitive.selects_cases or len(e.invars) != 3 or \
                not all(isinstance(a, Var) for a in e.invars):
            continue
        pred, a, b = e.invars
        for x, upd, when in ((a, b, True), (b, a, False)):
            u_eqn = made.get(upd)
            rule = getattr(u_eqn.primitive, "masked_update", None) if u_eqn else None
            if rule is None or uses[upd] != 1 or u_eqn.invars[0] is not x or \
                    id(u_eqn) in dropped:
                continue
            new = rule(u_eqn, pred, made.get(pred), when)
            if new is None:
                continue
            new[-1] = new[-1].replace(outvars=list(e.outvars))
            eqns[i] = new
            dropped.add(id(u_eqn))
            changed = True
            break
    if not changed:
        return closed
    out = []
    for e in eqns:
        if isinstance(e, list):
            out.extend(e)
        elif id(e) not in dropped:
            out.append(e)
    return ClosedJaxpr(jaxpr.replace(eqns=out), closed.consts)


_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


def _contracted_dtypes():
    # float64 too where the processor has FMA instructions (XLA:CPU's LLVM contracts
    # float64 then, at every shape; checked against JAX with x64)
    from jaxlite._src.cpu_math.xla64 import FUSED
    return frozenset((_F32, _F64) if FUSED else (_F32,))


def contract_products(closed: ClosedJaxpr) -> ClosedJaxpr:
    """A float32 (and, on a processor with FMA, float64) product whose only use is an
    addition or subtraction becomes, with it, one fused multiply-add, as XLA:CPU's generated
    code computes it: LLVM contracts ``x * y + z`` when the product has no other use (the
    first operand's product when both are) into ``xla_fma``, ``x * y - z`` into ``xla_fms``
    (``fma(x, y, -z)``) and ``z - x * y`` into ``xla_fnma`` (``fma(-x, y, z)``). Primitives
    say what they are (``adds``, ``product_operands``). Only compiled programs change:
    eagerly, JAX runs each operation alone (no contraction), and so does jaxlite."""
    from jaxlite._src.prims.xla_fma import xla_fma_p, xla_fms_p, xla_fnma_p
    jaxpr = closed.jaxpr
    made = {e.outvars[0]: e for e in jaxpr.eqns if len(e.outvars) == 1}
    uses = _use_counts(jaxpr)
    dropped = set()
    kinds = _contracted_dtypes()

    def product(v, shape):
        p = made.get(v) if isinstance(v, Var) and uses.get(v) == 1 else None
        if p is None or id(p) in dropped or p.primitive.product_operands is None or \
                not getattr(p.primitive, "fuses_as_its_name", True) or \
                tuple(v.aval.shape) != shape:
            return None
        ops = p.primitive.product_operands(p)
        return None if ops is None else (p, list(ops))

    def factor(f, e, out):
        if not isinstance(f, tuple):
            return f
        prim, a, params = f      # (a factor computed by an equation of its own)
        v = Var(prim.abstract_eval(a.aval, **params))
        out.append(Eqn(prim, [a], params, [v], e.source_info))
        return v

    eqns = []
    for e in jaxpr.eqns:
        sign = e.primitive.adds
        if sign is None or not getattr(e.primitive, "fuses_as_its_name", True) or \
                e.outvars[0].aval.dtype not in kinds or \
                any(a.aval.dtype != e.outvars[0].aval.dtype for a in e.invars):
            eqns.append(e)
            continue
        shape = tuple(e.outvars[0].aval.shape)
        x, y = e.invars
        got = product(x, shape)
        if got is not None:
            p, (a, b) = got
            a, b = factor(a, e, eqns), factor(b, e, eqns)
            z, prim = y, (xla_fma_p if sign > 0 else xla_fms_p)
        else:
            got = product(y, shape)
            if got is None:
                eqns.append(e)
                continue
            p, (a, b) = got
            a, b = factor(a, e, eqns), factor(b, e, eqns)
            z, prim = x, (xla_fma_p if sign > 0 else xla_fnma_p)
        dropped.add(id(p))
        eqns.append(Eqn(prim, [a, b, z], {}, list(e.outvars), e.source_info))
    if not dropped:
        return closed
    return ClosedJaxpr(jaxpr.replace(eqns=[e for e in eqns if id(e) not in dropped]),
                       closed.consts)


def bool_products(closed: ClosedJaxpr) -> ClosedJaxpr:
    """``mul(x, convert_element_type(p))`` with ``p`` boolean becomes ``select_n(p, 0, x *
    convert(p))``, as XLA's simplifier rewrites it into ``select(p, x, 0)``: the product is
    0 where ``p`` is False even for an inf or nan ``x`` (JAX: ``jnp.inf * False == 0``).
    (The primitives say which they are: ``casts``, ``selects_by_bool_factor``.)"""
    from jaxlite._src.prims.elementwise import select_n_p
    jaxpr = closed.jaxpr
    from_bool = {}
    eqns, constvars, consts = [], list(jaxpr.constvars), list(closed.consts)
    for e in jaxpr.eqns:
        prim = e.primitive
        if getattr(prim, "casts", False) and isinstance(e.invars[0], Var) and \
                e.invars[0].aval.dtype == np.bool_:
            from_bool[e.outvars[0]] = e.invars[0]
        elif getattr(prim, "selects_by_bool_factor", False) and \
                e.outvars[0].aval.dtype.kind in "fc":
            out = e.outvars[0]
            pred = next((from_bool[v] for v in e.invars if isinstance(v, Var) and
                         v in from_bool and from_bool[v].aval.shape == out.aval.shape), None)
            if pred is not None:
                prod, zero = Var(out.aval), Var(out.aval)
                constvars.append(zero)
                consts.append(np.broadcast_to(np.zeros((), out.aval.dtype), out.aval.shape))
                eqns.append(e.replace(outvars=[prod]))
                eqns.append(Eqn(select_n_p, [pred, zero, prod], {}, [out], e.source_info))
                continue
        eqns.append(e)
    if len(eqns) == len(jaxpr.eqns):
        return closed
    return ClosedJaxpr(jaxpr.replace(eqns=eqns, constvars=constvars), consts)


def dce(closed: ClosedJaxpr) -> ClosedJaxpr:
    """Drop equations whose outputs are never used (effectful ones, and control flow or calls
    holding effectful equations, are kept), and unused constants."""
    jaxpr = live_eqns(closed.jaxpr)
    live = {a for a in jaxpr.outvars if isinstance(a, Var)}
    live.update(a for e in jaxpr.eqns for a in e.invars if isinstance(a, Var))
    pairs = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in live]
    constvars = [v for v, _ in pairs]
    consts = [c for _, c in pairs]
    return ClosedJaxpr(jaxpr.replace(constvars=constvars), consts)
