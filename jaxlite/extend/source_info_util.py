"""jaxlite.extend.source_info_util (mirrors ``jax.extend.source_info_util``). Re-exports
only."""
from jaxlite._src.extend.source_info_util import *  # noqa: F401,F403
