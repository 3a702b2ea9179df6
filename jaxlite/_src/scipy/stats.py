"""jax.scipy.stats: log-densities, densities and distribution functions of the common
distributions, written with jnp/lax (differentiable, batchable, jittable).

Each function is named ``<family>_<function>`` here (more live in ``stats_extra`` and
``stats_families``); the public modules ``jaxlite/scipy/stats/<family>.py`` re-export them
under their short names, and ``FAMILIES`` below lists every family's functions (JAX's
``jax.scipy.stats.<family>`` modules hold the same names)."""
from __future__ import annotations

import inspect

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact
from jaxlite._src.scipy import special as sp


def _U():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _R():
    from jaxlite._src.numpy import reductions
    return reductions


def _from_logpdf(logpdf):
    mass = logpdf.__name__.endswith("logpmf")

    def pdf(*args, **kw):
        return _U().exp(logpdf(*args, **kw))
    pdf.__doc__ = ("The probability mass function: ``exp(logpmf(...))``." if mass else
                   "The density: ``exp(logpdf(...))``.")
    pdf.__signature__ = inspect.signature(logpdf)
    return pdf


# ----------------------------------------------------------------------------- norm

def norm_logpdf(x, loc=0, scale=1):
    """Log-density of the normal distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    z = U.divide(U.subtract(x, loc), scale)
    return U.subtract(U.multiply(-0.5, U.square(z)),
                      U.add(U.log(scale), np.asarray(0.5 * np.log(2 * np.pi), z.dtype)))


def norm_cdf(x, loc=0, scale=1):
    """CDF of the normal distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return sp.ndtr(U.divide(U.subtract(x, loc), scale))


def norm_logcdf(x, loc=0, scale=1):
    """Log-CDF of the normal distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return sp.log_ndtr(U.divide(U.subtract(x, loc), scale))


def norm_ppf(q, loc=0, scale=1):
    """Quantile function of the normal distribution."""
    U = _U()
    q, loc, scale = promote_args_inexact("norm.ppf", q, loc, scale)
    return U.add(U.multiply(sp.ndtri(q), scale), loc)


def norm_sf(x, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return sp.ndtr(U.negative(U.divide(U.subtract(x, loc), scale)))


def norm_isf(q, loc=0, scale=1):
    """Inverse survival function."""
    return norm_ppf(_U().subtract(1, q), loc, scale)


def norm_logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return sp.log_ndtr(U.negative(U.divide(U.subtract(x, loc), scale)))


norm_pdf = _from_logpdf(norm_logpdf)


# ----------------------------------------------------------------------------- others

def multivariate_normal_logpdf(x, mean, cov, allow_singular=None):
    """Log-density of the multivariate normal (Cholesky-based)."""
    from jaxlite._src.numpy import namespace as jnp
    x, mean, cov = promote_args_inexact("multivariate_normal.logpdf", x, mean, cov)
    n = mean.shape[-1]
    if cov.ndim < 2:
        cov = cov * jnp.eye(n, dtype=cov.dtype) if cov.ndim == 0 else jnp.diag(cov)
    L = jnp.linalg.cholesky(cov)
    d = x - mean
    y = jnp.linalg.solve(L, d[..., None])[..., 0] if d.ndim == 1 else \
        jnp.swapaxes(jnp.linalg.solve(L, jnp.swapaxes(d, -1, -2) if d.ndim > 1 else d), -1,
                     -2)
    maha = jnp.sum(jnp.square(y), axis=-1)
    logdet = 2 * jnp.sum(jnp.log(jnp.diagonal(L, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * (n * np.log(2 * np.pi) + logdet + maha)


def multivariate_normal_pdf(x, mean, cov):
    """Density of the multivariate normal distribution."""
    return _U().exp(multivariate_normal_logpdf(x, mean, cov))




def bernoulli_logpmf(k, p, loc=0):
    """Log-pmf of the Bernoulli distribution."""
    U = _U()
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = U.subtract(k, loc)
    val = U.add(sp.xlogy(x, p), sp.xlog1py(U.subtract(1, x), U.negative(p)))
    return U.where(U.logical_or(U.less(x, 0), U.greater(x, 1)), -np.inf, val)


def bernoulli_cdf(k, p):
    """CDF of the Bernoulli distribution."""
    U = _U()
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    return U.where(U.less(k, 0), 0.0, U.where(U.less(k, 1), U.subtract(1, p), 1.0))


bernoulli_pmf = _from_logpdf(bernoulli_logpmf)


def beta_logpdf(x, a, b, loc=0, scale=1):
    """Log-density of the beta distribution."""
    U = _U()
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    lp = U.subtract(U.add(sp.xlogy(U.subtract(a, 1), y), sp.xlog1py(U.subtract(b, 1),
                                                                   U.negative(y))),
                    U.add(sp.betaln(a, b), U.log(scale)))
    return U.where(U.logical_or(U.less(y, 0), U.greater(y, 1)), -np.inf, lp)


def beta_cdf(x, a, b, loc=0, scale=1):
    """CDF of the beta distribution."""
    U = _U()
    x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    y = U.clip(U.divide(U.subtract(x, loc), scale), 0, 1)
    return sp.betainc(a, b, y)


beta_pdf = _from_logpdf(beta_logpdf)


def gamma_logpdf(x, a, loc=0, scale=1):
    """Log-density of the gamma distribution."""
    U = _U()
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    lp = U.subtract(U.subtract(sp.xlogy(U.subtract(a, 1), y), y),
                    U.add(sp.gammaln(a), U.log(scale)))
    return U.where(U.less(y, 0), -np.inf, lp)


def gamma_cdf(x, a, loc=0, scale=1):
    """CDF of the gamma distribution."""
    U = _U()
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return sp.gammainc(a, U.maximum(U.divide(U.subtract(x, loc), scale), 0))


gamma_pdf = _from_logpdf(gamma_logpdf)


def chi2_logpdf(x, df, loc=0, scale=1):
    """Log-density of the chi-squared distribution."""
    U = _U()
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    return gamma_logpdf(x, U.divide(df, 2), loc, U.multiply(scale, 2))


chi2_pdf = _from_logpdf(chi2_logpdf)


def uniform_logpdf(x, loc=0, scale=1):
    """Log-density of the uniform distribution on ``[loc, loc + scale]``."""
    U = _U()
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    inside = U.logical_and(U.greater_equal(x, loc), U.less_equal(x, U.add(loc, scale)))
    return U.where(inside, U.negative(U.log(scale)), -np.inf)


def uniform_cdf(x, loc=0, scale=1):
    """CDF of the uniform distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    return U.clip(U.divide(U.subtract(x, loc), scale), 0, 1)


