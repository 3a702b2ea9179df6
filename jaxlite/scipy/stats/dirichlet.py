"""jaxlite.scipy.stats.dirichlet (mirrors ``jax.scipy.stats.dirichlet``). Re-exports only."""
from jaxlite._src.scipy.stats import dirichlet_logpdf as logpdf, dirichlet_pdf as pdf  # noqa: F401
