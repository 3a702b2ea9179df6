"""jaxlite.scipy.stats.vonmises (mirrors ``jax.scipy.stats.vonmises``). Re-exports only."""
from jaxlite._src.scipy.stats_families import (  # noqa: F401
    vonmises_logpdf as logpdf, vonmises_pdf as pdf)
