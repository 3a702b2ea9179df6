"""jaxlite.typing (mirrors ``jax.typing``): ``ArrayLike``, ``DTypeLike``. Re-exports only."""
from jaxlite._src.typing import ArrayLike, DTypeLike  # noqa: F401
