"""jaxlite.scipy.interpolate (mirrors ``jax.scipy.interpolate``). Re-exports only."""
from jaxlite._src.scipy.interpolate import RegularGridInterpolator as RegularGridInterpolator  # noqa: F401,E501
