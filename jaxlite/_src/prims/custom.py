"""Primitives for user-defined derivatives and gradient control: ``custom_jvp_call``,
``custom_vjp_call`` (with its linear helper ``custom_lin``) and ``stop_gradient``.

The call primitives carry the primal function's ClosedJaxpr (``call_jaxpr``) and the user's
rules as Python callables on flat lists; the compiler inlines ``call_jaxpr``.
"""
from __future__ import annotations

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import bdim_at_front
from jaxlite._src.prims.call import CallPrimitive
from jaxlite._src.interpreters.wrapped_fun import wrap_init

__all__ = ["custom_jvp_call_p", "custom_vjp_call_p", "custom_lin_p", "stop_gradient_p"]


def _check_outs(kind, primal_avals, outs_p, outs_t):
    from jaxlite._src.interpreters.ad import tangent_aval
    for i, (a, p, t) in enumerate(zip(primal_avals, outs_p, outs_t)):
        pa = u.aval(p)
        if pa.shape != a.shape or pa.dtype != a.dtype:
            raise TypeError(
                f"Custom JVP rule must produce primal outputs with the same shapes and dtypes "
                f"as the primal function; output {i} of the rule is {pa.str_short()} but the "
                f"function returns {a.str_short()}.")
        if u.is_zero(t):
            continue
        ta, want = u.aval(t), tangent_aval(a)
        if ta.shape != want.shape or ta.dtype != want.dtype:
            raise TypeError(
                "Custom JVP rule must produce primal and tangent outputs with corresponding "
                f"shapes and dtypes, but got {pa.str_short(short_dtypes=False)} and "
                f"{ta.str_short(short_dtypes=False)} respectively (output {i}). "
                f"Expected a tangent of type {want.str_short(short_dtypes=False)}.")


class _CallBase(CallPrimitive):
    inlinable = True
    inline_param = "call_jaxpr"
    forwards_inputs = True

    def impl(self, *args, call_jaxpr, name, **_):
        from jaxlite._src.prims.call import jit_p
        return jit_p.compiled(call_jaxpr, name)(*args)

    def abstract_eval(self, *avals, call_jaxpr, **_):
        return call_jaxpr.out_avals

    def eager_out_avals(self, vals, params):
        return params["call_jaxpr"].out_avals

    def cost_jaxprs(self, params):
        """The compiled program runs the function itself (the custom rules are not lowered)."""
        return "sum", [params["call_jaxpr"]]

    def lower_py(self, ctx, ins, call_jaxpr, name, **_):
        fn = ctx.compile_sub(call_jaxpr, name)
        return f"{fn}({', '.join(ins)})"



class CustomJVPCall(_CallBase):
    """A function with a user JVP rule: ``jvp(primals, tangents) -> (outs, tangent_outs)``
    on flat lists."""
    name = "custom_jvp_call"

    def jvp(self, primals, tangents, call_jaxpr, jvp, name, symbolic_zeros):
        if not symbolic_zeros:
            tangents = [u.instantiate(t) for t in tangents]
        outs_p, outs_t = jvp(list(primals), list(tangents))
        _check_outs("jvp", call_jaxpr.out_avals, outs_p, outs_t)
        return list(outs_p), list(outs_t)

    def transpose(self, cts, *args, call_jaxpr, jvp, name, symbolic_zeros):
        # a custom_jvp function found linear (linear_transpose, or a linear solve's
        # transpose): its body is transposed, the rule plays no part (as in JAX)
        from jaxlite._src.interpreters import ad
        from jaxlite._src.interpreters.eval import eval_jaxpr
        linear = [type(a) is ad.UndefinedPrimal for a in args]
        closed = ad.transpose_jaxpr(call_jaxpr, linear)
        known = [a for a, lin in zip(args, linear) if not lin]
        cts = [ad.instantiate(c) for c in cts]
        outs = iter(eval_jaxpr(closed.jaxpr, closed.consts, *known, *cts))
        return [next(outs) if lin else None for lin in linear]

    def get_bind_params(self, params):
        """JAX's re-binding parameters: the primal function and the JVP rule become wrapped
        functions ``subfuns=(fun, jvp)`` (``fun.call_wrapped(*args)`` evaluates the body;
        ``jvp.call_wrapped(*primals, *tangents)`` gives the primal and tangent outputs)."""
        p = dict(params)
        closed, rule = p.pop("call_jaxpr"), p.pop("jvp")
        p["subfuns"] = (wrap_init(_eval_closed, {"closed": closed}),
                        wrap_init(_jvp_flat, {"rule": rule, "n": len(closed.in_avals)}))
        return p

    def bind(self, *args, subfuns=None, **params):
        """Apply the primitive (also to the ``subfuns`` of ``get_bind_params``)."""
        if subfuns is not None:
            params.update(_from_subfuns(subfuns))
        return super().bind(*args, **params)

    def pp_params(self, params):
        return [("name", params["name"]), ("call_jaxpr", params["call_jaxpr"]),
                ("jvp", getattr(params["jvp"], "__name__", params["jvp"])),
                ("symbolic_zeros", params["symbolic_zeros"])]

    def batch(self, size, args, dims, call_jaxpr, jvp, name, symbolic_zeros):
        from jaxlite._src.interpreters.batching import batch_fun, batch_jaxpr
        args, dims0 = _front(size, args, dims)
        closed = batch_jaxpr(call_jaxpr, size, dims0)
        n, n_out = len(args), len(call_jaxpr.out_avals)

        def jvp_batched(primals, tangents):
            def one(*pt):
                op, ot = jvp(list(pt[:n]), list(pt[n:]))
                return list(op) + [u.instantiate(t) for t in ot]
            ts = [u.instantiate(t) for t in tangents]
            outs, _ = batch_fun(one, size, list(primals) + ts, dims0 + dims0,
                                [0] * (2 * n_out))
            return outs[:n_out], outs[n_out:]
        jvp_batched.__name__ = getattr(jvp, "__name__", "jvp")
        outs = self.bind(*args, call_jaxpr=closed, jvp=jvp_batched, name=name,
                         symbolic_zeros=symbolic_zeros)
        return outs, [0] * len(outs)


