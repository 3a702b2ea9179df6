"""The ``scan`` primitive: a loop carrying state and stacking per-step outputs.

Operands are (consts, carry, xs); the body jaxpr maps (consts, carry, x) -> (carry, y).
Rules: impl/lowering (a Python loop over the compiled body), JVP (fixpoint on which carries
have tangents), partial evaluation (known scan emitting per-step residuals, staged scan
consuming them), transpose (a reversed scan accumulating const cotangents) and batching.
"""
from __future__ import annotations

import time

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import bdim_at_front, moveaxis
from jaxlite._src.prims.control import _ControlBase, _compiled, hand_over, handed_carries
from jaxlite._src.prims.refs import RefAccum

__all__ = ["scan_p"]


def _run_scan(body, num_consts, num_carry, length, reverse, y_avals, *args, handed=(),
              promote=None):
    consts = args[:num_consts]
    carry = tuple(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    ys = [np.empty((length,) + tuple(a.shape), a.dtype) for a in y_avals]
    if promote is not None:
        return _run_scan_promoted(body, num_carry, length, reverse, consts, list(carry), xs,
                                  ys, handed, promote)
    order = range(length - 1, -1, -1) if reverse else range(length)
    if handed:      # carries the body updates in place (``control.hand_over``)
        carry = list(carry)
        hand_over(carry, handed, first=True)
        for i in order:
            out = body(*consts, *carry, *[x[i] for x in xs])
            carry = list(out[:num_carry])
            for buf, y in zip(ys, out[num_carry:]):
                buf[i] = y
            out = y = None      # (the outputs, copied, keep no reference to a carry)
            hand_over(carry, handed)
        return tuple(carry) + tuple(ys)
    for i in order:
        out = body(*consts, *carry, *[x[i] for x in xs])
        carry = tuple(out[:num_carry])
        for buf, y in zip(ys, out[num_carry:]):
            buf[i] = y
    return carry + tuple(ys)


def _run_scan_promoted(body, num_carry, length, reverse, consts, carry, xs, ys, handed,
                       promote):
    """``_run_scan`` reporting its time to ``promote`` (``promotion.ChunkedPromotion``)
    every ``CHECK_EVERY`` seconds; once the compiled loop is ready, it runs the steps left in
    chunks of ``promote.chunk`` steps (the same steps, from the carry reached), and tier 1
    the last few."""
    clock = time.perf_counter
    every = promote.CHECK_EVERY
    t0 = clock()
    due = t0 + every
    if handed:
        hand_over(carry, handed, first=True)
    k = 0
    while k < length:
        i = length - 1 - k if reverse else k
        out = body(*consts, *carry, *[x[i] for x in xs])
        carry = list(out[:num_carry])
        for buf, y in zip(ys, out[num_carry:]):
            buf[i] = y
        out = y = None
        if handed:
            hand_over(carry, handed)
        k += 1
        now = clock()
        if now < due or promote is None:
            continue
        run = promote.charge(now - t0)
        t0, due = now, now + every
        if run is None:
            continue
        n = promote.chunk
        while length - k >= n:
            lo = length - k - n if reverse else k
            part = slice(lo, lo + n)
            res = run(*consts, *carry, *[x[part] for x in xs])
            carry = list(res[:num_carry])
            for buf, y in zip(ys, res[num_carry:]):
                buf[part] = y
            k += n
        res = None
        if handed:
            hand_over(carry, handed)
        promote = None      # (the last steps: tier 1's)
    if promote is not None:
        promote.charge(clock() - t0)
    return tuple(carry) + tuple(ys)


def _stack_aval(a, length):
    return ShapedArray((length,) + tuple(a.shape), a.dtype, a.weak_type)


def _x_aval(a):
    return ShapedArray(a.shape[1:], a.dtype, a.weak_type)


class Scan(_ControlBase):
    """``scan(body, consts, carry, xs)`` over ``length`` steps (backwards if ``reverse``)."""
    name = "scan"
    # (never run at compile time, as XLA's constant folding never runs a loop: a long
    # loop of constants costs its run at each call, not a stall of the compilation)
    no_fold = True

    def sink_constants(self, s, params, vals):
        """XLA's ``WhileLoopConstantSinking`` of the while loop a scan is to XLA
        (compiler/simplify.py's ``sink_loop_constants``, with its context ``s``): ``params``
        with the operands whose values ``vals`` gives (None: not a constant) bound inside
        the body as constants, or None: the scan's constants and the carries the body passes
        through unchanged (as XLA sees the body, its nested calls inlined)."""
        nc = params["num_consts"]
        body = params["jaxpr"]
        through = s.passes_through(body)
        bvals = {k: vals[k] for k in range(nc) if vals[k] is not None}
        for k in range(params["num_carry"]):
            v = vals[nc + k]
            if v is not None and through(nc + k, k):
                bvals[nc + k] = v
        return dict(params, jaxpr=s.bind(body, bvals)) if bvals else None

    def partition(self, builder, eqn, ins, mesh_spec):
        """The partitioner's rule: the body runs on blocks. The scanned dimension of the xs
        is gathered (every device steps through all of it); the carry keeps the layout it
        came in with (the body's carry out is moved back to it), the ys stack the body's
        layouts."""
        p, src = eqn.params, eqn.source_info
        nc, ncar = p["num_consts"], p["num_carry"]
        ins = list(ins)
        for k in range(nc + ncar, len(ins)):
            v, d = ins[k]
            if d and d[0]:
                ins[k] = builder.relayout(v, d, ((),) + d[1:], "scan steps through dimension "
                                          "0 of its xs on every device", src)
        in_dims = [d for _, d in ins[:nc + ncar]] + [d[1:] for _, d in ins[nc + ncar:]]
        carry = builder.settle_carry(p["jaxpr"], in_dims, nc, ncar)
        for k, want in enumerate(carry):
            v, d = ins[nc + k]
            if d != want:
                ins[nc + k] = builder.relayout(v, d, want, "the scan body splits its carry "
                                               "so", src)
        in_dims[nc:nc + ncar] = carry
        body, lays = builder.sub_program(
            p["jaxpr"], in_dims, carry + [None] * (len(p["jaxpr"].out_avals) - ncar),
            "a scan's carry keeps its layout from step to step", src)
        outs = self.bind(*[v for v, _ in ins], **dict(p, jaxpr=body))
        return [(o, d if k < ncar else ((),) + tuple(d))
                for k, (o, d) in enumerate(zip(outs, lays))]

    def impl(self, *args, jaxpr, length, reverse, num_consts, num_carry, **_):
        y_avals = jaxpr.out_avals[num_carry:]
        handed, owned = handed_carries(jaxpr, num_consts, num_carry)
        body = _compiled(jaxpr, "scan_body", owned)
        return _run_scan(body, num_consts, num_carry, length, reverse, y_avals, *args,
                         handed=handed)

    def explicit_sharding_rule(self, avals, dims, jaxpr, num_carry, **_):
        """Over Explicit axes: carries are typed as the body's carry outputs, stacked
        outputs as the body's outputs with an unsplit leading axis."""
        from jaxlite._src.sharding.types import dims_of
        outs = jaxpr.out_avals
        return [dims_of(a) for a in outs[:num_carry]] + \
            [((),) + dims_of(a) for a in outs[num_carry:]]

    def abstract_eval(self, *avals, jaxpr, length, num_consts, num_carry, **_):
        outs = jaxpr.out_avals
        carry_in = avals[num_consts:num_consts + num_carry]
        for a, b in zip(carry_in, outs[:num_carry]):
            if a.shape != b.shape or a.dtype != b.dtype:
                raise TypeError("scan carry output and input must have identical types, got "
                                f"input {a.str_short()} and output {b.str_short()}.")
        for x in avals[num_consts + num_carry:]:
            if not x.shape or x.shape[0] != length:
                raise TypeError(f"scan got xs with leading dimension other than length "
                                f"{length}: {x.str_short()}")
        return list(outs[:num_carry]) + [_stack_aval(a, length) for a in outs[num_carry:]]

    def lower_py(self, ctx, ins, jaxpr, length, reverse, num_consts, num_carry, **_):
        handed, owned = handed_carries(jaxpr, num_consts, num_carry)
        body = ctx.compile_sub(jaxpr, "scan_body", owned)
        run = ctx.bind_global(_run_scan, "run_scan")
        ya = ctx.bind_global(tuple(jaxpr.out_avals[num_carry:]), "yavals")
        tail = f", handed={handed}" if handed else ""
        return (f"{run}({body}, {num_consts}, {num_carry}, {length}, {reverse}, {ya}, "
                f"{', '.join(ins)}{tail})")

    def chunk_eqn(self, eqn, at_most):
        """``(chunk, n)``: the scan ``eqn`` over its first ``n = min(at_most, length)`` steps
        (xs and ys ``n`` long), what tier 1's run of a long scan hands successive chunks of
        its steps to, compiled (``compiler.promotion.ChunkedPromotion``)."""
        from jaxlite._src.core.ir import Var
        p = eqn.params
        n = min(at_most, p["length"])
        nx, nk = p["num_consts"] + p["num_carry"], p["num_carry"]

        def cut(v):
            return Var(ShapedArray((n,) + tuple(v.aval.shape[1:]), v.aval.dtype,
                                   v.aval.weak_type))
        return eqn.replace(invars=list(eqn.invars[:nx]) + [cut(v) for v in eqn.invars[nx:]],
                           outvars=list(eqn.outvars[:nk]) + [cut(v) for v in eqn.outvars[nk:]],
                           params=dict(p, length=n)), n

    def lower_stmts(self, ctx, ins, outs, eqn):
        """``lower_py``'s loop, handing chunks of its steps over to the loop compiled whole
        once it has run long (``compiler.promotion.promotion``)."""
        from jaxlite._src.compiler.promotion import promotion
        promote = promotion(eqn)
        if promote is None:
            return None
        expr = self.lower_py(ctx, ins, **eqn.params)
        lhs = ", ".join(outs) + ("," if len(outs) == 1 else "")
        return [f"{lhs} = {expr[:-1]}, promote={ctx.bind_global(promote, 'promote')})"]

    def numba_loop(self, eqn, scalar_body, ins, outs):
        """The whole scan as one compiled loop (tier 2): the lines of a numba function body
        taking rank-0 operands as scalars and the others as flat arrays (``ins``), writing
        each output into a flat array (``outs``; a scalar carry into one element). None
        unless the carries and constants are scalars or vectors, xs/ys are vectors of
        ``length`` and ``scalar_body(jaxpr, in_exprs, indent, arrays)`` can write the body
        as scalar code: it reads elements of the vectors and updates a carried vector's
        elements in place, in its output buffer (``x.at[i].set(v)``)."""
        p = eqn.params
        nc, nk, n = p["num_consts"], p["num_carry"], p["length"]
        avals = [a.aval for a in eqn.invars]
        oavals = [v.aval for v in eqn.outvars]
        if any(a.ndim > 1 for a in avals[:nc + nk]) or \
                any(a.shape != (n,) for a in avals[nc + nk:] + oavals[nk:]):
            return None
        vec = [avals[nc + k].ndim == 1 for k in range(nk)]
        arrays = {k: False for k in range(nc) if avals[k].ndim == 1}
        arrays.update({nc + k: True for k in range(nk) if vec[k]})
        carry = [outs[k] if vec[k] else f"c{k}" for k in range(nk)]
        body = scalar_body(p["jaxpr"], ins[:nc] + carry + [f"{x}[i]" for x in ins[nc + nk:]],
                           "        ", arrays)
        if body is None:
            return None
        lines, res = body
        if any(vec[k] and res[k] != outs[k] for k in range(nk)):
            return None     # (a carried vector must stay in its own buffer)
        scal = [k for k in range(nk) if not vec[k]]
        src = [f"    {outs[k]}[:] = {ins[nc + k]}" if vec[k] else f"    c{k} = {ins[nc + k]}"
               for k in range(nk)]
        src.append(f"    for i in range({n - 1}, -1, -1):" if p["reverse"] else
                   f"    for i in range({n}):")
        src += lines
        src += [f"        {o}[i] = {r}" for o, r in zip(outs[nk:], res[nk:])]
        if scal:
            comma = "," if len(scal) == 1 else ""
            src.append(f"        {', '.join(carry[k] for k in scal)}{comma} = "
                       f"{', '.join(res[k] for k in scal)}{comma}")
        src += [f"    {outs[k]}[0] = c{k}" for k in scal]
        return src

    def pp_params(self, params):
        return [(k, params[k]) for k in ("jaxpr", "length", "num_carry", "num_consts",
                                         "reverse", "unroll")]

    def _bind(self, args, jaxpr, num_consts, num_carry, params):
        return self.bind(*args, **dict(params, jaxpr=jaxpr, num_consts=num_consts,
                                       num_carry=num_carry,
                                       linear=(False,) * len(args)))

    # -- autodiff
    def jvp(self, primals, tangents, jaxpr, num_consts, num_carry, **params):
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.interpreters import ad
        from jaxlite._src.interpreters.eval import eval_jaxpr
        from jaxlite._src.interpreters.staging import trace_to_jaxpr
        nc, nk = num_consts, num_carry
        nz = [not u.is_zero(t) for t in tangents]
        cnz, knz, xnz = nz[:nc], nz[nc:nc + nk], nz[nc + nk:]
        while True:
            _, out_nz = ad.jvp_jaxpr_nz(jaxpr, cnz + knz + xnz, False)
            new = [a or b for a, b in zip(knz, out_nz[:nk])]
            if new == knz:
                break
            knz = new
        ny = len(jaxpr.out_avals) - nk
        body_jvp, out_nz = ad.jvp_jaxpr_nz(jaxpr, cnz + knz + xnz, knz + [False] * ny)
        ynz = out_nz[nk:]
        avals = jaxpr.in_avals
        ta = [ad.tangent_aval(a) for a in avals]
        groups = [(avals[:nc], ta[:nc], cnz), (avals[nc:nc + nk], ta[nc:nc + nk], knz),
                  (avals[nc + nk:], ta[nc + nk:], xnz)]
        layout = []   # body inputs: consts, const tangents, carry, carry tangents, xs, ...
        for pa, tav, z in groups:
            layout += list(pa) + [t for t, f in zip(tav, z) if f]
        n_nzk = sum(knz)

        def body(*xs):
            it, prim, tan = iter(xs), [], []
            for pa, _, z in groups:
                prim += [next(it) for _ in pa]
                tan += [next(it) for f in z if f]
            outs = eval_jaxpr(body_jvp.jaxpr, body_jvp.consts, *prim, *tan)
            n_out = nk + ny
            carry_p, y_p = outs[:nk], outs[nk:n_out]
            t_outs = outs[n_out:]
            return carry_p + t_outs[:n_nzk] + y_p + t_outs[n_nzk:]
        bj, _, bconsts = trace_to_jaxpr(body, layout)
        args = []
        for k, (lo, hi, z) in enumerate([(0, nc, cnz), (nc, nc + nk, knz),
                                         (nc + nk, len(primals), xnz)]):
            args += list(primals[lo:hi])
            args += [u.instantiate(t) for t, f in zip(tangents[lo:hi], z) if f]
        outs = self._bind(args, ClosedJaxpr(bj, bconsts), nc + sum(cnz), nk + n_nzk, params)
        carry_p, carry_t = outs[:nk], outs[nk:nk + n_nzk]
        ys_p, ys_t = outs[nk + n_nzk:nk + n_nzk + ny], outs[nk + n_nzk + ny:]
        length = params["length"]
        it_c, it_y = iter(carry_t), iter(ys_t)
        out_t = [next(it_c) if z else u.Zero(ad.tangent_aval(a))
                 for z, a in zip(knz, jaxpr.out_avals[:nk])]
        out_t += [next(it_y) if z else u.Zero(ad.tangent_aval(_stack_aval(a, length)))
                  for z, a in zip(ynz, jaxpr.out_avals[nk:])]
        return list(carry_p) + list(ys_p), out_t

    def partial_eval(self, trace, args, params):
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.core.trace import set_current_trace
        from jaxlite._src.interpreters.partial_eval import partial_eval_jaxpr
        from jaxlite._src.interpreters.staging import StagingTrace
        jaxpr, nc, nk = params["jaxpr"], params["num_consts"], params["num_carry"]
        unknown = [trace.is_unknown(a) for a in args]
        cu, ku, xu = unknown[:nc], unknown[nc:nc + nk], unknown[nc + nk:]
        ny = len(jaxpr.out_avals) - nk
        while True:
            _, _, ou, _ = partial_eval_jaxpr(jaxpr, cu + ku + xu, ku + [False] * ny)
            new = [a or b for a, b in zip(ku, ou[:nk])]
            if new == ku:
                break
            ku = new
        known, unk, out_unknown, n_res = partial_eval_jaxpr(jaxpr, cu + ku + xu,
                                                             ku + [False] * ny)
        unknown = cu + ku + xu
        # the known scan: residuals come out as extra stacked ys
        k_nc, k_nk = sum(1 for x in cu if not x), sum(1 for x in ku if not x)
        known_args = [a for a, uk in zip(args, unknown) if not uk]
        with set_current_trace(trace.parent):
            kouts = self._bind(known_args, known, k_nc, k_nk, params)
        n_kout = len(kouts) - n_res
        known_outs, residuals = kouts[:n_kout], kouts[n_kout:]
        # the staged scan: (unknown consts, unknown carry, unknown xs + residuals)
        uj = unk.jaxpr
        res_vars, rest = uj.invars[:n_res], uj.invars[n_res:]
        u_nc, u_nk = sum(cu), sum(ku)
        uj = uj.replace(invars=rest[:u_nc + u_nk] + rest[u_nc + u_nk:] + res_vars)
        uargs = [a for a, uk in zip(args, unknown) if uk]
        # carries that became unknown but were known values: feed them in as values
        staged = StagingTrace.process_primitive(
            trace, self, uargs + list(residuals),
            dict(params, jaxpr=ClosedJaxpr(uj, unk.consts), num_consts=u_nc, num_carry=u_nk,
                 linear=(False,) * (len(uargs) + len(residuals))))
        ki, ui = iter(known_outs), iter(staged)
        return [next(ui) if x else next(ki) for x in out_unknown]

    def transpose(self, cts, *args, jaxpr, num_consts, num_carry, length, reverse, **params):
        from jaxlite._src.core.ir import ClosedJaxpr
        from jaxlite._src.interpreters import ad
        from jaxlite._src.interpreters.staging import trace_to_jaxpr
        nc, nk = num_consts, num_carry
        params = {k: v for k, v in params.items() if k != "linear"}
        lin = [u.is_undefined(a) for a in args]
        # carries are treated as linear even when partial evaluation fed a known (zero)
        # initial value into them; such an argument just gets no cotangent
        carry_undefined = lin[nc:nc + nk]
        lin[nc:nc + nk] = [True] * nk
        c_lin, x_lin = lin[:nc], lin[nc + nk:]
        # a ref's cotangent (RefAccum) goes into the loop as its ref, which each transposed
        # iteration reads and updates
        ref_ct = [isinstance(a, RefAccum) for a in args[:nc]]
        bw_lin = [f or r for f, r in zip(lin[:nc], ref_ct)] + lin[nc:]
        consts_k = [a.inst().ref if r else a for a, f, r in zip(args[:nc], c_lin, ref_ct)
                    if not f]
        ref_k = [r for f, r in zip(c_lin, ref_ct) if not f]
        xs_k = [a for a, f in zip(args[nc + nk:], x_lin) if not f]
        c_avals = jaxpr.in_avals[:nc]
        k_avals = jaxpr.in_avals[nc:nc + nk]
        x_avals = jaxpr.in_avals[nc + nk:]
        ct_c_avals = [ad.tangent_aval(a) for a, f in zip(c_avals, c_lin) if f]
        y_nz = [not u.is_zero(c) for c in cts[nk:]]
        y_avals = [a for a, z in zip(jaxpr.out_avals[nk:], y_nz) if z]

        def body(*xs):
            it = iter(xs)
            ck = [next(it) for _ in consts_k]
            acc = [next(it) for _ in ct_c_avals]
            ct_carry = [next(it) for _ in k_avals]
            xk = [next(it) for _ in xs_k]
            ct_y = [next(it) if z else None for z in y_nz]
            ci, xi = iter(zip(ck, ref_k)), iter(xk)
            full = [None if f else _ref_accum_or(next(ci), a) for f, a in zip(c_lin, c_avals)] \
                + [None] * nk + [None if f else next(xi) for f in x_lin]
            res = ad.backward_pass(jaxpr.jaxpr, jaxpr.consts, bw_lin, full, ct_carry + ct_y)
            res = [ad.instantiate(ad.Zero(ad.tangent_aval(a)) if r is None else r)
                   for r, a in zip(res, jaxpr.in_avals)]
            r_c = [r for r, f in zip(res[:nc], c_lin) if f]
            acc = [u.add_any(a, r) for a, r in zip(acc, r_c)]
            r_x = [r for r, f in zip(res[nc + nk:], x_lin) if f]
            return acc + res[nc:nc + nk] + r_x
        layout = list(c_avals[i] for i, f in enumerate(c_lin) if not f) + ct_c_avals + \
            [ad.tangent_aval(a) for a in k_avals] + \
            [x_avals[i] for i, f in enumerate(x_lin) if not f] + \
            [ad.tangent_aval(a) for a in y_avals]
        bj, _, bconsts = trace_to_jaxpr(body, layout)
        cts = [ad.instantiate(c) for c in cts[:nk]] + [c for c in cts[nk:]
                                                        if not u.is_zero(c)]
        acc0 = [u.zeros(a) for a in ct_c_avals]
        outs = self.bind(*consts_k, *acc0, *cts[:nk], *xs_k, *cts[nk:],
                         jaxpr=ClosedJaxpr(bj, bconsts), length=length, reverse=not reverse,
                         num_consts=len(consts_k), num_carry=len(acc0) + nk,
                         linear=(False,) * (len(consts_k) + len(acc0) + nk + len(xs_k) +
                                            len(y_avals)),
                         **params)
        ct_consts = iter(outs[:len(acc0)])
        ct_carry = outs[len(acc0):len(acc0) + nk]
        ct_xs = iter(outs[len(acc0) + nk:])
        return [next(ct_consts) if f else None for f in c_lin] + \
            [c if f else None for c, f in zip(ct_carry, carry_undefined)] + \
            [next(ct_xs) if f else None for f in x_lin]

    # -- batching
    def batch(self, size, args, dims, jaxpr, num_consts, num_carry, **params):
        from jaxlite._src.interpreters.batching import batch_jaxpr
        nc, nk = num_consts, num_carry
        consts = [a if d is None else bdim_at_front(a, d, size)
                  for a, d in zip(args[:nc], dims[:nc])]
        carry = [bdim_at_front(a, d, size) for a, d in zip(args[nc:nc + nk],
                                                          dims[nc:nc + nk])]
        xs = [a if d is None else moveaxis(bdim_at_front(a, d, size), 0, 1)
              for a, d in zip(args[nc + nk:], dims[nc + nk:])]
        in_dims = [None if d is None else 0 for d in dims[:nc]] + [0] * nk + \
            [None if d is None else 0 for d in dims[nc + nk:]]
        body = batch_jaxpr(jaxpr, size, in_dims)
        outs = self._bind(consts + carry + xs, body, nc, nk, params)
        return outs, [0] * nk + [1] * (len(outs) - nk)

    def numba(self, code, eqn, ins, jaxpr, length, reverse, num_consts, num_carry, **_):
        """Tier 2's loop code (``compiler/numba_bodies.py``): a ``for`` loop over the steps reading each xs row and writing each ys
        row into arrays stacked ahead."""
        nc, nk = num_consts, num_carry
        carry = [code.fresh("c") for _ in range(nk)]
        owned = code.loop_owned(jaxpr, nc, nk)
        code.assign(carry, [f"{x}.copy()" if k in owned else x
                            for k, x in enumerate(ins[nc:nc + nk])])
        ys = [code.new_array(v.aval, "y") for v in eqn.outvars[nk:]]
        bufs = code.carry_buffers(jaxpr, nc, carry, owned)
        i = code.fresh("i")
        code.emit(f"for {i} in range({length - 1}, -1, -1):" if reverse else
                  f"for {i} in range({length}):")
        code.push()
        xs = [f"{x}[{i}]" for x in ins[nc + nk:]]
        res = code.jaxpr(jaxpr, ins[:nc] + carry + xs, [nc + k for k in owned],
                         {k: b[0] for k, b in bufs.items()},
                         copied=range(nk, len(eqn.outvars)))
        for y, r in zip(ys, res[nk:]):
            code.emit(f"{y}[{i}] = {r}")
        code.assign(carry, res[:nk])
        code.swap(bufs)
        code.pop()
        return carry + ys



scan_p = Scan()


def _ref_accum_or(pair, aval):
    """A known loop constant, or (for a ref's cotangent) the accumulator over its ref."""
    v, is_ref_ct = pair
    return RefAccum(aval, v) if is_ref_ct else v
