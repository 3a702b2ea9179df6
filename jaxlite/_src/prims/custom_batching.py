"""``custom_vmap_call``: a function with a user batching rule (``jax.custom_batching``).

The primitive carries the function's ClosedJaxpr (``call_jaxpr``, which eager evaluation and
the compiler run, inlined) and the rule as a Python callable on flat lists:
``rule(axis_size, in_batched, *args) -> (outs, out_batched)`` with batched operands' batch
dimension first. Under ``vmap`` the rule replaces batching the body; differentiation
differentiates the body (the tangent of a custom-batched function is that of the function).
"""
from __future__ import annotations

from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import moveaxis
from jaxlite._src.prims.custom import _CallBase

__all__ = ["custom_vmap_call_p"]


class CustomVmapCall(_CallBase):
    """A call whose batching rule is the user's ``rule`` (see the module docstring)."""
    name = "custom_vmap_call"

    def jvp(self, primals, tangents, call_jaxpr, rule, name):
        from jaxlite._src.interpreters.ad import jvp_jaxpr
        from jaxlite._src.interpreters.eval import eval_jaxpr
        outs = self.bind(*primals, call_jaxpr=call_jaxpr, rule=rule, name=name)
        nonzeros = [not u.is_zero(t) for t in tangents]
        closed = jvp_jaxpr(call_jaxpr, nonzeros)
        ts = [t for t in tangents if not u.is_zero(t)]
        both = eval_jaxpr(closed.jaxpr, closed.consts, *primals, *ts)
        return list(outs), list(both[len(outs):])

    def batch(self, size, args, dims, call_jaxpr, rule, name):
        args = [a if d is None else moveaxis(a, d, 0) for a, d in zip(args, dims)]
        outs, out_batched = rule(size, [d is not None for d in dims], *args)
        if len(outs) != len(call_jaxpr.out_avals):
            raise TypeError(f"custom_vmap rule of {name} returned {len(outs)} outputs, the "
                            f"function returns {len(call_jaxpr.out_avals)}.")
        out_dims = []
        for i, (o, b, a) in enumerate(zip(outs, out_batched, call_jaxpr.out_avals)):
            want = ((size,) if b else ()) + tuple(a.shape)
            got = tuple(u.aval(o).shape)
            if got != want or u.aval(o).dtype != a.dtype:
                raise ValueError(
                    f"custom_vmap rule of {name} returned output {i} of shape {got} and "
                    f"dtype {u.aval(o).dtype} with out_batched={b}; expected shape {want} and "
                    f"dtype {a.dtype} (batched outputs carry the batch dimension first).")
            out_dims.append(0 if b else None)
        return list(outs), out_dims

    def pp_params(self, params):
        return [("name", params["name"]), ("call_jaxpr", params["call_jaxpr"])]


custom_vmap_call_p = CustomVmapCall()
