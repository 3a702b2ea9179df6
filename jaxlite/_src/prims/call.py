"""The ``jit`` call primitive: a nested jitted function inside a traced program.

It carries the callee's ClosedJaxpr as its ``jaxpr`` parameter and prints as JAX does:
``jit[name=f jaxpr={ lambda ; ... }]``. The compiler inlines it; eagerly it runs the
callee's compiled code.
"""
from __future__ import annotations

import weakref

from jaxlite._src.core.primitive import Primitive

__all__ = ["jit_p", "JitCall"]


class JitCall(Primitive):
    """Call of a jitted function (JAX's ``jit``/``pjit`` primitive)."""
    name = "jit"
    multiple_results = True
    inlinable = True

    def __init__(self):
        super().__init__()
        self._compiled = weakref.WeakKeyDictionary()

    def compiled(self, closed, name):
        fn = self._compiled.get(closed)
        if fn is None:
            from jaxlite._src.compiler.codegen import lower_jaxpr
            from jaxlite._src.compiler.passes import optimize
            fn = self._compiled[closed] = lower_jaxpr(optimize(closed), name)
        return fn

    def impl(self, *args, jaxpr, name, **_):
        return self.compiled(jaxpr, name)(*args)

    def abstract_eval(self, *avals, jaxpr, **_):
        return jaxpr.out_avals

    def out_weak(self, avals, params):
        return False

    def eager(self, args, params):
        from jaxlite._src.runtime.array import ArrayImpl
        from jaxlite._src.core.primitive import eager_operand
        vals = [a._value if type(a) is ArrayImpl else eager_operand(a)[0] for a in args]
        outs = self.impl(*vals, **params)
        return [ArrayImpl(o, a.weak_type) for o, a in zip(outs, params["jaxpr"].out_avals)]

    def lower_py(self, ctx, ins, jaxpr, name, **_):
        fn = ctx.compile_sub(jaxpr, name)
        return f"{fn}({', '.join(ins)})"

    def pp_params(self, params):
        out = [("name", params["name"]), ("jaxpr", params["jaxpr"])]
        if any(params.get("donated_invars", ())):
            out.append(("donated_invars", params["donated_invars"]))
        return out

    def pp_suggest_names(self, eqn, ctx):
        inner = eqn.params["jaxpr"].jaxpr
        ctx.suggest_same_names(inner.invars, eqn.invars)
        ctx.suggest_same_names(inner.outvars, eqn.outvars)


jit_p = JitCall()