def _eval_closed(*args, closed):
    from jaxlite._src.interpreters.eval import eval_jaxpr
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _jvp_flat(*xs, rule, n):
    outs_p, outs_t = rule(list(xs[:n]), list(xs[n:]))
    return list(outs_p) + [u.instantiate(t) for t in outs_t]


def _from_subfuns(subfuns):
    # the inverse of CustomJVPCall.get_bind_params: (call_jaxpr, jvp) from its subfuns
    fun, jvp = subfuns
    if (getattr(fun, "f", None) is _eval_closed and getattr(jvp, "f", None) is _jvp_flat
            and not fun.wrappers and not jvp.wrappers):
        return {"call_jaxpr": dict(fun.params)["closed"], "jvp": dict(jvp.params)["rule"]}
    raise TypeError("custom_jvp_call.bind(subfuns=...) takes the subfuns of "
                    "custom_jvp_call_p.get_bind_params(eqn.params) only; to bind other "
                    "functions, call a jax.custom_jvp function instead.")


def _front(size, args, dims):
    return ([a if d is None else bdim_at_front(a, d, size) for a, d in zip(args, dims)],
            [None if d is None else 0 for d in dims])


def _to_front(size, vals, dims):
    return [bdim_at_front(v, d, size) for v, d in zip(vals, dims)]


