"""The ``jit`` call primitive: a nested jitted function inside a traced program.

It carries the callee's ClosedJaxpr as its ``jaxpr`` parameter and prints as JAX does:
``jit[name=f jaxpr={ lambda ; ... }]``. The compiler inlines it; eagerly it runs the
callee's compiled code.
"""
from __future__ import annotations

import weakref

from jaxlite._src.core.ir import cached_on_jaxpr
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.sharding.mesh import mesh_active

__all__ = ["jit_p", "JitCall", "CallPrimitive"]


def _eager_out(o, aval):
    """An eager call's output: an array, or a key array over the data the body computed
    (a body can make keys from constants with no key operand)."""
    import numpy as np
    from jaxlite._src.core import dtypes
    from jaxlite._src.runtime.array import ArrayImpl
    if dtypes.is_extended(aval.dtype):
        return aval.dtype.from_physical(ArrayImpl(np.asarray(o, aval.dtype.physical_dtype)))
    return ArrayImpl(np.asarray(o, aval.dtype), aval.weak_type)


def _forward_inputs(args, outs, closed):
    """``outs`` with each output that is an input of ``closed``'s body (its outvar is an
    invar) replaced by that input's array object itself, when its type is the output's."""
    from jaxlite._src.runtime.array import ArrayImpl
    jaxpr = closed.jaxpr
    pos = {id(v): i for i, v in enumerate(jaxpr.invars)}
    res = list(outs)
    for k, (v, o) in enumerate(zip(jaxpr.outvars, outs)):
        i = pos.get(id(v))
        if i is None:
            continue
        a = args[i]
        if type(a) is ArrayImpl and type(o) is ArrayImpl and a.dtype == o.dtype and \
                a.weak_type == o.weak_type:
            res[k] = a
    return res


class CallPrimitive(Primitive):
    """Base of the primitives that run jaxprs (jit, custom derivatives, checkpoint, control
    flow): eager execution runs ``impl`` and wraps each output with its aval's weak type."""
    multiple_results = True
    #: eagerly, an output that is an input of the body (``params[inline_param]``) is that
    #: input's array object itself: JAX evaluates these bodies (custom_jvp_call,
    #: custom_vjp_call, remat) in Python eagerly, which forwards inputs (``jit`` does not)
    forwards_inputs = False

    def eager_out_avals(self, vals, params):
        from jaxlite._src.core.avals import ShapedArray
        import numpy as np
        return self.abstract_eval(*[ShapedArray(np.shape(v), np.asarray(v).dtype)
                                    for v in vals], **params)

    def eager(self, args, params):
        from jaxlite._src.core.primitive import eager_operand, extended_eager, extended_operands
        from jaxlite._src.runtime.array import ArrayImpl
        if extended_operands(args):
            return extended_eager[0](self, args, params)
        if any(isinstance(a, ArrayImpl) and a._sharding is not None for a in args):
            from jaxlite._src.runtime.dispatch import eager_placed
            return eager_placed(self, args, params)
        vals = [a._value if type(a) is ArrayImpl else eager_operand(a)[0] for a in args]
        outs = self.impl(*vals, **params)
        outs = [_eager_out(o, a) for o, a in zip(outs, self.eager_out_avals(vals, params))]
        if self.forwards_inputs:
            outs = _forward_inputs(args, outs, params[self.inline_param])
        if mesh_active[0]:      # (under jax.set_mesh: results live on the mesh's devices)
            from jaxlite._src.runtime.dispatch import on_context_mesh
            outs = on_context_mesh(outs)
        return outs


class BodyCall(CallPrimitive):
    """A call primitive whose body is the ClosedJaxpr in its parameter ``inline_param``:
    eagerly it runs the body compiled, its outputs are the body's, it is inlined by the
    compiler and lowers to a call of the compiled body (``body_label`` names that code)."""
    inlinable = True
    inline_param = "jaxpr"
    body_label = "call"

    def impl(self, *args, **params):
        return jit_p.compiled(params[self.inline_param], self.body_label)(*args)

    def abstract_eval(self, *avals, **params):
        return params[self.inline_param].out_avals

    def eager_out_avals(self, vals, params):
        return params[self.inline_param].out_avals

    def lower_py(self, ctx, ins, **params):
        fn = ctx.compile_sub(params[self.inline_param], self.body_label)
        return f"{fn}({', '.join(ins)})"


