"""jaxlite.ref (mirrors ``jax.ref``): mutable array references, outside transformations
(see jaxlite._src.api.refs). Re-exports only."""
from jaxlite._src.api.refs import (Ref, new_ref, empty_ref, free_ref, freeze,  # noqa: F401
                                  get, set, swap, addupdate)
from jaxlite._src.prims.state import AbstractRef  # noqa: F401
