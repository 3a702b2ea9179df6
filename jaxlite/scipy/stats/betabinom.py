"""jaxlite.scipy.stats.betabinom (mirrors ``jax.scipy.stats.betabinom``). Re-exports only."""
from jaxlite._src.scipy.stats_families import (  # noqa: F401
    betabinom_logpmf as logpmf, betabinom_pmf as pmf)
