"""jaxlite.stages (mirrors ``jax.stages``): the AOT stages. Re-exports only."""
from jaxlite._src.api.stages import Compiled, Lowered, Traced  # noqa: F401
from jaxlite._src.api.jit import JitWrapped as Wrapped  # noqa: F401
