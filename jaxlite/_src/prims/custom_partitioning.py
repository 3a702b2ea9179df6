"""The ``custom_partitioning`` call primitive: a function with user partitioning rules.

Its ``call`` parameter is the function's ClosedJaxpr; the rules (``partition``,
``infer_sharding_from_operands``, ``propagate_user_sharding``, ``sharding_rule``) are kept as
parameters, printed as JAX prints them. jaxlite runs the function itself: eagerly, or
inlined by the compiler, and under a sharded jit on whole operands (the partitioner treats it
as an operation without a sharding rule), so its results are the function's. As in JAX it
has no differentiation or batching rule (wrap it in ``custom_vjp`` / ``custom_vmap``).
"""
from __future__ import annotations

from jaxlite._src.prims.call import BodyCall

__all__ = ["custom_partitioning_p"]


class CustomPartitioning(BodyCall):
    """See the module docstring."""
    name = "custom_partitioning"
    inline_param = "call"
    body_label = "custom_partitioning"

    def jvp(self, primals, tangents, **params):
        raise NotImplementedError("Differentiation rule for 'custom_partitioning' not "
                                  "implemented: define the derivative with jax.custom_vjp "
                                  "or jax.custom_jvp around the custom_partitioning function.")

    def batch(self, size, args, dims, **params):
        raise NotImplementedError("Batching rule for 'custom_partitioning' not implemented: "
                                  "wrap the function in jax.custom_batching.custom_vmap.")


custom_partitioning_p = CustomPartitioning()
