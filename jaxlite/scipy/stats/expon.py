"""jaxlite.scipy.stats.expon (mirrors ``jax.scipy.stats.expon``). Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    expon_cdf as cdf, expon_logpdf as logpdf, expon_pdf as pdf)
from jaxlite._src.scipy.stats_extra import (  # noqa: F401
    expon_logcdf as logcdf, expon_logsf as logsf, expon_ppf as ppf, expon_sf as sf)
