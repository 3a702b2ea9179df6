"""Structured control flow primitives carrying closed jaxprs: ``cond`` and ``while``.

Each class holds every rule: impl (the compiled branch/body in a Python branch or loop),
abstract evaluation, JVP, partial evaluation and transpose (cond), batching, and lowering for
jit (a call of a small runtime helper looping over the compiled body functions).
"""
from __future__ import annotations

import sys
import time
import weakref

import numpy as np

from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import bdim_at_front
from jaxlite._src.prims.call import CallPrimitive

__all__ = ["cond_p", "while_p", "empty_p"]


def _compiled(closed, name, owned_invars=()):
    from jaxlite._src.prims.call import jit_p
    return jit_p.compiled(closed, name, owned_invars)


def handed_carries(closed, first, n):
    """(positions 0..n-1 of the carries, body inputs ``first`` .. ``first + n - 1``, that
    the loop body ``closed`` updates (scatter, dynamic_update_slice: ``x.at[i].set``), the
    body's ``owned_invars``). A loop hands these carries over to its body, which then
    writes them in place where it owns them (as XLA updates a while loop's buffers in
    place) instead of copying the whole carry every step. The updates are found in the body
    as it is compiled (``optimize``: nested calls and library primitives' lowerings
    inlined, so an update inside one counts). Cached per body."""
    key = (first, n)
    hit = _handed.get(closed)
    if hit is not None and hit[0] == key:
        return hit[1]
    from jaxlite._src.compiler.passes import optimize
    from jaxlite._src.core.ir import Literal
    jaxpr = optimize(closed).jaxpr
    targets = {e.invars[0] for e in jaxpr.eqns
               if e.primitive.updates_operand and not isinstance(e.invars[0], Literal)}
    invars = jaxpr.invars
    handed = tuple(k for k in range(n) if invars[first + k] in targets)
    owned = tuple(k - first in handed for k in range(len(invars))) if handed else ()
    _handed[closed] = (key, (handed, owned))
    return handed, owned


_handed = weakref.WeakKeyDictionary()


def _refs(items, k):
    return sys.getrefcount(items[k])


# _refs of an array held by one list only (the list's reference and, where the interpreter
# does not borrow it, the call's argument)
_EXCLUSIVE = _refs([np.empty(1)], 0)


def hand_over(carry, handed, first=False):
    """Make the carries at positions ``handed`` of the list ``carry`` buffers the loop body
    may write in place: each must be a writeable array owning its memory that nothing but
    ``carry`` references (the previous step's fresh result); anything else (the caller's
    initial value (``first``), a constant, a view, a buffer the body returned twice) is
    copied once."""
    for k in handed:
        if first or _refs(carry, k) != _EXCLUSIVE:
            carry[k] = np.array(carry[k])
            continue
        c = carry[k]
        if type(c) is not np.ndarray or c.base is not None or not c.flags.writeable:
            carry[k] = np.array(c)


def _join_avals(avals_lists):
    """The result types of a cond: those of its first branch (JAX's abstract eval), weak
    types included (branches that differ only in weak types are allowed)."""
    return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals_lists[0]]


_ControlBase = CallPrimitive


# ----------------------------------------------------------------------------- cond

def _run_cond(fns, index, *ops):
    i = int(index)
    return fns[min(max(i, 0), len(fns) - 1)](*ops)


