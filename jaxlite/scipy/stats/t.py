"""jaxlite.scipy.stats.t (mirrors ``jax.scipy.stats.t``). Re-exports only."""
from jaxlite._src.scipy.stats import t_logpdf as logpdf, t_pdf as pdf  # noqa: F401
