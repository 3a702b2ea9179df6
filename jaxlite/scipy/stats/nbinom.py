"""jaxlite.scipy.stats.nbinom (mirrors ``jax.scipy.stats.nbinom``). Re-exports only."""
from jaxlite._src.scipy.stats_families import (  # noqa: F401
    nbinom_logpmf as logpmf, nbinom_pmf as pmf)
