"""jaxlite.scipy.stats.bernoulli (mirrors ``jax.scipy.stats.bernoulli``). Re-exports only."""
from jaxlite._src.scipy.stats import (  # noqa: F401
    bernoulli_cdf as cdf, bernoulli_logpmf as logpmf, bernoulli_pmf as pmf)
from jaxlite._src.scipy.stats_extra import bernoulli_ppf as ppf  # noqa: F401
