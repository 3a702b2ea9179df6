"""jaxlite.interpreters.mlir (mirrors the parts of ``jax.interpreters.mlir`` used to
register primitives' lowerings). Re-exports only."""
from jaxlite._src.extend.primitive import (  # noqa: F401
    lower_fun, register_lowering, LoweringFun)
from jaxlite._src.extend.lowering import emit_python_callback  # noqa: F401
