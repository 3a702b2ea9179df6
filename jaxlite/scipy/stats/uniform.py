"""jaxlite.scipy.stats.uniform (mirrors ``jax.scipy.stats.uniform``). Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    uniform_cdf as cdf, uniform_logpdf as logpdf, uniform_pdf as pdf)
from jaxlite._src.scipy.stats_extra import uniform_ppf as ppf  # noqa: F401
