"""jaxlite.scipy.spatial.transform (mirrors ``jax.scipy.spatial.transform``): rotations and
their interpolation. Re-exports only."""
from jaxlite._src.scipy.spatial_transform import Rotation as Rotation  # noqa: F401
from jaxlite._src.scipy.spatial_transform import Slerp as Slerp  # noqa: F401
