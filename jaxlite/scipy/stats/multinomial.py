"""jaxlite.scipy.stats.multinomial (mirrors ``jax.scipy.stats.multinomial``). Re-exports only."""
from jaxlite._src.scipy.stats_families import (  # noqa: F401
    multinomial_logpmf as logpmf, multinomial_pmf as pmf)
