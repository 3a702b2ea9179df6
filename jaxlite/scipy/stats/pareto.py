"""jaxlite.scipy.stats.pareto (mirrors ``jax.scipy.stats.pareto``). Re-exports only."""
from jaxlite._src.scipy.stats_extra import (  # noqa: F401
    pareto_cdf as cdf, pareto_logcdf as logcdf, pareto_logsf as logsf, pareto_ppf as ppf,
    pareto_sf as sf)
from jaxlite._src.scipy.stats import pareto_logpdf as logpdf, pareto_pdf as pdf  # noqa: F401
