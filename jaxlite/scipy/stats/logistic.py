"""jaxlite.scipy.stats.logistic (mirrors ``jax.scipy.stats.logistic``). Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    logistic_cdf as cdf, logistic_logpdf as logpdf, logistic_pdf as pdf)
from jaxlite._src.scipy.stats_extra import (  # noqa: F401
    logistic_isf as isf, logistic_ppf as ppf, logistic_sf as sf)
