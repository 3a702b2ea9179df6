"""jaxlite.scipy.stats.beta (mirrors ``jax.scipy.stats.beta``). Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    beta_cdf as cdf, beta_logpdf as logpdf, beta_pdf as pdf)
from jaxlite._src.scipy.stats_extra import (  # noqa: F401
    beta_logcdf as logcdf, beta_logsf as logsf, beta_sf as sf)
