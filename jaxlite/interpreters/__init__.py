"""jaxlite.interpreters (mirrors ``jax.interpreters``): the rule tables of the extension
API. Re-exports only."""
from jaxlite.interpreters import ad, batching, mlir, partial_eval, pxla, xla  # noqa: F401
