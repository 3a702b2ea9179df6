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
from jaxlite._src.scipy.stats_extra import beta_cdf, gamma_cdf, norm_logpdf  # noqa: F401
from jaxlite._src.scipy.stats_extra import _L, _U, _asarray, _const, _ls  # noqa: F401


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

def norm_cdf(x, loc=0, scale=1):
    """CDF of the normal distribution."""
    L = _L()
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return sp.ndtr(L.div(L.sub(x, loc), scale))


def norm_logcdf(x, loc=0, scale=1):
    """Log-CDF of the normal distribution."""
    L = _L()
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return sp.log_ndtr(L.div(L.sub(x, loc), scale))


def norm_ppf(q, loc=0, scale=1):
    """Quantile function of the normal distribution (``ndtri(q) * scale + loc``)."""
    from jaxlite._src.numpy.creation import asarray
    return asarray(sp.ndtri(q) * scale + loc, float)


def norm_sf(x, loc=0, scale=1):
    """Survival function ``cdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return norm_cdf(-x, -loc, scale)


def norm_isf(q, loc=0, scale=1):
    """Inverse survival function ``ppf(1 - q)``."""
    q = _asarray(q)
    return norm_ppf(_L().sub(_const(q, 1), q), loc, scale)


def norm_logsf(x, loc=0, scale=1):
    """Log of the survival function ``logcdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return norm_logcdf(-x, -loc, scale)


norm_pdf = _from_logpdf(norm_logpdf)


# ----------------------------------------------------------------------------- others

def multivariate_normal_logpdf(x, mean, cov, allow_singular=None):
    """Log-density of the multivariate normal: ``-|y|²/2 - n log(2 pi)/2 - sum(log diag L)``
    with ``L = cholesky(cov)`` and ``y`` solving ``y L^T = x - mean`` (a scalar ``mean`` or
    ``cov`` as JAX: a univariate density, or ``cov * I``)."""
    from jaxlite._src.lax import linalg as LL
    from jaxlite._src.lax.shape import expand_dims, squeeze
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.numpy.util import promote_dtypes_inexact
    from jaxlite._src.numpy.vectorize import vectorize
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if not mean.shape:
        return (-1 / 2 * jnp.square(x - mean) / cov
                - 1 / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    n = mean.shape[-1]
    if not np.shape(cov):
        y = x - mean
        return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) / cov
                - n / 2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    L = LL.cholesky(cov)

    def solve(L, y):
        # lax.linalg.triangular_solve of a vector: one row, solved against L^T
        return squeeze(LL.triangular_solve(L, expand_dims(y, (0,)), lower=True,
                                           transpose_a=True), (0,))
    y = vectorize(solve, signature="(n,n),(n)->(n)")(L, x - mean)
    return (-1 / 2 * jnp.einsum("...i,...i->...", y, y) - n / 2 * jnp.log(2 * np.pi)
            - jnp.log(L.diagonal(axis1=-1, axis2=-2)).sum(-1))


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
    """CDF of the Bernoulli distribution (NaN for NaN inputs and ``p`` outside [0, 1])."""
    from jaxlite._src.numpy.searching import select
    U, L = _U(), _L()
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    zero, one = _const(k, 0), _const(k, 1)
    conds = [U.isnan(k) | U.isnan(p) | (p < zero) | (p > one), L.lt(k, zero),
             U.logical_and(L.ge(k, zero), L.lt(k, one)), L.ge(k, one)]
    return select(conds, [np.nan, zero, one - p, one])


bernoulli_pmf = _from_logpdf(bernoulli_logpmf)


def beta_logpdf(x, a, b, loc=0, scale=1):
    """Log-density of the beta distribution (-inf outside ``[loc, loc + scale]``, NaN for
    non-positive ``a``, ``b`` or ``scale``; JAX's composition)."""
    U, L = _U(), _L()
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    one, zero = _const(x, 1), _const(a, 0)
    shape_term = L.neg(sp.betaln(a, b))
    y = L.div(L.sub(x, loc), scale)
    log_linear_term = L.add(sp.xlogy(L.sub(a, one), y), sp.xlog1py(L.sub(b, one), L.neg(y)))
    log_probs = L.sub(L.add(shape_term, log_linear_term), L.log(scale))
    result = U.where(U.logical_or(L.gt(x, L.add(loc, scale)), L.lt(x, loc)), -np.inf,
                     log_probs)
    return U.where(U.logical_or(U.logical_or(L.le(a, zero), L.le(b, zero)), L.le(scale, zero)),
                   np.nan, result)


beta_pdf = _from_logpdf(beta_logpdf)


