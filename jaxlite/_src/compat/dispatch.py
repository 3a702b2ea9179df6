"""``jax._src.dispatch``: ``wait_for_tokens`` waits for ordered side effects (callbacks)
issued so far, as ``jax.effects_barrier`` does."""
from jaxlite._src.debugging.callbacks import effects_barrier as wait_for_tokens  # noqa: F401
