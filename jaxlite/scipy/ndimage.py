"""jaxlite.scipy.ndimage (mirrors ``jax.scipy.ndimage``): map_coordinates. Re-exports only."""
from jaxlite._src.scipy.ndimage import *  # noqa: F401,F403
