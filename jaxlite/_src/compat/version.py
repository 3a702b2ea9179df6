"""``jax.version`` under ``install_as_jax()``: the JAX release jaxlite follows."""
from jaxlite._src.import_hook import JAX_API_VERSION

__version__ = JAX_API_VERSION
__version_info__ = tuple(int(p) for p in JAX_API_VERSION.split("."))
_version = __version__
