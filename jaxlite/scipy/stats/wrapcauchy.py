"""jaxlite.scipy.stats.wrapcauchy (mirrors ``jax.scipy.stats.wrapcauchy``). Re-exports only."""
from jaxlite._src.scipy.stats_families import (  # noqa: F401
    wrapcauchy_logpdf as logpdf, wrapcauchy_pdf as pdf)
