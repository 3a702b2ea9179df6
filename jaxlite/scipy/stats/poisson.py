"""jaxlite.scipy.stats.poisson (mirrors ``jax.scipy.stats.poisson``). Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    poisson_cdf as cdf, poisson_logpmf as logpmf, poisson_pmf as pmf)
from jaxlite._src.scipy.stats_extra import poisson_entropy as entropy  # noqa: F401
