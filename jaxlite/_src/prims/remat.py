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
        closed = ad.jvp_jaxpr(jaxpr, nonzeros)
        nz_t = [t for t in tangents if type(t) is not ad.Zero]
        outs = self.bind(*primals, *nz_t, jaxpr=closed, **dict(params, differentiated=True))
        n = len(jaxpr.out_avals)
        return outs[:n], outs[n:]

    def partial_eval(self, trace, args, params):
        """Known outputs are computed now; the staged part recomputes what the policy does
        not save, from the known inputs."""
        from jaxlite._src.core.trace import set_current_trace
        from jaxlite._src.interpreters.staging import StagingTrace
        closed, policy = params["jaxpr"], params["policy"]
        jaxpr = closed.jaxpr
        env, unknown = {}, set()
        for v, c in zip(jaxpr.constvars, closed.consts):
            env[v] = c
        for v, a in zip(jaxpr.invars, args):
            if trace.is_unknown(a):
                unknown.add(v)
            else:
                env[v] = a

        def read(a):
            return u.const_literal(a) if type(a) is Literal else env[a]

        # which equations depend on unknown inputs, and which known ones the policy saves
        saveable = set()
        for e in jaxpr.eqns:
            if any(type(a) is Var and a in unknown for a in e.invars):
                unknown.update(e.outvars)
            elif policy is not None and policy(e.primitive, *[a.aval for a in e.invars],
                                               **e.params):
                saveable.update(e.outvars)
        out_unknown = [type(a) is Var and a in unknown for a in jaxpr.outvars]
        # the staged jaxpr: (residuals, known inputs, unknown inputs) -> unknown outputs,
        # recomputing every known value that is not a saved residual
        from jaxlite._src.compiler.passes import dce
        outvars = [a for a, uk in zip(jaxpr.outvars, out_unknown) if uk]
        body = [e for e in jaxpr.eqns if not any(v in saveable for v in e.outvars)]
        staged = dce(ClosedJaxpr(jaxpr.replace(eqns=body, outvars=outvars), closed.consts))
        read_vars = {a for e in staged.jaxpr.eqns for a in e.invars if type(a) is Var}
        read_vars.update(a for a in outvars if type(a) is Var)
        saved = [v for e in jaxpr.eqns for v in e.outvars if v in saveable and v in read_vars]
        known_in = [v for v in jaxpr.invars if v not in unknown and v in read_vars]
        unknown_in = [v for v in jaxpr.invars if v in unknown]
        staged = ClosedJaxpr(staged.jaxpr.replace(invars=saved + known_in + unknown_in),
                             staged.consts)
        # the known part: only what the known outputs and the saved residuals need
        known_outs = [a for a, uk in zip(jaxpr.outvars, out_unknown) if not uk]
        kjaxpr = dce(ClosedJaxpr(jaxpr.replace(
            eqns=[e for e in jaxpr.eqns if not any(v in unknown for v in e.outvars)],
            outvars=known_outs + saved), closed.consts)).jaxpr
        with set_current_trace(trace.parent):
            for e in kjaxpr.eqns:
                out = e.primitive.bind(*[read(a) for a in e.invars], **e.params)
                outs = out if e.primitive.multiple_results else [out]
                for v, o in zip(e.outvars, outs):
                    env[v] = o
        unknown_args = [a for a in args if trace.is_unknown(a)]
        uouts = StagingTrace.process_primitive(
            trace, self, [env[v] for v in saved] + [env[v] for v in known_in] + unknown_args,
            dict(params, jaxpr=staged, differentiated=True))
        ui = iter(uouts)
        return [next(ui) if uk else read(a) for a, uk in zip(jaxpr.outvars, out_unknown)]

    def batch(self, size, args, dims, jaxpr, **params):
        from jaxlite._src.interpreters.batching import batch_jaxpr
        outs = self.bind(*args, jaxpr=batch_jaxpr(jaxpr, size, dims), **params)
        return outs, [0] * len(outs)

    def transpose(self, cts, *args, jaxpr, **params):
        from jaxlite._src.interpreters import ad
        linear, refs, known = ad.transpose_args(args)
        closed = ad.transpose_jaxpr(jaxpr, linear, refs)
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
