"""jaxlite.custom_derivatives (mirrors ``jax.custom_derivatives``). Re-exports only."""
from jaxlite._src.api.custom_derivatives import (  # noqa: F401
    custom_jvp, custom_vjp, custom_gradient, linear_call, SymbolicZero, zero_from_primal,
    CustomVJPPrimal, custom_vjp_primal_tree_values)
from jaxlite._src.api.ad import closure_convert  # noqa: F401
from jaxlite._src.prims.custom import custom_jvp_call_p, custom_vjp_call_p  # noqa: F401
from jaxlite._src.prims.linear_call import linear_call_p  # noqa: F401
