"""jaxlite.scipy.stats.gennorm (mirrors ``jax.scipy.stats.gennorm``). Re-exports only."""
from jaxlite._src.scipy.stats_families import (  # noqa: F401
    gennorm_cdf as cdf, gennorm_logpdf as logpdf, gennorm_pdf as pdf)
