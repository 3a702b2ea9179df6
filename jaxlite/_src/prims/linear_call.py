"""The ``linear_call`` primitive: a call of a function that is linear in some of its inputs,
whose transpose is a second user function (``jax.custom_derivatives.linear_call``).

Parameters, printed as JAX prints them: ``callee`` (the ClosedJaxpr of the function; its
inputs are the values it closes over, then the residual inputs, then the linear inputs),
``num_callee_consts``, ``num_res`` and ``transpose_thunk``, a Python callable
``thunk(residuals, cotangents) -> linear-input cotangents`` (flat lists) that binds the
transposed ``linear_call`` (whose own thunk transposes back to the original function).
"""
from __future__ import annotations

from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import bdim_at_front
from jaxlite._src.prims.call import BodyCall

__all__ = ["linear_call_p", "LinearCall"]


class LinearCall(BodyCall):
    """A call of ``callee``, linear in its last inputs, with a user transpose rule."""
    name = "linear_call"
    inline_param = "callee"
    body_label = "linear_call"

    def pp_params(self, params):
        return [("callee", params["callee"]),
                ("num_callee_consts", params["num_callee_consts"]),
                ("num_res", params["num_res"]),
                ("transpose_thunk", params["transpose_thunk"])]

    # -- forward mode: the tangent of the linear inputs goes through the same linear call;
    # a tangent of the residuals (which JAX does not allow) flows through ordinary forward
    # differentiation of the callee with the linear inputs held fixed.
    def jvp(self, primals, tangents, callee, num_callee_consts, num_res, transpose_thunk):
        from jaxlite._src.interpreters import ad
        from jaxlite._src.interpreters.eval import eval_jaxpr
        params = dict(callee=callee, num_callee_consts=num_callee_consts, num_res=num_res,
                      transpose_thunk=transpose_thunk)
        n_fixed = num_callee_consts + num_res
        outs = self.bind(*primals, **params)
        lin_t = tangents[n_fixed:]
        if all(u.is_zero(t) for t in lin_t):
            t_out = [ad.Zero(ad.tangent_aval(a)) for a in callee.out_avals]
        else:
            t_out = self.bind(*primals[:n_fixed], *[u.instantiate(t) for t in lin_t],
                              **params)
        fixed_t = tangents[:n_fixed]
        if not all(u.is_zero(t) for t in fixed_t):
            _, t_fixed = ad.jvp_flat(
                lambda *a: eval_jaxpr(callee.jaxpr, callee.consts, *a), list(primals),
                list(fixed_t) + [ad.Zero.like(p) for p in primals[n_fixed:]])
            t_out = [ad.add_tangents(a, b) for a, b in zip(t_out, t_fixed)]
        return list(outs), list(t_out)

    def transpose(self, cts, *args, callee, num_callee_consts, num_res, transpose_thunk):
        from jaxlite._src.interpreters import ad
        n_fixed = num_callee_consts + num_res
        if any(type(a) is ad.UndefinedPrimal for a in args[:n_fixed]):
            raise TypeError(
                "linear_call can only be transposed with respect to its linear_args: a "
                "residual argument (or a value the linear function closes over) depends on "
                "the input being transposed. Pass that value in linear_args, or keep it "
                "out of the function being transposed.")
        res = list(args[num_callee_consts:n_fixed])
        cts = [u.instantiate(c) for c in cts]
        lin_cts = transpose_thunk(res, cts)
        return [None] * n_fixed + list(lin_cts)

    def batch(self, size, args, dims, callee, num_callee_consts, num_res, transpose_thunk):
        # Not batchable in JAX 0.10.2 (NotImplementedError); jaxlite batches the callee and
        # the transpose function. Linear inputs are all batched at 0 (an unbatched one is
        # broadcast, so its cotangent is summed over the batch by that broadcast's
        # transpose); residuals keep their (front-moved) dimension or stay unbatched.
        from jaxlite._src.interpreters.batching import batch_fun, batch_jaxpr
        n_fixed = num_callee_consts + num_res
        new_args, new_dims = [], []
        for i, (a, d) in enumerate(zip(args, dims)):
            if d is None and i < n_fixed:
                new_args.append(a)
                new_dims.append(None)
            else:
                new_args.append(bdim_at_front(a, d, size))
                new_dims.append(0)
        closed = batch_jaxpr(callee, size, new_dims)
        res_dims = new_dims[num_callee_consts:n_fixed]
        n_lin = len(args) - n_fixed

        def transpose_thunk_batched(res, cts):
            def one(*rc):
                return list(transpose_thunk(list(rc[:num_res]), list(rc[num_res:])))
            outs, _ = batch_fun(one, size, list(res) + list(cts),
                                list(res_dims) + [0] * len(cts), [0] * n_lin)
            return outs

        outs = self.bind(*new_args, callee=closed, num_callee_consts=num_callee_consts,
                         num_res=num_res, transpose_thunk=transpose_thunk_batched)
        return outs, [0] * len(outs)


linear_call_p = LinearCall()
