"""jaxlite.scipy.stats.gamma (mirrors ``jax.scipy.stats.gamma``). Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    gamma_cdf as cdf, gamma_logpdf as logpdf, gamma_pdf as pdf)
from jaxlite._src.scipy.stats_extra import (  # noqa: F401
    gamma_logcdf as logcdf, gamma_logsf as logsf, gamma_sf as sf)
