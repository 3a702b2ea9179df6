"""jaxlite.scipy.stats (mirrors ``jax.scipy.stats``). Re-exports only: one submodule per
distribution family, the summary statistics and the kernel density estimator."""
from jaxlite.scipy.stats import bernoulli as bernoulli  # noqa: F401
from jaxlite.scipy.stats import beta as beta  # noqa: F401
from jaxlite.scipy.stats import betabinom as betabinom  # noqa: F401
from jaxlite.scipy.stats import binom as binom  # noqa: F401
from jaxlite.scipy.stats import cauchy as cauchy  # noqa: F401
from jaxlite.scipy.stats import chi2 as chi2  # noqa: F401
from jaxlite.scipy.stats import dirichlet as dirichlet  # noqa: F401
from jaxlite.scipy.stats import expon as expon  # noqa: F401
from jaxlite.scipy.stats import gamma as gamma  # noqa: F401
from jaxlite.scipy.stats import gennorm as gennorm  # noqa: F401
from jaxlite.scipy.stats import geom as geom  # noqa: F401
from jaxlite.scipy.stats import gumbel_l as gumbel_l  # noqa: F401
from jaxlite.scipy.stats import gumbel_r as gumbel_r  # noqa: F401
from jaxlite.scipy.stats import laplace as laplace  # noqa: F401
from jaxlite.scipy.stats import logistic as logistic  # noqa: F401
from jaxlite.scipy.stats import multinomial as multinomial  # noqa: F401
from jaxlite.scipy.stats import multivariate_normal as multivariate_normal  # noqa: F401
from jaxlite.scipy.stats import nbinom as nbinom  # noqa: F401
from jaxlite.scipy.stats import norm as norm  # noqa: F401
from jaxlite.scipy.stats import pareto as pareto  # noqa: F401
from jaxlite.scipy.stats import poisson as poisson  # noqa: F401
from jaxlite.scipy.stats import t as t  # noqa: F401
from jaxlite.scipy.stats import truncnorm as truncnorm  # noqa: F401
from jaxlite.scipy.stats import uniform as uniform  # noqa: F401
from jaxlite.scipy.stats import vonmises as vonmises  # noqa: F401
from jaxlite.scipy.stats import wrapcauchy as wrapcauchy  # noqa: F401
from jaxlite._src.scipy.stats_summary import (  # noqa: F401
    mode as mode, rankdata as rankdata, sem as sem)
from jaxlite._src.scipy.stats_kde import gaussian_kde as gaussian_kde  # noqa: F401