class Cond(_ControlBase):
    """``branches[index](*operands)``; the index is clamped into range."""
    name = "cond"
    divergent = True     # devices of one SPMD program may take different branches

    def cost_jaxprs(self, params):
        """One branch runs: XLA's cost analysis takes the largest branch cost, key by key."""
        return "max", list(params["branches"])

    def sink_constants(self, s, params, vals):
        """XLA's conditional simplification (compiler/simplify.py's
        ``sink_loop_constants``, with its context ``s``): ``params`` with the operands whose
        values ``vals`` gives (None: not a constant; ``vals[0]`` is the index's) bound inside
        every branch as constants, or None."""
        ops = {k - 1: v for k, v in enumerate(vals) if k and v is not None}
        if not ops:
            return None
        return dict(params, branches=tuple(s.bind(b, ops) for b in params["branches"]))

    def impl(self, index, *ops, branches):
        return _run_cond([_compiled(b, "branch") for b in branches], index, *ops)

    def partition(self, builder, eqn, ins, mesh_spec):
        """The partitioner's rule: each branch runs on the operands' blocks; the other
        branches' results are moved to the first branch's layouts."""
        (index, idims), *ops = ins
        if any(idims):
            index, _ = builder.replicate(index, idims, "cond's index", eqn.source_info)
        in_dims = [d for _, d in ops]
        first, lays = builder.sub_program(eqn.params["branches"][0], in_dims)
        branches = [first] + [
            builder.sub_program(b, in_dims, lays, "cond's branches must agree on their "
                                "results' layouts", eqn.source_info)[0]
            for b in eqn.params["branches"][1:]]
        outs = self.bind(index, *[v for v, _ in ops], branches=tuple(branches))
        return list(zip(outs, lays))

    def hlo(self, b, index, *ops, branches):
        """``conditional`` with one computation per branch; several operands (results)
        travel as one tuple."""
        avals, outs = b.in_avals[1:], b.out_avals
        arg = ops[0] if len(ops) == 1 else b.tuple(ops, avals)
        comps = [b.jaxpr_region(None, br, tupled_in=len(ops) != 1,
                                tupled_out=len(outs) != 1) for br in branches]
        # HLO runs the last branch for an out-of-range index; jaxlite's cond clamps
        r = b.op("conditional", outs[0] if len(outs) == 1 else list(outs),
                 (index,) + (arg,) * len(branches),
                 "branch_computations={" + ", ".join(comps) + "}")
        if len(outs) == 1:
            return [r]
        return [b.get_tuple_element(r, i, a) for i, a in enumerate(outs)]

    def abstract_eval(self, index, *ops, branches):
        if index.dtype != np.int32 or index.shape != ():
            raise TypeError(f"cond index must be a scalar int32, got {index.str_short()}")
        return _join_avals([b.out_avals for b in branches])

    def lower_py(self, ctx, ins, branches):
        fns = [ctx.compile_sub(b, "branch") for b in branches]
        run = ctx.bind_global(_run_cond, "run_cond")
        return f"{run}(({', '.join(fns)},), {', '.join(ins)})"

    def pp_params(self, params):
        return [("branches", params["branches"])]

    def jvp(self, primals, tangents, branches):
        from jaxlite._src.interpreters import ad
        index, *ops = primals
        nonzeros = [not u.is_zero(t) for t in tangents[1:]]
        out_nz = [False] * len(branches[0].out_avals)
        for b in branches:
            _, nz = ad.jvp_jaxpr_nz(b, nonzeros, False)
            out_nz = [a or c for a, c in zip(out_nz, nz)]
        new = tuple(ad.jvp_jaxpr_nz(b, nonzeros, out_nz)[0] for b in branches)
        nz_t = [t for t in tangents[1:] if not u.is_zero(t)]
        outs = self.bind(index, *ops, *nz_t, branches=new)
        n = len(branches[0].out_avals)
        it = iter(outs[n:])
        return outs[:n], [next(it) if z else u.Zero(ad.tangent_aval(a))
                          for z, a in zip(out_nz, branches[0].out_avals)]

    def partial_eval(self, trace, args, params):
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.core.trace import set_current_trace
        from jaxlite._src.interpreters.partial_eval import partial_eval_jaxpr
        from jaxlite._src.interpreters.staging import StagingTrace, trace_to_jaxpr
        from jaxlite._src.interpreters.eval import eval_jaxpr
        branches = params["branches"]
        index, ops = args[0], args[1:]
        if trace.is_unknown(index):
            return StagingTrace.process_primitive(trace, self, list(args), params)
        unknowns = [trace.is_unknown(a) for a in ops]
        out_unknown = [False] * len(branches[0].out_avals)
        for b in branches:
            _, _, ou, _ = partial_eval_jaxpr(b, unknowns)
            out_unknown = [a or c for a, c in zip(out_unknown, ou)]
        splits = [partial_eval_jaxpr(b, unknowns, out_unknown) for b in branches]
        # the branches' residuals share slots of equal type (as JAX merges them); a branch
        # fills the slots it does not use with empty values
        res_avals = [[v.aval for v in s[0].jaxpr.outvars[len(s[0].jaxpr.outvars) - s[3]:]]
                     for s in splits]
        all_res, slots = [], []
        for avs in res_avals:
            used, mine = set(), []
            for a in avs:
                k = next((j for j, b in enumerate(all_res) if b == a and j not in used), None)
                if k is None:
                    k = len(all_res)
                    all_res.append(a)
                used.add(k)
                mine.append(k)
            slots.append(mine)
        n_kout = sum(1 for x in out_unknown if not x)
        known_in_avals = [v.aval for v in splits[0][0].jaxpr.invars]

        def known_branch(i):
            kj = splits[i][0]

            def f(*xs):
                outs = eval_jaxpr(kj.jaxpr, kj.consts, *xs)
                res = [None] * len(all_res)
                for k, o in zip(slots[i], outs[n_kout:]):
                    res[k] = o
                return list(outs[:n_kout]) + [_empty(a) if r is None else r
                                              for r, a in zip(res, all_res)]
            jx, _, consts = trace_to_jaxpr(f, known_in_avals)
            return ClosedJaxpr(jx, consts)

        def unknown_branch(i):
            uj = splits[i][1]
            n_res = len(res_avals[i])
            uk_in_avals = [v.aval for v in uj.jaxpr.invars[n_res:]]

            def f(*xs):
                res, rest = xs[:len(all_res)], xs[len(all_res):]
                return eval_jaxpr(uj.jaxpr, uj.consts, *[res[k] for k in slots[i]], *rest)
            jx, _, consts = trace_to_jaxpr(f, all_res + uk_in_avals)
            return ClosedJaxpr(jx, consts)

        known_ops = [a for a, uk in zip(ops, unknowns) if not uk]
        with set_current_trace(trace.parent):
            kouts = self.bind(index, *known_ops,
                              branches=tuple(known_branch(i) for i in range(len(branches))))
        known_outs, residuals = kouts[:n_kout], kouts[n_kout:]
        unknown_ops = [a for a, uk in zip(ops, unknowns) if uk]
        uouts = StagingTrace.process_primitive(
            trace, self, [index] + list(residuals) + unknown_ops,
            dict(branches=tuple(unknown_branch(i) for i in range(len(branches)))))
        ki, ui = iter(known_outs), iter(uouts)
        return [next(ui) if uk else next(ki) for uk in out_unknown]

    def transpose(self, cts, index, *ops, branches):
        from jaxlite._src.interpreters import ad
        if u.is_undefined(index):
            raise ValueError("cond is not linear in its index")
        linear, refs, known = ad.transpose_args(ops)
        new = tuple(ad.transpose_jaxpr(b, linear, refs) for b in branches)
        cts = [ad.instantiate(c) for c in cts]
        outs = iter(self.bind(index, *known, *cts, branches=new))
        return [None] + [next(outs) if lin else None for lin in linear]

    def batch(self, size, args, dims, branches):
        from jaxlite._src.interpreters.batching import batch_jaxpr
        from jaxlite._src.prims.callback import check_vmap_of_cond
        check_vmap_of_cond(branches)
        index, ops = args[0], args[1:]
        if dims[0] is not None:
            # a batched index becomes selects, as JAX: every branch runs on all members (the
            # members that do not take it see stop_gradient'ed operands, so reverse mode
            # gets no NaNs from untaken branches), then select_n picks each member's result
            from jaxlite._src.interpreters.eval import eval_jaxpr
            from jaxlite._src.prims.custom import stop_gradient_p
            from jaxlite._src.prims.elementwise import eq_p, select_n_p
            from jaxlite._src.prims.shape import broadcast_in_dim_p

            def bcast(pred, like, dims_):
                shp = tuple(u.aval(like).shape)
                if len(u.aval(pred).shape) == len(shp):
                    return pred
                return broadcast_in_dim_p.bind(pred, shape=shp, broadcast_dimensions=dims_,
                                               sharding=None)
            index = bdim_at_front(index, dims[0], size)
            ops = [bdim_at_front(a, d, size) for a, d in zip(ops, dims[1:])]
            outs = []
            for i, b in enumerate(branches):
                bj = batch_jaxpr(b, size, [0] * len(ops))
                pred = eq_p.bind(index, u.const(index, i))
                ops_ = [select_n_p.bind(bcast(pred, x, (0,)), stop_gradient_p.bind(x), x)
                        if u.aval(x).dtype.kind in "fc" else
                        select_n_p.bind(bcast(pred, x, (0,)), x, x) for x in ops]
                outs.append(eval_jaxpr(bj.jaxpr, bj.consts, *ops_))
            res = [select_n_p.bind(bcast(index, cases[0], (0,)), *cases)
                   for cases in zip(*outs)]
            return res, [0] * len(res)
        # an unbatched index: an output is batched if some branch makes it so; the others
        # stay unbatched (as JAX)
        from jaxlite._src.interpreters.batching import batch_jaxpr_keep_dims, batch_jaxpr_to
        ops = [a if d is None else bdim_at_front(a, d, size) for a, d in zip(ops, dims[1:])]
        in_dims = [None if d is None else 0 for d in dims[1:]]
        out_dims = [None] * len(branches[0].out_avals)
        for b in branches:
            _, ds = batch_jaxpr_keep_dims(b, size, in_dims)
            out_dims = [0 if o is not None or d is not None else None
                        for o, d in zip(out_dims, ds)]
        new = tuple(batch_jaxpr_to(b, size, in_dims, out_dims) for b in branches)
        outs = self.bind(index, *ops, branches=new)
        return outs, out_dims

    def numba(self, code, eqn, ins, branches):
        """Tier 2's loop code (``compiler/numba_bodies.py``): an ``if``/``elif`` chain over the clamped index, each branch's code
        assigning the results."""
        outs = [code.fresh("c") for _ in eqn.outvars]
        n = len(branches)
        for k, br in enumerate(branches):
            test = ("if" if k == 0 else "elif") + (f" {ins[0]} <= {k}:" if k < n - 1 else "")
            code.emit(test if k < n - 1 else ("else:" if n > 1 else "if True:"))
            code.push()
            code.assign(outs, code.jaxpr(br, ins[1:]))
            code.pop()
        return outs



