"""jaxlite.debug (mirrors ``jax.debug``): printing, callbacks and breakpoints that work inside
transformed code, and sharding visualisation. Re-exports only."""
from jaxlite._src.debugging.callbacks import (  # noqa: F401
    debug_callback as callback, debug_print as print, debug_log as log)
from jaxlite._src.prims.callback import DebugEffect, OrderedDebugEffect  # noqa: F401
from jaxlite._src.debugging.breakpoint import breakpoint  # noqa: F401,A004
from jaxlite._src.debugging.visualize import (  # noqa: F401
    visualize_array_sharding, visualize_sharding, inspect_array_sharding)