class JitCall(CallPrimitive):
    """Call of a jitted function (JAX's ``jit``/``pjit`` primitive)."""
    name = "jit"
    inlinable = True
    own_function = True     # (JAX lowers it to a call of a function of its own)

    def __init__(self):
        super().__init__()
        self._compiled = weakref.WeakKeyDictionary()
        self._compiled_owned = weakref.WeakKeyDictionary()   # {jaxpr: {owned_invars: fn}}
        self._donations = weakref.WeakKeyDictionary()   # jaxpr -> {donated_invars: Plan}

    def eager(self, args, params):
        """Run the callee; arrays given for donated inputs (``donated_invars``) are deleted
        afterwards, as a top-level call of a donating jit deletes them (this is how a donating
        jit under vmap, jvp or grad consumes its concrete operands)."""
        donated = params.get("donated_invars")
        if not donated or True not in donated:
            return super().eager(args, params)
        from jaxlite._src.runtime.donation import check_call, finish, plan
        closed = params["jaxpr"]
        per = self._donations.get(closed)
        if per is None:
            per = self._donations[closed] = {}
        p = per.get(donated)
        if p is None:   # (warns once about donations no output can use, as a compile does)
            p = per[donated] = plan(donated, closed.in_avals, closed.out_avals)
        if not p.donated:
            return super().eager(args, params)
        check_call(args, p)
        outs = super().eager(args, params)
        finish(args, [], p)
        return outs

    def compiled(self, closed, name, owned_invars=()):
        """``closed`` compiled (cached); ``owned_invars`` flags inputs the caller hands
        over (their buffers may be updated in place)."""
        if owned_invars:
            per = self._compiled_owned.setdefault(closed, {})
            fn = per.get(owned_invars)
        else:
            per, fn = None, self._compiled.get(closed)
        if fn is None:
            from jaxlite._src.compiler.codegen import lower_jaxpr
            from jaxlite._src.compiler.passes import optimize
            fn = lower_jaxpr(optimize(closed), name, owned_invars=owned_invars)
            if per is None:
                self._compiled[closed] = fn
            else:
                per[owned_invars] = fn
        return fn

    def impl(self, *args, jaxpr, name, **_):
        return self.compiled(jaxpr, name)(*args)

    def abstract_eval(self, *avals, jaxpr, **_):
        return jaxpr.out_avals

    def out_weak(self, avals, params):
        return False

    def eager_out_avals(self, vals, params):
        return params["jaxpr"].out_avals

    def lower_py(self, ctx, ins, jaxpr, name, **_):
        fn = ctx.compile_sub(jaxpr, name)
        return f"{fn}({', '.join(ins)})"

    def pp_params(self, params):
        out = [("name", params["name"])]
        if any(params.get("donated_invars", ())):
            out.append(("donated_invars", params["donated_invars"]))
        return out + [("jaxpr", params["jaxpr"])]

    # -- autodiff: the rules transform the callee's jaxpr and call it again
    def _params(self, params, closed, donated=None):
        n = len(closed.in_avals)
        return dict(params, jaxpr=closed,
                    donated_invars=tuple(donated) if donated else (False,) * n)

    def jvp(self, primals, tangents, jaxpr, **params):
        from jaxlite._src.interpreters import ad
        nonzeros = [type(t) is not ad.Zero for t in tangents]
        # outputs that do not depend on a differentiated input keep a symbolic zero tangent
        # (they leave the JVP as plain values, as in JAX)
        closed, out_nz = ad.jvp_jaxpr_nz(jaxpr, nonzeros, False)
        nz_t = [t for t in tangents if type(t) is not ad.Zero]
        # a donated primal donates its tangent too (as JAX)
        d = params.get("donated_invars") or (False,) * len(primals)
        donated = list(d) + [di for di, nz in zip(d, nonzeros) if nz]
        outs = self.bind(*primals, *nz_t, **self._params(dict(params, jaxpr=jaxpr), closed,
                                                         donated))
        n = len(jaxpr.out_avals)
        t_out = iter(outs[n:])
        return outs[:n], [next(t_out) if nz else ad.Zero(ad.tangent_aval(a))
                          for nz, a in zip(out_nz, jaxpr.out_avals)]

    def partial_eval(self, trace, args, params):
        """Split the call: the known part runs now (or in the enclosing trace), the part that
        depends on unknown inputs is staged, fed by residuals from the known part."""
        from jaxlite._src.core.trace import set_current_trace
        from jaxlite._src.interpreters.staging import StagingTrace
        closed = params["jaxpr"]
        unknowns = tuple(trace.is_unknown(a) for a in args)
        known, unknown, out_unknown, fwd, n_known_out = _split_call(closed, unknowns)
        known_args = [a for a, u in zip(args, unknowns) if not u]
        d = params.get("donated_invars") or (False,) * len(args)
        with set_current_trace(trace.parent):
            kouts = self.bind(*known_args, **self._params(
                params, known, [di for di, u in zip(d, unknowns) if not u]))
        known_outs, computed = kouts[:n_known_out], iter(kouts[n_known_out:])
        residuals = [next(computed) if f is None else known_args[f] for f in fwd]
        unknown_args = [a for a, u in zip(args, unknowns) if u]
        uouts = StagingTrace.process_primitive(
            trace, self, list(residuals) + unknown_args, self._params(params, unknown))
        ki, ui = iter(known_outs), iter(uouts)
        return [next(ui) if u else next(ki) for u in out_unknown]

    def batch(self, size, args, dims, jaxpr, **params):
        from jaxlite._src.interpreters.batching import batch_jaxpr_keep_dims
        closed, out_dims = batch_jaxpr_keep_dims(jaxpr, size, dims)
        outs = self.bind(*args, **self._params(dict(params, jaxpr=jaxpr), closed,
                                               params.get("donated_invars")))
        return outs, out_dims

    def transpose(self, cts, *args, jaxpr, **params):
        from jaxlite._src.interpreters import ad
        linear, refs, known = ad.transpose_args(args)
        closed = ad.transpose_jaxpr(jaxpr, linear, refs)
        cts = [ad.instantiate(c) for c in cts]
        outs = iter(self.bind(*known, *cts, **self._params(params, closed)))
        return [next(outs) if lin else None for lin in linear]

    def pp_suggest_names(self, eqn, ctx):
        inner = eqn.params["jaxpr"].jaxpr
        if inner in ctx.shared:
            return    # (printed once as ``let name = {...}``: its own fresh names, as JAX)
        ctx.suggest_same_names(inner.invars, eqn.invars)
        ctx.suggest_same_names(inner.outvars, eqn.outvars)


@cached_on_jaxpr
def _split_call(closed, unknowns):
    """partial_eval_jaxpr of a call's body, with residuals that are known inputs forwarded
    (as JAX forwards them): (known, unknown, out_unknown, forwarded input index or None per
    residual, number of known outputs). Cached per body, so a call differentiated again
    reuses its pieces (and their compiled code)."""
    from jaxlite._src.interpreters.partial_eval import partial_eval_jaxpr
    known, unknown, out_unknown, n_res = partial_eval_jaxpr(closed, list(unknowns))
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - n_res
    pos = {v: i for i, v in enumerate(kj.invars)}
    fwd = [pos.get(v) for v in kj.outvars[n_known_out:]]
    if any(f is not None for f in fwd):
        keep = kj.outvars[:n_known_out] + [v for v, f in zip(kj.outvars[n_known_out:], fwd)
                                            if f is None]
        known = type(known)(kj.replace(outvars=keep), known.consts)
    return known, unknown, out_unknown, fwd, n_known_out


jit_p = JitCall()