# ----------------------------------------------------------------------------- empty

class _MemorySpaceDevice:
    def __repr__(self):
        return "MemorySpace.Device"

    __str__ = __repr__


class Empty(Primitive):
    """A scalar of ``dtype`` with unspecified contents (JAX's ``empty2``; here zero)."""
    name = "empty2"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, dtype, memory_space=None):
        return np.zeros((), dtype)

    def abstract_eval(self, dtype, memory_space=None):
        return ShapedArray((), dtype, False)


empty_p = Empty()
_DEVICE = _MemorySpaceDevice()


def _empty(aval):
    """An uninitialised value of ``aval`` (filler for residual slots a branch leaves)."""
    v = empty_p.bind(dtype=np.dtype(aval.dtype), memory_space=_DEVICE)
    if aval.shape:
        from jaxlite._src.prims.shape import broadcast_in_dim_p
        v = broadcast_in_dim_p.bind(v, shape=tuple(aval.shape), broadcast_dimensions=(),
                                    sharding=None)
    return v


# ----------------------------------------------------------------------------- while

def _run_while(cond_fn, body_fn, cond_nconsts, body_nconsts, *args, handed=(), promote=None):
    cc = args[:cond_nconsts]
    bc = args[cond_nconsts:cond_nconsts + body_nconsts]
    carry = list(args[cond_nconsts + body_nconsts:])
    if promote is not None:
        return _run_while_promoted(cond_fn, body_fn, cc, bc, carry, handed, promote)
    if handed:
        hand_over(carry, handed, first=True)
        while cond_fn(*cc, *carry)[0]:
            carry = list(body_fn(*bc, *carry))
            hand_over(carry, handed)
        return tuple(carry)
    carry = tuple(carry)
    while cond_fn(*cc, *carry)[0]:
        carry = body_fn(*bc, *carry)
    return carry


