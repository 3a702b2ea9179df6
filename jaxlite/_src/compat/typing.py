"""``jax._src.typing`` (the full set of annotation names some libraries import)."""
from jaxlite._src.typing import *  # noqa: F401,F403
from jaxlite._src.typing import AnyInt, StaticIndex  # noqa: F401
