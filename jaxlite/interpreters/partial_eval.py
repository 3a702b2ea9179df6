"""jaxlite.interpreters.partial_eval (mirrors ``jax.interpreters.partial_eval``).
Re-exports only."""
from jaxlite._src.extend.partial_eval import *  # noqa: F401,F403