def _run_while_promoted(cond_fn, body_fn, cc, bc, carry, handed, promote):
    """``_run_while`` reporting its time to ``promote`` (``promotion.LoopPromotion``)
    every ``CHECK_EVERY`` seconds, and continuing in the loop compiled whole once that is
    ready: the same steps, from the carry reached."""
    clock = time.perf_counter
    every = promote.CHECK_EVERY
    t0 = clock()
    due = t0 + every
    if handed:
        hand_over(carry, handed, first=True)
    while cond_fn(*cc, *carry)[0]:
        carry = list(body_fn(*bc, *carry))
        if handed:
            hand_over(carry, handed)
        now = clock()
        if now >= due:
            run = promote.charge(now - t0)
            t0, due = now, now + every
            if run is not None:
                return run(*cc, *bc, *carry)
    promote.charge(clock() - t0)
    return tuple(carry)


class While(_ControlBase):
    """``while cond(carry): carry = body(carry)``."""
    name = "while"
    divergent = True     # devices of one SPMD program may loop different numbers of times
    # (never run at compile time, as XLA's constant folding never runs a loop: a long
    # loop of constants costs its run at each call, not a stall of the compilation)
    no_fold = True

    def sink_constants(self, s, params, vals):
        """XLA's ``WhileLoopConstantSinking`` (compiler/simplify.py's
        ``sink_loop_constants``, with its context ``s``): ``params`` with the operands whose
        values ``vals`` gives (None: not a constant) bound inside the body and condition as
        constants, or None. Sunk are the loop's constants and the carries the body passes
        through unchanged (through a nested call too, as XLA sees the body with its calls
        inlined; the constants are bound into the body as it is, whose nested jits stay
        functions of their own for ``inline_calls``'s ``foreign``)."""
        cn, bn = params["cond_nconsts"], params["body_nconsts"]
        body, cond = params["body_jaxpr"], params["cond_jaxpr"]
        through = s.passes_through(body)
        cvals = {k: vals[k] for k in range(cn) if vals[k] is not None}
        bvals = {k: vals[cn + k] for k in range(bn) if vals[cn + k] is not None}
        for k in range(len(vals) - cn - bn):
            v = vals[cn + bn + k]
            if v is not None and through(bn + k, k):
                bvals[bn + k] = v
                cvals[cn + k] = v
        if not (cvals or bvals):
            return None
        return dict(params, body_jaxpr=s.bind(body, bvals) if bvals else body,
                    cond_jaxpr=s.bind(cond, cvals) if cvals else cond)

    def impl(self, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
        handed, owned = handed_carries(body_jaxpr, body_nconsts,
                                       len(body_jaxpr.jaxpr.invars) - body_nconsts)
        body = _compiled(body_jaxpr, "body", owned)
        return _run_while(_compiled(cond_jaxpr, "cond"), body, cond_nconsts, body_nconsts,
                          *args, handed=handed)

    def partition(self, builder, eqn, ins, mesh_spec):
        """The partitioner's rule: the predicate and the body run on blocks; the carry keeps
        the layout it came in with (the body's result is moved back to it)."""
        p, src = eqn.params, eqn.source_info
        cn, bn = p["cond_nconsts"], p["body_nconsts"]
        ins = list(ins)
        dims = [d for _, d in ins]
        carry = builder.settle_carry(p["body_jaxpr"], dims[cn:], bn, len(dims) - cn - bn)
        for k, want in enumerate(carry):
            v, d = ins[cn + bn + k]
            if d != want:
                ins[cn + bn + k] = builder.relayout(v, d, want, "the while_loop body splits "
                                                    "its carry so", src)
        dims[cn + bn:] = carry
        cond, _ = builder.sub_program(p["cond_jaxpr"], dims[:cn] + carry, [((),)],
                                      "a while_loop's predicate is the same everywhere", src)
        body, _ = builder.sub_program(p["body_jaxpr"], dims[cn:cn + bn] + carry, carry,
                                      "a while_loop's carry keeps its layout", src)
        outs = self.bind(*[v for v, _ in ins], **dict(p, cond_jaxpr=cond, body_jaxpr=body))
        return list(zip(outs, carry))

    def abstract_eval(self, *avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
        return list(body_jaxpr.out_avals)

    def hlo(self, b, *ins, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
        """``while`` over a tuple of (cond consts, body consts, carry): the condition and
        body computations unpack it; the body passes the constants through."""
        avals = list(b.in_avals)
        nc, nb = cond_nconsts, body_nconsts

        def unpack(sub, p):
            return [sub.get_tuple_element(p[0], i, a) for i, a in enumerate(avals)]

        def cond_body(sub, p):
            xs = unpack(sub, p)
            return sub.inline_jaxpr(cond_jaxpr, xs[:nc] + xs[nc + nb:])[0]

        def body_body(sub, p):
            xs = unpack(sub, p)
            carry = sub.inline_jaxpr(body_jaxpr, xs[nc:])
            return sub.tuple(xs[:nc + nb] + carry, avals)
        body = b.region(None, [avals], body_body, param_prefix="arg_tuple")
        cond = b.region(None, [avals], cond_body, param_prefix="arg_tuple")
        t = b.tuple(list(ins), avals)
        r = b.op("while", avals, (t,), f"condition={cond}", f"body={body}")
        return [b.get_tuple_element(r, nc + nb + i, a)
                for i, a in enumerate(b.out_avals)]

    def lower_py(self, ctx, ins, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
        handed, owned = handed_carries(body_jaxpr, body_nconsts,
                                       len(body_jaxpr.jaxpr.invars) - body_nconsts)
        c = ctx.compile_sub(cond_jaxpr, "cond")
        b = ctx.compile_sub(body_jaxpr, "body", owned)
        run = ctx.bind_global(_run_while, "run_while")
        tail = f", handed={handed}" if handed else ""
        return f"{run}({c}, {b}, {cond_nconsts}, {body_nconsts}, {', '.join(ins)}{tail})"

    def lower_stmts(self, ctx, ins, outs, eqn):
        """``lower_py``'s loop, handing its state over to the loop compiled whole once it
        has run long (``compiler.promotion.promotion``), where tier 2 can compile it."""
        from jaxlite._src.compiler.promotion import promotion
        promote = promotion(eqn)
        if promote is None:
            return None
        expr = self.lower_py(ctx, ins, **eqn.params)
        lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
        return [f"{lhs} = {expr[:-1]}, promote={ctx.bind_global(promote, 'promote')})"]

    def numba_loop(self, eqn, scalar_body, ins, outs):
        """The whole loop as one compiled loop (tier 2; the convention of
        ``Scan.numba_loop``): when every operand is a scalar or a vector and
        ``scalar_body`` can write the condition and the body as scalar code (the body
        updating carried vectors in place, in their output buffers)."""
        p = eqn.params
        avals = [a.aval for a in eqn.invars]
        if any(a.ndim > 1 for a in avals):
            return None
        nc, nb = p["cond_nconsts"], p["body_nconsts"]
        nk = len(eqn.outvars)
        vec = [a.ndim == 1 for a in avals[nc + nb:]]
        carry = [outs[k] if vec[k] else f"c{k}" for k in range(nk)]
        cond = scalar_body(p["cond_jaxpr"], ins[:nc] + carry, "        ",
                           {k: False for k, a in enumerate(avals[:nc] + avals[nc + nb:])
                            if a.ndim == 1})
        body = scalar_body(p["body_jaxpr"], ins[nc:nc + nb] + carry, "        ",
                           {k: k >= nb for k, a in enumerate(avals[nc:]) if a.ndim == 1})
        if cond is None or body is None or \
                any(vec[k] and body[1][k] != outs[k] for k in range(nk)):
            return None
        scal = [k for k in range(nk) if not vec[k]]
        comma = "," if len(scal) == 1 else ""
        update = [f"        {', '.join(carry[k] for k in scal)}{comma} = "
                  f"{', '.join(body[1][k] for k in scal)}{comma}"] if scal else []
        return ([f"    {outs[k]}[:] = {x}" if vec[k] else f"    c{k} = {x}"
                 for k, x in enumerate(ins[nc + nb:])] +
                ["    while True:", *cond[0], f"        if not {cond[1][0]}:",
                 "            break", *body[0], *update] +
                [f"    {outs[k]}[0] = c{k}" for k in scal])

    def jvp(self, primals, tangents, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.interpreters import ad
        from jaxlite._src.interpreters.eval import eval_jaxpr
        from jaxlite._src.interpreters.staging import trace_to_jaxpr
        cc, bc = primals[:cond_nconsts], primals[cond_nconsts:cond_nconsts + body_nconsts]
        carry = primals[cond_nconsts + body_nconsts:]
        bt = tangents[cond_nconsts:cond_nconsts + body_nconsts]
        ct = tangents[cond_nconsts + body_nconsts:]
        bnz = [not u.is_zero(t) for t in bt]
        cnz = [not u.is_zero(t) for t in ct]
        while True:   # which carries get nonzero tangents: a fixpoint
            _, out_nz = ad.jvp_jaxpr_nz(body_jaxpr, bnz + cnz, False)
            new = [a or b for a, b in zip(cnz, out_nz)]
            if new == cnz:
                break
            cnz = new
        body_jvp, _ = ad.jvp_jaxpr_nz(body_jaxpr, bnz + cnz, cnz)
        n_nzc, n_c = sum(cnz), len(carry)
        # the jvp body takes (consts, const tangents, carry, carry tangents) in that layout
        bc_avals = [a for a in body_jaxpr.in_avals[:body_nconsts]]
        bt_avals = [ad.tangent_aval(a) for a, z in zip(bc_avals, bnz) if z]
        c_avals = list(body_jaxpr.in_avals[body_nconsts:])
        ct_avals = [ad.tangent_aval(a) for a, z in zip(c_avals, cnz) if z]

        def body(*xs):
            k = 0
            b_p = xs[k:k + body_nconsts]
            k += body_nconsts
            b_t = xs[k:k + len(bt_avals)]
            k += len(bt_avals)
            c_p = xs[k:k + n_c]
            k += n_c
            c_t = xs[k:]
            outs = eval_jaxpr(body_jvp.jaxpr, body_jvp.consts, *b_p, *c_p, *b_t, *c_t)
            return outs[:n_c] + outs[n_c:n_c + n_nzc]
        bj, _, bconsts = trace_to_jaxpr(body, bc_avals + bt_avals + c_avals + ct_avals)

        def cond(*xs):
            return eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *xs[:cond_nconsts + n_c])
        cj, _, cconsts = trace_to_jaxpr(cond, list(cond_jaxpr.in_avals) + ct_avals)
        nz_bt = [t for t in bt if not u.is_zero(t)]
        nz_ct = [u.instantiate(t) if z else None for t, z in zip(ct, cnz)]
        outs = self.bind(*cc, *bc, *nz_bt, *carry, *[t for t in nz_ct if t is not None],
                         cond_jaxpr=ClosedJaxpr(cj, cconsts), body_jaxpr=ClosedJaxpr(bj, bconsts),
                         cond_nconsts=cond_nconsts, body_nconsts=body_nconsts + len(nz_bt))
        it = iter(outs[n_c:])
        return outs[:n_c], [next(it) if z else u.Zero(ad.tangent_aval(a))
                            for z, a in zip(cnz, c_avals)]

    def partial_eval(self, trace, args, params):
        """Split the loop for linearize (JAX's behaviour): the carry parts that stay known
        through every iteration (a fixpoint over the body) are computed now by a loop of
        their own; the unknown parts are computed by the whole loop, staged with the known
        inputs as its constants (it recomputes the known parts: a while loop has no
        per-iteration residuals to save). A predicate that depends on an unknown value
        stages the whole loop."""
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.core.trace import set_current_trace
        from jaxlite._src.interpreters.partial_eval import partial_eval_jaxpr
        from jaxlite._src.interpreters.staging import StagingTrace
        cn, bn = params["cond_nconsts"], params["body_nconsts"]
        cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
        unknowns = [trace.is_unknown(a) for a in args]
        cuk, buk, carry_uk = unknowns[:cn], unknowns[cn:cn + bn], unknowns[cn + bn:]
        for _ in range(len(carry_uk) + 1):   # a carry is unknown if its update can be
            body_known, _, out_uk, _ = partial_eval_jaxpr(body_jaxpr, buk + carry_uk,
                                                          carry_uk)
            if out_uk == carry_uk:
                break
            carry_uk = [a or b for a, b in zip(carry_uk, out_uk)]
        cond_known, _, (pred_uk,), _ = partial_eval_jaxpr(cond_jaxpr, cuk + carry_uk)
        # (the loop writes unknown refs, a tangent ref: only the whole loop does that)
        ref_uk = any(uk and getattr(aval_of_value(a), "is_ref", False)
                     for a, uk in zip(args, unknowns))
        if pred_uk or all(carry_uk) or ref_uk:
            return StagingTrace.process_primitive(trace, self, list(args), params)
        # the known loop: the known carry parts from the known inputs (the residual outputs
        # of the split body and predicate are dropped; the work only they needed stays in
        # the jaxpr, as in JAX's, and compiling removes it)
        n_known = carry_uk.count(False)

        def known_only(closed, n_out):
            j = closed.jaxpr
            return ClosedJaxpr(j.replace(outvars=j.outvars[:n_out]), closed.consts)
        known_in = [a for a, uk in zip(args, cuk + buk + carry_uk) if not uk]
        with set_current_trace(trace.parent):
            known_outs = self.bind(*known_in, cond_jaxpr=known_only(cond_known, 1),
                                   body_jaxpr=known_only(body_known, n_known),
                                   cond_nconsts=cuk.count(False),
                                   body_nconsts=buk.count(False))
        if not any(carry_uk):
            return list(known_outs)
        whole = StagingTrace.process_primitive(trace, self, list(args), params)
        ki = iter(known_outs)
        return [w if uk else next(ki) for w, uk in zip(whole, carry_uk)]

    def transpose(self, cts, *args, **params):
        raise ValueError(
            "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop "
            "with dynamic start/stop values. Try using lax.scan, or using fori_loop with "
            "static start/stop.")

    def batch(self, size, args, dims, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
        """As JAX batches a loop: a carry is batched if its initial value is, or if an
        iteration makes it so (a fixpoint over the body). With an unbatched predicate the
        loop runs once for all members and the other carries stay unbatched; a batched
        predicate batches every carry, loops while any member continues, and members that
        are done keep their carry."""
        from jaxlite._src.interpreters.batching import batch_jaxpr_keep_dims, batch_jaxpr_to
        from jaxlite._src.prims.callback import check_vmap_of_while
        check_vmap_of_while(size, dims, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
        nc = cond_nconsts + body_nconsts
        consts = [a if d is None else bdim_at_front(a, d, size)
                  for a, d in zip(args[:nc], dims[:nc])]
        const_dims = [None if d is None else 0 for d in dims[:nc]]
        cdims, bdims = const_dims[:cond_nconsts], const_dims[cond_nconsts:]
        carry_dims = [None if d is None else 0 for d in dims[nc:]]
        for _ in range(len(carry_dims) + 1):
            _, out = batch_jaxpr_keep_dims(body_jaxpr, size, bdims + carry_dims)
            new = [0 if c is not None or o is not None else None
                   for c, o in zip(carry_dims, out)]
            if new == carry_dims:
                break
            carry_dims = new
        _, (pred_dim,) = batch_jaxpr_keep_dims(cond_jaxpr, size, cdims + carry_dims)
        if pred_dim is not None:
            return self._batch_predicate(size, consts, const_dims, args[nc:], dims[nc:],
                                         cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts)
        carry = [a if want is None else bdim_at_front(a, d, size)
                 for a, d, want in zip(args[nc:], dims[nc:], carry_dims)]
        bcond = batch_jaxpr_to(cond_jaxpr, size, cdims + carry_dims, [None])
        bbody = batch_jaxpr_to(body_jaxpr, size, bdims + carry_dims, carry_dims)
        outs = self.bind(*consts, *carry, cond_jaxpr=bcond, body_jaxpr=bbody,
                         cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
        return outs, carry_dims

    def _batch_predicate(self, size, consts, const_dims, carry, carry_dims, cond_jaxpr,
                         body_jaxpr, cond_nconsts, body_nconsts):
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.interpreters.batching import batch_jaxpr
        from jaxlite._src.interpreters.eval import eval_jaxpr
        from jaxlite._src.interpreters.staging import trace_to_jaxpr
        from jaxlite._src.prims.elementwise import select_n_p
        from jaxlite._src.prims.reductions import reduce_or_p
        from jaxlite._src.prims.shape import broadcast_in_dim_p
        cconsts, bconsts = consts[:cond_nconsts], consts[cond_nconsts:]
        cd, bd = const_dims[:cond_nconsts], const_dims[cond_nconsts:]
        carry = [bdim_at_front(a, d, size) for a, d in zip(carry, carry_dims)]
        bcond = batch_jaxpr(cond_jaxpr, size, cd + [0] * len(carry))
        bbody = batch_jaxpr(body_jaxpr, size, bd + [0] * len(carry))

        def cond(*xs):
            p = eval_jaxpr(bcond.jaxpr, bcond.consts, *xs)[0]
            return [reduce_or_p.bind(p, axes=(0,), out_sharding=None)]

        def body(*xs):
            cc_, rest = xs[:cond_nconsts], xs[cond_nconsts:]
            bc_, c = rest[:body_nconsts], rest[body_nconsts:]
            p = eval_jaxpr(bcond.jaxpr, bcond.consts, *cc_, *c)[0]
            new = eval_jaxpr(bbody.jaxpr, bbody.consts, *bc_, *c)
            out = []
            for o, old in zip(new, c):
                shp = u.aval(o).shape
                w = p if len(shp) == 1 else broadcast_in_dim_p.bind(
                    p, shape=shp, broadcast_dimensions=(0,), sharding=None)
                out.append(select_n_p.bind(w, old, o))
            return out
        c_avals = [u.aval(x) for x in cconsts + carry]
        cj, _, ck = trace_to_jaxpr(cond, c_avals)
        b_avals = [u.aval(x) for x in cconsts + bconsts + carry]
        bj, _, bk = trace_to_jaxpr(body, b_avals)
        outs = self.bind(*cconsts, *cconsts, *bconsts, *carry,
                         cond_jaxpr=ClosedJaxpr(cj, ck), body_jaxpr=ClosedJaxpr(bj, bk),
                         cond_nconsts=cond_nconsts, body_nconsts=cond_nconsts + body_nconsts)
        return outs, [0] * len(outs)

    def numba(self, code, eqn, ins, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
        """Tier 2's loop code (``compiler/numba_bodies.py``): a ``while True`` loop testing the condition's code, then running the
        body's and rebinding the carries."""
        nc, nb = cond_nconsts, body_nconsts
        carry = [code.fresh("c") for _ in eqn.outvars]
        owned = code.loop_owned(body_jaxpr, nb, len(carry))
        code.assign(carry, [f"{x}.copy()" if k in owned else x
                            for k, x in enumerate(ins[nc + nb:])])
        bufs = code.carry_buffers(body_jaxpr, nb, carry, owned)
        code.emit("while True:")
        code.push()
        (test,) = code.jaxpr(cond_jaxpr, ins[:nc] + carry)
        code.emit(f"if not {test}:")
        code.emit("    break")
        code.assign(carry, code.jaxpr(body_jaxpr, ins[nc:nc + nb] + carry,
                                      [nb + k for k in owned],
                                      {k: b[0] for k, b in bufs.items()}))
        code.swap(bufs)
        code.pop()
        return carry



cond_p, while_p = Cond(), While()
