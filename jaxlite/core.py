"""jaxlite.core (mirrors the public parts of ``jax.core``). Re-exports only."""
from jaxlite._src.core.trace import Trace, Tracer  # noqa: F401
from jaxlite._src.core.avals import ShapedArray, get_aval  # noqa: F401
from jaxlite._src.core.ir import (ClosedJaxpr, Jaxpr, Literal, Var, DropVar,  # noqa: F401
                                  typecheck as check_jaxpr)
from jaxlite._src.core.ir import Eqn as JaxprEqn  # noqa: F401
from jaxlite._src.core.primitive import Primitive  # noqa: F401
