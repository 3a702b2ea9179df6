"""``jax._src.state.types``: the abstract value of a mutable array reference."""
from jaxlite._src.prims.state import AbstractRef, TransformedRef  # noqa: F401
