"""Rematerialization (``jax.checkpoint``): the ``remat2`` call primitive and ``name``.

Under reverse mode, ``remat2``'s partial-evaluation rule computes the known outputs now but
saves only the residuals its ``policy`` allows; the staged (backward) part recomputes the rest
from the primal inputs. ``name`` tags a value for ``save_only_these_names`` policies.
"""
from __future__ import annotations

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.ir import ClosedJaxpr, Literal, Var
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.call import BodyCall

__all__ = ["remat_p", "name_p"]


class Remat(BodyCall):
    """Call of a checkpointed function (JAX prints it ``remat2``)."""
    name = "remat2"
    body_label = "checkpoint"
    forwards_inputs = True

    def pp_params(self, params):
        return [(k, params[k]) for k in ("differentiated", "jaxpr", "policy", "prevent_cse")]

    def jvp(self, primals, tangents, jaxpr, **params):
        from jaxlite._src.interpreters import ad
        nonzeros = [type(t) is not ad.Zero for t in tangents]
        # outputs that do not depend on a differentiated input keep a symbolic zero tangent
        # (JAX's remat_jvp: a loop carrying such an output keeps it undifferentiated)
        closed, out_nz = ad.jvp_jaxpr_nz(jaxpr, nonzeros, False)
        nz_t = [t for t in tangents if type(t) is not ad.Zero]
        outs = self.bind(*primals, *nz_t, jaxpr=closed, **dict(params, differentiated=True))
        n = len(jaxpr.out_avals)
        t_out = iter(outs[n:])
        return outs[:n], [next(t_out) if nz else ad.Zero(ad.tangent_aval(a))
                          for nz, a in zip(out_nz, jaxpr.out_avals)]

    def partial_eval(self, trace, args, params):
        """Known outputs are computed now; the staged part recomputes what the policy does
        not save, from the known inputs.

        Which values are known is decided as JAX's ``partial_eval_jaxpr_custom`` does: each
        equation of the body goes through partial evaluation, so a nested loop, cond or call
        with both known and unknown operands splits, and its outputs that depend only on
        known values (a primal loop counter beside a tangent carry) stay known. The staged
        body recomputes such an equation whole; its transpose splits it again."""
        from jaxlite._src.compiler.passes import dce
        from jaxlite._src.core.trace import ctx, set_current_trace
        from jaxlite._src.interpreters.eval import eval_jaxpr
        from jaxlite._src.interpreters.partial_eval import PartialEvalTrace
        from jaxlite._src.interpreters.staging import StagingTrace, trace_to_jaxpr
        closed, policy = params["jaxpr"], params["policy"]
        jaxpr = closed.jaxpr
        in_unknown = [trace.is_unknown(a) for a in args]
        known_args = [a for a, uk in zip(args, in_unknown) if not uk]
        found = {}

        def known_fun(*known_in):
            # the body over a partial-evaluation trace of its own: its known work is traced
            # here; what it stages is dropped (the staged remat recomputes from the known
            # inputs instead of saving residuals)
            split = PartialEvalTrace(ctx.trace)
            it = iter(known_in)
            env = dict(zip(jaxpr.constvars, closed.consts))
            for v, uk in zip(jaxpr.invars, in_unknown):
                env[v] = split.new_arg(v.aval) if uk else next(it)

            def read(a):
                return u.const_literal(a) if type(a) is Literal else env[a]
            saveable = []
            with set_current_trace(split):
                for e in jaxpr.eqns:
                    ins = [read(a) for a in e.invars]
                    out = e.primitive.bind(*ins, **e.params)
                    outs = out if e.primitive.multiple_results else [out]
                    env.update(zip(e.outvars, outs))
                    if (policy is not None and not any(split.is_unknown(x) for x in ins)
                            and policy(e.primitive, *[a.aval for a in e.invars],
                                       **e.params)):
                        saveable.extend(e.outvars)
            found["unknown"] = {v for v, x in env.items() if split.is_unknown(x)}
            found["saveable"] = saveable
            return [read(a) for a in jaxpr.outvars if not split.is_unknown(read(a))] + \
                [env[v] for v in saveable]

        kj, _, kconsts = trace_to_jaxpr(known_fun, [v.aval for v, uk in
                                                    zip(jaxpr.invars, in_unknown) if not uk],
                                        parent=trace.parent)
        unknown, saveable = found["unknown"], set(found["saveable"])
        out_unknown = [type(a) is Var and a in unknown for a in jaxpr.outvars]
        n_kout = out_unknown.count(False)
        # the staged jaxpr: (residuals, known inputs, unknown inputs) -> unknown outputs,
        # recomputing every known value that is not a saved residual
        outvars = [a for a, uk in zip(jaxpr.outvars, out_unknown) if uk]
        body = [e for e in jaxpr.eqns if not any(v in saveable for v in e.outvars)]
        staged = dce(ClosedJaxpr(jaxpr.replace(eqns=body, outvars=outvars), closed.consts))
        read_vars = {a for e in staged.jaxpr.eqns for a in e.invars if type(a) is Var}
        read_vars.update(a for a in outvars if type(a) is Var)
        saved = [v for v in found["saveable"] if v in read_vars]
        known_in = [v for v in jaxpr.invars if v not in unknown and v in read_vars]
        unknown_in = [v for v in jaxpr.invars if v in unknown]
        staged = ClosedJaxpr(staged.jaxpr.replace(invars=saved + known_in + unknown_in),
                             staged.consts)
        # the known part: only what the known outputs and the saved residuals need
        kouts = kj.outvars[:n_kout] + [kv for kv, v in zip(kj.outvars[n_kout:],
                                                            found["saveable"]) if v in saved]
        kj = dce(ClosedJaxpr(kj.replace(outvars=kouts), kconsts))
        with set_current_trace(trace.parent):
            vals = eval_jaxpr(kj.jaxpr, kj.consts, *known_args)
        known_outs, saved_vals = vals[:n_kout], vals[n_kout:]
        known_env = dict(zip([v for v, uk in zip(jaxpr.invars, in_unknown) if not uk],
                             known_args))
        unknown_args = [a for a in args if trace.is_unknown(a)]
        uouts = StagingTrace.process_primitive(
            trace, self, list(saved_vals) + [known_env[v] for v in known_in] + unknown_args,
            dict(params, jaxpr=staged, differentiated=True))
        ui, ki = iter(uouts), iter(known_outs)
        return [next(ui) if uk else next(ki) for uk in out_unknown]

    def batch(self, size, args, dims, jaxpr, **params):
        from jaxlite._src.interpreters.batching import batch_jaxpr
        outs = self.bind(*args, jaxpr=batch_jaxpr(jaxpr, size, dims), **params)
        return outs, [0] * len(outs)

    def transpose(self, cts, *args, jaxpr, **params):
        from jaxlite._src.interpreters import ad
        linear, refs, known = ad.transpose_args(args)
        # (the body recomputes known values, possibly inside equations that also compute
        # linear ones: it is split by partial evaluation before it is transposed, as JAX's
        # remat transpose does)
        closed = ad.transpose_jaxpr(jaxpr, linear, refs, split_known=True)
        cts = [ad.instantiate(c) for c in cts]
        outs = iter(self.bind(*known, *cts, jaxpr=closed, **dict(params, differentiated=True)))
        return [next(outs) if lin else None for lin in linear]


class Name(Primitive):
    """Identity that tags its operand with ``name`` (``checkpoint_name``)."""
    name = "name"

    def impl(self, x, name):
        return x

    def abstract_eval(self, x, name):
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def lower_py(self, ctx, ins, name):
        return ins[0]

    def jvp(self, primals, tangents, name):
        return self.bind(primals[0], name=name), tangents[0]

    def transpose(self, ct, x, name):
        return [None if u.is_zero(ct) else ct]

    def batch(self, size, args, dims, name):
        return self.bind(args[0], name=name), dims[0]


remat_p, name_p = Remat(), Name()
