"""jaxlite.image (mirrors ``jax.image``): image resampling. Re-exports only."""
from jaxlite._src.image.scale import ResizeMethod as ResizeMethod  # noqa: F401
from jaxlite._src.image.scale import resize as resize  # noqa: F401
from jaxlite._src.image.scale import scale_and_translate as scale_and_translate  # noqa: F401
