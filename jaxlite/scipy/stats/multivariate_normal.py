"""jaxlite.scipy.stats.multivariate_normal (mirrors ``jax.scipy.stats.multivariate_normal``).
Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    multivariate_normal_logpdf as logpdf, multivariate_normal_pdf as pdf)
