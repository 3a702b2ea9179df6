"""jaxlite.scipy.stats.norm (mirrors ``jax.scipy.stats.norm``). Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    norm_cdf as cdf, norm_isf as isf, norm_logcdf as logcdf, norm_logpdf as logpdf,
    norm_logsf as logsf, norm_pdf as pdf, norm_ppf as ppf, norm_sf as sf)
