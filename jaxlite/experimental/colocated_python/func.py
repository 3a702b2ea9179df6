"""jax.experimental.colocated_python.func (what libraries reach for, private names
included). Re-exports only."""
import sys as _sys

from jaxlite._src.colocated_python import func as _impl

# (the implementation module itself: a library assigning one of its functions, as orbax
# does with ``_make_prng_wrapped_fun``, changes what colocated Python calls)
_sys.modules[__name__] = _impl
