"""``jax._src.interpreters.ad``: the names libraries import from JAX's private AD module."""
from jaxlite._src.core.errors import CustomVJPException  # noqa: F401
