"""``jax._src.core``: the core names libraries import from JAX's private module."""
from jaxlite._src.core.avals import ShapedArray, get_aval  # noqa: F401
from jaxlite._src.core.ir import ClosedJaxpr, Jaxpr, Literal, Var, DropVar  # noqa: F401
from jaxlite._src.core.ir import Eqn as JaxprEqn  # noqa: F401
from jaxlite._src.core.ir import Atom  # noqa: F401
from jaxlite._src.core.trace import Trace, Tracer, ctx as _ctx  # noqa: F401
from jaxlite._src.extend.primitive import Primitive  # noqa: F401
from jaxlite._src.extend.core import (  # noqa: F401
    mapped_aval, unmapped_aval, find_top_trace, get_opaque_trace_state, jaxpr_as_fun,
    eval_jaxpr, raise_to_shaped, concrete_or_error, valid_jaxtype)
from jaxlite._src.core.avals import AbstractValue  # noqa: F401
from jaxlite._src.core.errors import ShardingTypeError  # noqa: F401


def trace_state_clean():
    """Whether no transformation is active (eager evaluation)."""
    return _ctx.trace is None
