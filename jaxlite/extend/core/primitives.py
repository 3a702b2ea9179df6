"""jaxlite.extend.core.primitives (mirrors ``jax.extend.core.primitives``): the built-in
primitives under their ``<name>_p`` names. Re-exports only."""
from jaxlite._src.extend.primitives import *  # noqa: F401,F403