def gamma_logpdf(x, a, loc=0, scale=1):
    """Log-density of the gamma distribution (-inf below ``loc``; JAX's composition)."""
    U, L = _U(), _L()
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    ok = L.ge(x, loc)
    one = _const(x, 1)
    y = U.where(ok, L.div(L.sub(x, loc), scale), one)
    log_linear_term = L.sub(sp.xlogy(L.sub(a, one), y), y)
    shape_terms = L.add(sp.gammaln(a), L.log(scale))
    return U.where(ok, L.sub(log_linear_term, shape_terms), -np.inf)


gamma_pdf = _from_logpdf(gamma_logpdf)


def chi2_logpdf(x, df, loc=0, scale=1):
    """Log-density of the chi-squared distribution (JAX's composition)."""
    U, L = _U(), _L()
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    one, two = _const(x, 1), _const(x, 2)
    y = L.div(L.sub(x, loc), scale)
    df_on_two = L.div(df, two)
    kernel = L.sub(L.mul(L.sub(df_on_two, one), L.log(y)), L.div(y, two))
    nrml_cnst = L.neg(L.add(_ls().lgamma(df_on_two), L.div(L.mul(L.log(two), df), two)))
    log_probs = L.add(L.sub(nrml_cnst, L.log(scale)), kernel)
    return U.where(L.lt(x, loc), -np.inf, log_probs)


chi2_pdf = _from_logpdf(chi2_logpdf)


def uniform_logpdf(x, loc=0, scale=1):
    """Log-density of the uniform distribution on ``[loc, loc + scale]``."""
    U, L = _U(), _L()
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    log_probs = L.neg(L.log(scale))
    return U.where(U.logical_or(L.gt(x, L.add(loc, scale)), L.lt(x, loc)), -np.inf,
                   log_probs)


def uniform_cdf(x, loc=0, scale=1):
    """CDF of the uniform distribution (``jnp.select`` over below, above, inside)."""
    from jaxlite._src.numpy.creation import array
    from jaxlite._src.numpy.searching import select
    L = _L()
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    zero, one = array(0, x.dtype), array(1, x.dtype)
    conds = [L.lt(x, loc), L.gt(x, L.add(loc, scale)),
             L.ge(x, loc) & L.le(x, L.add(loc, scale))]
    return select(conds, [zero, one, L.div(L.sub(x, loc), scale)])


uniform_pdf = _from_logpdf(uniform_logpdf)


def expon_logpdf(x, loc=0, scale=1):
    """Log-density of the exponential distribution (-inf below ``loc``)."""
    U, L = _U(), _L()
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    log_scale = L.log(scale)
    linear_term = L.div(L.sub(x, loc), scale)
    log_probs = L.neg(L.add(linear_term, log_scale))
    return U.where(L.lt(x, loc), -np.inf, log_probs)


def expon_cdf(x, loc=0, scale=1):
    """CDF of the exponential distribution (``-expm1((loc - x) / scale)``)."""
    from jaxlite._src.numpy.creation import zeros_like
    U, L = _U(), _L()
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    neg_scaled_x = L.div(L.sub(loc, x), scale)
    return U.where(L.lt(x, loc), zeros_like(neg_scaled_x), L.neg(L.expm1(neg_scaled_x)))


expon_pdf = _from_logpdf(expon_logpdf)


def laplace_logpdf(x, loc=0, scale=1):
    """Log-density of the Laplace distribution."""
    L = _L()
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    linear_term = L.div(L.abs(L.sub(x, loc)), scale)
    return L.neg(L.add(linear_term, L.log(L.mul(_const(x, 2), scale))))


def laplace_cdf(x, loc=0, scale=1):
    """CDF of the Laplace distribution."""
    L = _L()
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    half, one, zero = _const(x, 0.5), _const(x, 1), _const(x, 0)
    diff = L.div(L.sub(x, loc), scale)
    return L.select(L.le(diff, zero), L.mul(half, L.exp(diff)),
                    L.sub(one, L.mul(half, L.exp(L.neg(diff)))))


laplace_pdf = _from_logpdf(laplace_logpdf)


def logistic_logpdf(x, loc=0, scale=1):
    """Log-density of the logistic distribution: ``-2 logaddexp(z/2, -z/2) - log(scale)``."""
    U, L = _U(), _L()
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    x = L.div(L.sub(x, loc), scale)
    two = _const(x, 2)
    half_x = L.div(x, two)
    return L.sub(L.mul(L.neg(two), U.logaddexp(half_x, L.neg(half_x))), L.log(scale))


def logistic_cdf(x, loc=0, scale=1):
    """CDF of the logistic distribution."""
    L = _L()
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return sp.expit(L.div(L.sub(x, loc), scale))


logistic_pdf = _from_logpdf(logistic_logpdf)


