"""jaxlite.extend.ifrt_programs (mirrors ``jax.extend.ifrt_programs``): its one name,
``ifrt_programs``, the namespace of IFRT program constructors, none of which exists in
jaxlite (no IFRT runtime; see that module). Re-exports only."""
from jaxlite._src.extend import ifrt_programs  # noqa: F401
