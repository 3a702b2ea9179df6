"""jaxlite.core (mirrors the public parts of ``jax.core``). Re-exports only."""
from jaxlite._src.core.trace import Trace, Tracer  # noqa: F401
from jaxlite._src.core.avals import ShapedArray, get_aval, pytype_aval_mappings  # noqa: F401
from jaxlite._src.core.avals import AbstractValue  # noqa: F401
from jaxlite._src.core.ir import (ClosedJaxpr, Jaxpr, Literal, Var, DropVar,  # noqa: F401
                                  typecheck as check_jaxpr, jaxprs_in_params)
from jaxlite._src.core.ir import Eqn as JaxprEqn  # noqa: F401
from jaxlite._src.core.ir import Atom  # noqa: F401
from jaxlite._src.core.primitive import Primitive  # noqa: F401
from jaxlite._src.api.misc import ensure_compile_time_eval  # noqa: F401
from jaxlite._src.api.misc import ensure_compile_time_eval as eval_context  # noqa: F401
from jaxlite._src.extend.core import (  # noqa: F401
    eval_jaxpr, find_top_trace, mapped_aval, unmapped_aval, get_opaque_trace_state,
    jaxpr_as_fun, raise_to_shaped, subjaxprs, concrete_or_error, valid_jaxtype)
from jaxlite._src.extend.core import jaxpr_as_fun as jaxpr_as_fn  # noqa: F401
