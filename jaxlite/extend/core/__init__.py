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
    concrete_or_error, unsafe_get_axis_names as unsafe_get_axis_names_DO_NOT_USE,
    nonempty_axis_env as nonempty_axis_env_DO_NOT_USE, take_current_trace, TraceTag,
    call_impl, array_types, no_effects, Effects, unsafe_am_i_under_a_jit as
    unsafe_am_i_under_a_jit_DO_NOT_USE, unsafe_am_i_under_a_vmap as
    unsafe_am_i_under_a_vmap_DO_NOT_USE)
from jaxlite._src.prims.tokens import Token  # noqa: F401
from jaxlite._src.export.shape_poly import InconclusiveDimensionOperation  # noqa: F401

from jaxlite._src.prims.callback import Effect  # noqa: F401
from jaxlite.extend.core import primitives  # noqa: F401
