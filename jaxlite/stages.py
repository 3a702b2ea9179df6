"""jaxlite.stages (mirrors ``jax.stages``): the AOT stages. Re-exports only."""
from jaxlite._src.api.stages import (  # noqa: F401
    ArgInfo, Compiled, CompilerOptions, Lowered, Traced)
from jaxlite._src.api.jit import JitWrapped as Wrapped  # noqa: F401