def cauchy_logpdf(x, loc=0, scale=1):
    """Log-density of the Cauchy distribution."""
    L = _L()
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    scaled_x = L.div(L.sub(x, loc), scale)
    normalize_term = L.log(L.mul(_const(x, np.pi), scale))
    return L.neg(L.add(normalize_term, L.log1p(L.mul(scaled_x, scaled_x))))


cauchy_pdf = _from_logpdf(cauchy_logpdf)


def t_logpdf(x, df, loc=0, scale=1):
    """Log-density of Student's t distribution (JAX's composition)."""
    L, ls = _L(), _ls()
    x, df, loc, scale = promote_args_inexact("t.logpdf", x, df, loc, scale)
    two = _const(x, 2)
    scaled_x = L.div(L.sub(x, loc), scale)
    df_over_two = L.div(df, two)
    df_plus_one_over_two = L.add(df_over_two, _const(x, 0.5))
    normalize_term_const = L.mul(L.mul(scale, scale), _const(x, np.pi))
    normalize_term_tmp = L.div(L.log(L.mul(normalize_term_const, df)), two)
    normalize_term = L.sub(L.add(ls.lgamma(df_over_two), normalize_term_tmp),
                           ls.lgamma(df_plus_one_over_two))
    quadratic = L.div(L.mul(scaled_x, scaled_x), df)
    return L.neg(L.add(normalize_term, L.mul(df_plus_one_over_two, L.log1p(quadratic))))


t_pdf = _from_logpdf(t_logpdf)


def poisson_logpmf(k, mu, loc=0):
    """Log-pmf of the Poisson distribution (-inf below ``loc`` and for non-integer ``k``)."""
    U, L = _U(), _L()
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = _const(k, 0)
    x = L.sub(k, loc)
    log_probs = sp.xlogy(x, mu) - sp.gammaln(x + 1) - mu
    return U.where(U.logical_or(L.lt(x, zero), L.ne(U.round(k), k)), -np.inf, log_probs)


def poisson_cdf(k, mu, loc=0):
    """CDF of the Poisson distribution: ``gammaincc(floor(1 + k - loc), mu)``, 0 below
    ``loc``."""
    U, L = _U(), _L()
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = _const(k, 0)
    x = L.sub(k, loc)
    p = sp.gammaincc(U.floor(1 + x), mu)
    return U.where(L.lt(x, zero), zero, p)


poisson_pmf = _from_logpdf(poisson_logpmf)


def binom_logpmf(k, n, p, loc=0):
    """Log-pmf of the binomial distribution (0 where the linear term is 0 or ``k = n = 0``,
    -inf outside ``[loc, loc + n]``; JAX's composition)."""
    U, L = _U(), _L()
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = L.sub(k, loc)
    zero = _const(y, 0)
    comb_term = L.sub(sp.gammaln(n + 1), L.add(sp.gammaln(y + 1), sp.gammaln(n - y + 1)))
    log_linear_term = L.add(sp.xlogy(y, p), sp.xlog1py(L.sub(n, y), L.neg(p)))
    log_probs = L.add(comb_term, log_linear_term)
    y_n_cond = U.logical_or(U.logical_and(L.eq(y, zero), L.eq(n, zero)),
                            L.eq(log_linear_term, zero))
    log_probs = U.where(y_n_cond, 0.0, log_probs)
    return U.where(L.ge(k, loc) & L.lt(k, loc + n + 1), log_probs, -np.inf)


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
    """Log-density of the Pareto distribution (-inf below ``loc + scale``)."""
    U, L = _U(), _L()
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    one = _const(x, 1)
    scaled_x = L.div(L.sub(x, loc), scale)
    normalize_term = L.log(L.div(scale, b))
    log_probs = L.neg(L.add(normalize_term, L.mul(L.add(b, one), L.log(scaled_x))))
    return U.where(L.lt(x, L.add(loc, scale)), -np.inf, log_probs)


pareto_pdf = _from_logpdf(pareto_logpdf)


def dirichlet_logpdf(x, alpha):
    """Log-density of the Dirichlet distribution: the components of ``x`` run along its
    FIRST axis (one fewer than ``alpha`` completes it to 1); -inf off the simplex (JAX's
    conventions)."""
    from jaxlite._src.lax.shape import broadcast_in_dim
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.numpy.util import promote_dtypes_inexact
    L = _L()
    x, alpha = promote_dtypes_inexact(x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    one = _const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, L.sub(one, x.sum(0, keepdims=True))], axis=0)
    normalize_term = jnp.sum(sp.gammaln(alpha)) - sp.gammaln(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = L.sub(jnp.sum(sp.xlogy(L.sub(alpha, one), x), axis=0), normalize_term)
    x_sum = jnp.sum(x, axis=0)
    simplex = jnp.all(x > 0, axis=0) & (abs(x_sum - 1) < 1e-6)
    return jnp.where(simplex, log_probs, -np.inf)


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
