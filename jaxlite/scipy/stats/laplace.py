"""jaxlite.scipy.stats.laplace (mirrors ``jax.scipy.stats.laplace``). Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    laplace_cdf as cdf, laplace_logpdf as logpdf, laplace_pdf as pdf)
