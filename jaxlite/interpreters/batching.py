"""jaxlite.interpreters.batching (mirrors ``jax.interpreters.batching``). Re-exports only."""
from jaxlite._src.extend.batching import *  # noqa: F401,F403
