"""jaxlite.scipy.stats.binom (mirrors ``jax.scipy.stats.binom``). Re-exports only."""
from jaxlite._src.scipy.stats import binom_logpmf as logpmf, binom_pmf as pmf  # noqa: F401
