"""jaxlite.interpreters.pxla (mirrors ``jax.interpreters.pxla``, whose names JAX 0.10 keeps
only as deprecated aliases of its XLA executables' internals). Libraries import the module
(orbax-checkpoint does, for its Pathways-only code); jaxlite compiles no XLA executables, so
it has no result handlers, compile options or mesh executables to offer, and asking for one
raises AttributeError saying so. Re-exports only."""
from jaxlite._src.compat.interpreters.pxla import Index, __getattr__  # noqa: F401
