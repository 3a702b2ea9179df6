"""jaxlite.scipy.stats.geom (mirrors ``jax.scipy.stats.geom``). Re-exports only."""
from jaxlite._src.scipy.stats import geom_logpmf as logpmf, geom_pmf as pmf  # noqa: F401
