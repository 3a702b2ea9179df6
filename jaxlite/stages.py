"""jaxlite.stages (mirrors ``jax.stages``): the AOT stages. Re-exports only."""
from jaxlite._src.api.jit import (Compiled, Lowered, Traced,  # noqa: F401
                                  JitWrapped as Wrapped)