class CustomVJPCall(_CallBase):
    """A function with user forward/backward rules. Under differentiation ``fwd`` runs on the
    primals and the output tangents come from ``custom_lin``, whose transpose runs ``bwd``."""
    name = "custom_vjp_call"

    def jvp(self, primals, tangents, call_jaxpr, fwd, bwd, name, symbolic_zeros):
        from jaxlite._src.interpreters.ad import tangent_aval
        outs, res = fwd(list(primals), [not u.is_zero(t) for t in tangents])
        out_avals = call_jaxpr.out_avals
        if len(outs) != len(out_avals):
            raise TypeError("Custom VJP fwd rule must produce a pair (primal outputs, "
                            "residuals) whose first element has the structure of the primal "
                            f"function's output; got {len(outs)} outputs for "
                            f"{len(out_avals)}.")
        for i, (o, a) in enumerate(zip(outs, out_avals)):
            oa = u.aval(o)
            if oa.shape != a.shape or oa.dtype != a.dtype:
                raise TypeError(
                    "Custom VJP fwd rule must produce primal outputs with the same shapes and "
                    f"dtypes as the primal function; output {i} is {oa.str_short()} but the "
                    f"function returns {a.str_short()}.")
        ts = [u.instantiate(t) for t in tangents]
        t_out = custom_lin_p.bind(*res, *ts, num_res=len(res), bwd=bwd,
                                  out_avals=tuple(tangent_aval(a) for a in out_avals),
                                  in_avals=tuple(u.aval(t) for t in ts),
                                  symbolic_zeros=symbolic_zeros)
        return list(outs), list(t_out)

    def batch(self, size, args, dims, call_jaxpr, fwd, bwd, name, symbolic_zeros):
        from jaxlite._src.interpreters.batching import batch_fun, batch_jaxpr
        from jaxlite._src.interpreters.ad import tangent_aval
        from jaxlite._src.prims.reductions import reduce_sum_p
        args, dims0 = _front(size, args, dims)
        closed = batch_jaxpr(call_jaxpr, size, dims0)
        n_out, in_avals = len(call_jaxpr.out_avals), call_jaxpr.in_avals
        cell = {}

        def fwd_batched(primals, perturbed=None):
            def one(*p):
                outs, res = fwd(list(p), perturbed)
                cell["n_res"] = len(res)
                return list(outs) + list(res)
            vals, ds = batch_fun(one, size, list(primals), dims0)
            vals = _to_front(size, vals, ds)
            return vals[:n_out], vals[n_out:]

        def bwd_batched(res, cts):
            nr = len(res)
            cts = [u.instantiate(c) for c in cts]

            def one(*rc):
                got = bwd(list(rc[:nr]), list(rc[nr:]))
                return [u.zeros(tangent_aval(a)) if g is None else g
                        for g, a in zip(got, in_avals)]
            vals, ds = batch_fun(one, size, list(res) + list(cts), [0] * (nr + len(cts)))
            out = []
            for v, d, d0 in zip(vals, ds, dims0):
                if d0 is None:   # a shared (unbatched) input: sum its per-member cotangents
                    out.append(v if d is None else reduce_sum_p.bind(v, axes=(d,),
                                                                     out_sharding=None))
                else:
                    out.append(_to_front(size, [v], [d])[0] if d is not None else
                               _to_front(size, [v], [None])[0])
            return out
        fwd_batched.__name__ = getattr(fwd, "__name__", "fwd")
        bwd_batched.__name__ = getattr(bwd, "__name__", "bwd")
        outs = self.bind(*args, call_jaxpr=closed, fwd=fwd_batched, bwd=bwd_batched,
                         name=name, symbolic_zeros=symbolic_zeros)
        return outs, [0] * len(outs)

    def pp_params(self, params):
        return [("name", params["name"]),
                ("bwd", getattr(params["bwd"], "__name__", params["bwd"])),
                ("call_jaxpr", params["call_jaxpr"]),
                ("fwd", getattr(params["fwd"], "__name__", params["fwd"])),
                ("symbolic_zeros", params["symbolic_zeros"])]


class CustomLin(Primitive):
    """The linear map of a custom_vjp function: only its transpose (``bwd``) exists."""
    name = "custom_lin"
    accepts_extended = True   # residuals may be key arrays (passed to bwd as they are)
    multiple_results = True
    transpose_always = True   # (bwd runs on zero cotangents too, as in JAX)

    def abstract_eval(self, *avals, num_res, bwd, out_avals, in_avals, symbolic_zeros):
        return list(out_avals)

    def impl(self, *args, **params):
        raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")

    # Only the transpose can run: forward mode or batching of the linear map itself would
    # need the JVP that a custom_vjp function does not have (as in JAX).
    def jvp(self, primals, tangents, **params):
        self.impl()

    def batch(self, size, args, dims, **params):
        self.impl()

    def transpose(self, cts, *args, num_res, bwd, out_avals, in_avals, symbolic_zeros):
        res = args[:num_res]
        if not symbolic_zeros:     # with symbolic zeros, ``bwd`` sees Zero cotangents
            cts = [u.instantiate(c) for c in cts]
        in_cts = bwd(list(res), cts)
        if len(in_cts) != len(in_avals):
            raise TypeError(f"Custom VJP bwd rule returned {len(in_cts)} cotangents for "
                            f"{len(in_avals)} inputs.")
        return [None] * num_res + list(in_cts)


class StopGradient(Primitive):
    """Identity whose derivative is zero (``lax.stop_gradient``)."""
    name = "stop_gradient"
    accepts_extended = True
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x):
        return x

    def abstract_eval(self, x):
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def lower_py(self, ctx, ins):
        return ins[0]

    def sharding_rule(self, avals):
        """The identity: every dimension keeps its layout."""
        return [tuple(range(avals[0].ndim))]

    def batch(self, size, args, dims):
        return self.bind(args[0]), dims[0]


custom_jvp_call_p, custom_vjp_call_p = CustomJVPCall(), CustomVJPCall()
custom_lin_p, stop_gradient_p = CustomLin(), StopGradient()
