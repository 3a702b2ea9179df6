"""jaxlite.extend.core (mirrors ``jax.extend.core``): ``Primitive`` of the extension API and
jaxlite's IR. Re-exports only."""
from jaxlite._src.extend.primitive import Primitive  # noqa: F401
from jaxlite._src.core.ir import (ClosedJaxpr, Jaxpr, Literal, Var, DropVar,  # noqa: F401
                                  JaxprTypeError, jaxprs_in_params)
from jaxlite._src.core.ir import Eqn as JaxprEqn, typecheck as check_jaxpr  # noqa: F401
from jaxlite._src.core.trace import set_current_trace  # noqa: F401
from jaxlite._src.core.avals import ShapedArray  # noqa: F401
from jaxlite._src.interpreters.staging import DebugInfo  # noqa: F401
from jaxlite._src.extend.core import (  # noqa: F401
    mapped_aval, unmapped_aval, find_top_trace, get_opaque_trace_state, jaxpr_as_fun,
    new_jaxpr_eqn, gensym, subjaxprs, primal_dtype_to_tangent_dtype, valid_jaxtype,
    concrete_or_error)
from jaxlite._src.prims.callback import Effect  # noqa: F401
from jaxlite.extend.core import primitives  # noqa: F401