uniform_pdf = _from_logpdf(uniform_logpdf)


def expon_logpdf(x, loc=0, scale=1):
    """Log-density of the exponential distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    return U.where(U.less(y, 0), -np.inf, U.subtract(U.negative(y), U.log(scale)))


def expon_cdf(x, loc=0, scale=1):
    """CDF of the exponential distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    return U.where(U.less(y, 0), 0.0, U.negative(U.expm1(U.negative(y))))


expon_pdf = _from_logpdf(expon_logpdf)


def laplace_logpdf(x, loc=0, scale=1):
    """Log-density of the Laplace distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    return U.subtract(U.negative(U.divide(U.abs(U.subtract(x, loc)), scale)),
                      U.log(U.multiply(2, scale)))


def laplace_cdf(x, loc=0, scale=1):
    """CDF of the Laplace distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    z = U.divide(U.subtract(x, loc), scale)
    return U.where(U.less(z, 0), U.multiply(0.5, U.exp(z)),
                   U.subtract(1, U.multiply(0.5, U.exp(U.negative(z)))))


laplace_pdf = _from_logpdf(laplace_logpdf)


def logistic_logpdf(x, loc=0, scale=1):
    """Log-density of the logistic distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    z = U.divide(U.subtract(x, loc), scale)
    return U.subtract(U.subtract(U.negative(z), U.multiply(2, U.log1p(U.exp(U.negative(z))))),
                      U.log(scale))


def logistic_cdf(x, loc=0, scale=1):
    """CDF of the logistic distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return sp.expit(U.divide(U.subtract(x, loc), scale))


logistic_pdf = _from_logpdf(logistic_logpdf)


def cauchy_logpdf(x, loc=0, scale=1):
    """Log-density of the Cauchy distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = U.divide(U.subtract(x, loc), scale)
    return U.negative(U.add(U.log(U.multiply(np.pi, scale)), U.log1p(U.square(z))))


cauchy_pdf = _from_logpdf(cauchy_logpdf)


def t_logpdf(x, df, loc=0, scale=1):
    """Log-density of Student's t distribution."""
    U = _U()
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    z = U.divide(U.subtract(x, loc), scale)
    half = U.multiply(0.5, U.add(df, 1))
    norm_c = U.subtract(U.subtract(sp.gammaln(half), sp.gammaln(U.multiply(0.5, df))),
                        U.multiply(0.5, U.log(U.multiply(df, np.pi))))
    return U.subtract(U.subtract(norm_c, U.multiply(half, U.log1p(U.divide(U.square(z),
                                                                          df)))),
                      U.log(scale))


t_pdf = _from_logpdf(t_logpdf)


def poisson_logpmf(k, mu, loc=0):
    """Log-pmf of the Poisson distribution."""
    U = _U()
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = U.subtract(k, loc)
    lp = U.subtract(U.subtract(sp.xlogy(x, mu), mu), sp.gammaln(U.add(x, 1)))
    return U.where(U.logical_or(U.less(x, 0), U.not_equal(U.round(x), x)), -np.inf, lp)


