"""jaxlite.scipy.stats.chi2 (mirrors ``jax.scipy.stats.chi2``). Re-exports only."""
from jaxlite._src.scipy.stats_extra import (  # noqa: F401
    chi2_cdf as cdf, chi2_logcdf as logcdf, chi2_logsf as logsf, chi2_sf as sf)
from jaxlite._src.scipy.stats import chi2_logpdf as logpdf, chi2_pdf as pdf  # noqa: F401
