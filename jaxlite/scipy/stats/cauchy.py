"""jaxlite.scipy.stats.cauchy (mirrors ``jax.scipy.stats.cauchy``). Re-exports only."""
from jaxlite._src.scipy.stats_extra import (  # noqa: F401
    cauchy_cdf as cdf, cauchy_isf as isf, cauchy_logcdf as logcdf, cauchy_logsf as logsf,
    cauchy_ppf as ppf, cauchy_sf as sf)
from jaxlite._src.scipy.stats import cauchy_logpdf as logpdf, cauchy_pdf as pdf  # noqa: F401
