"""jaxlite.api_util (mirrors ``jax.api_util``). Re-exports only."""
from jaxlite._src.extend.linear_util import (  # noqa: F401
    debug_info, flatten_fun, flatten_fun_nokwargs, fun_signature)
from jaxlite._src.extend.core import typeof_aval as shaped_abstractify  # noqa: F401
from jaxlite._src.extend.api_util import (  # noqa: F401
    argnums_partial, donation_vector, flatten_axes, rebase_donate_argnums, safe_map)
