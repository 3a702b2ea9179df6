"""The ``composite`` primitive: a named call of a decomposition (``lax.composite``).

It runs (and compiles) like a ``jit`` call of its decomposition and carries a ``name``, a
``version`` and static ``attributes`` for backends that recognise the operation. As in JAX
it has no differentiation rule; unlike JAX it batches (by batching the decomposition).
"""
from __future__ import annotations

from jaxlite._src.prims.call import JitCall

__all__ = ["composite_p"]


class Composite(JitCall):
    """A call of the decomposition ``jaxpr`` labelled ``name`` / ``version`` /
    ``attributes`` (a tuple of (key, leaves, treedef) of the static keyword arguments)."""
    name = "composite"
    inlinable = False
    pp_suggest_names = None   # its body's variables are named afresh, as JAX prints them

    def impl(self, *args, jaxpr, name, **_):
        return self.compiled(jaxpr, "composite")(*args)

    def lower_py(self, ctx, ins, jaxpr, name, **_):
        fn = ctx.compile_sub(jaxpr, "composite")
        return f"{fn}({', '.join(ins)})"

    def pp_params(self, params):
        return [("attributes", params["attributes"]), ("jaxpr", params["jaxpr"]),
                ("name", params["name"]), ("version", params["version"])]

    def _params(self, params, closed, donated=None):
        return dict(params, jaxpr=closed)

    def jvp(self, primals, tangents, **params):
        raise ValueError("JVP rule for composite not implemented. You can use "
                         "`jax.custom_jvp` to add support. See "
                         "https://docs.jax.dev/en/latest/_autosummary/jax.custom_jvp.html")

    def transpose(self, cts, *args, **params):
        raise ValueError("composite is not linear: it has no transpose rule.")


composite_p = Composite()