def poisson_cdf(k, mu, loc=0):
    """CDF of the Poisson distribution."""
    U = _U()
    k, mu, loc = promote_args_inexact("poisson.cdf", k, mu, loc)
    x = U.floor(U.subtract(k, loc))
    return U.where(U.less(x, 0), 0.0, sp.gammaincc(U.add(x, 1), mu))


poisson_pmf = _from_logpdf(poisson_logpmf)


def binom_logpmf(k, n, p, loc=0):
    """Log-pmf of the binomial distribution."""
    U = _U()
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = U.subtract(k, loc)
    comb = U.subtract(U.subtract(sp.gammaln(U.add(n, 1)), sp.gammaln(U.add(y, 1))),
                      sp.gammaln(U.add(U.subtract(n, y), 1)))
    lp = U.add(comb, U.add(sp.xlogy(y, p), sp.xlog1py(U.subtract(n, y), U.negative(p))))
    return U.where(U.logical_or(U.less(y, 0), U.greater(y, n)), -np.inf, lp)


binom_pmf = _from_logpdf(binom_logpmf)


def geom_logpmf(k, p, loc=0):
    """Log-pmf of the geometric distribution (trials until the first success)."""
    U = _U()
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    x = U.subtract(k, loc)
    lp = U.add(sp.xlog1py(U.subtract(x, 1), U.negative(p)), U.log(p))
    return U.where(U.less_equal(x, 0), -np.inf, lp)


geom_pmf = _from_logpdf(geom_logpmf)


def pareto_logpdf(x, b, loc=0, scale=1):
    """Log-density of the Pareto distribution."""
    U = _U()
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    lp = U.subtract(U.subtract(U.log(b), U.multiply(U.add(b, 1), U.log(y))), U.log(scale))
    return U.where(U.less(y, 1), -np.inf, lp)


pareto_pdf = _from_logpdf(pareto_logpdf)


def dirichlet_logpdf(x, alpha):
    """Log-density of the Dirichlet distribution (``x`` on the simplex, last axis)."""
    U, R = _U(), _R()
    x, alpha = promote_args_inexact("dirichlet.logpdf", x, alpha)
    normalize = U.subtract(R.sum(sp.gammaln(alpha), axis=-1), sp.gammaln(R.sum(alpha, -1)))
    return U.subtract(R.sum(sp.xlogy(U.subtract(alpha, 1), x), axis=-1), normalize)


dirichlet_pdf = _from_logpdf(dirichlet_logpdf)


# --------------------------------------------------------------- the public modules' names

FAMILIES = {
    "bernoulli": ("cdf", "logpmf", "pmf", "ppf"),
    "beta": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"),
    "betabinom": ("logpmf", "pmf"),
    "binom": ("logpmf", "pmf"),
    "cauchy": ("cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"),
    "chi2": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"),
    "dirichlet": ("logpdf", "pdf"),
    "expon": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"),
    "gamma": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"),
    "gennorm": ("cdf", "logpdf", "pdf"),
    "geom": ("logpmf", "pmf"),
    "gumbel_l": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"),
    "gumbel_r": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"),
    "laplace": ("cdf", "logpdf", "pdf"),
    "logistic": ("cdf", "isf", "logpdf", "pdf", "ppf", "sf"),
    "multinomial": ("logpmf", "pmf"),
    "multivariate_normal": ("logpdf", "pdf"),
    "nbinom": ("logpmf", "pmf"),
    "norm": ("cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"),
    "pareto": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"),
    "poisson": ("cdf", "entropy", "logpmf", "pmf"),
    "t": ("logpdf", "pdf"),
    "truncnorm": ("cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"),
    "uniform": ("cdf", "logpdf", "pdf", "ppf"),
    "vonmises": ("logpdf", "pdf"),
    "wrapcauchy": ("logpdf", "pdf"),
}


def family_function(family, name):
    """The function ``jaxlite.scipy.stats.<family>.<name>`` (defined here as
    ``<family>_<name>``, or in ``stats_extra`` / ``stats_families``)."""
    from jaxlite._src.scipy import stats_extra, stats_families
    key = f"{family}_{name}"
    for namespace in (globals(), vars(stats_extra), vars(stats_families)):
        if key in namespace:
            return namespace[key]
    raise AttributeError(f"jaxlite.scipy.stats.{family} has no function {name!r}")


def _label_functions():
    """Give every family function the name and module it is published under (so reprs,
    help() and pickling say ``jaxlite.scipy.stats.norm.logpdf``)."""
    for family, names in FAMILIES.items():
        for name in names:
            fn = family_function(family, name)
            fn.__name__ = fn.__qualname__ = name
            fn.__module__ = f"jaxlite.scipy.stats.{family}"


_label_functions()
