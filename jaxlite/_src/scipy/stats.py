"""jax.scipy.stats: log-densities, densities and distribution functions of the common
distributions, written with jnp/lax (differentiable, batchable, jittable)."""
from __future__ import annotations

import inspect
import types

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact
from jaxlite._src.scipy import special as sp

__all__ = ["norm", "multivariate_normal", "bernoulli", "beta", "gamma", "uniform", "expon",
           "laplace", "logistic", "cauchy", "t", "poisson", "chi2", "dirichlet", "binom",
           "geom", "pareto"]


def _U():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _R():
    from jaxlite._src.numpy import reductions
    return reductions


def _ns(name, **fns):
    return types.SimpleNamespace(__name__=name, **fns)


def _from_logpdf(logpdf):
    def pdf(*args, **kw):
        return _U().exp(logpdf(*args, **kw))
    pdf.__doc__ = "The density: ``exp(logpdf(...))``."
    pdf.__signature__ = inspect.signature(logpdf)
    return pdf


# ----------------------------------------------------------------------------- norm

def _norm_logpdf(x, loc=0, scale=1):
    """Log-density of the normal distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    z = U.divide(U.subtract(x, loc), scale)
    return U.subtract(U.multiply(-0.5, U.square(z)),
                      U.add(U.log(scale), np.asarray(0.5 * np.log(2 * np.pi), z.dtype)))


def _norm_cdf(x, loc=0, scale=1):
    """CDF of the normal distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return sp.ndtr(U.divide(U.subtract(x, loc), scale))


def _norm_logcdf(x, loc=0, scale=1):
    """Log-CDF of the normal distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return sp.log_ndtr(U.divide(U.subtract(x, loc), scale))


def _norm_ppf(q, loc=0, scale=1):
    """Quantile function of the normal distribution."""
    U = _U()
    q, loc, scale = promote_args_inexact("norm.ppf", q, loc, scale)
    return U.add(U.multiply(sp.ndtri(q), scale), loc)


def _norm_sf(x, loc=0, scale=1):
    """Survival function ``1 - cdf``."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return sp.ndtr(U.negative(U.divide(U.subtract(x, loc), scale)))


def _norm_isf(q, loc=0, scale=1):
    """Inverse survival function."""
    return _norm_ppf(_U().subtract(1, q), loc, scale)


def _norm_logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    U = _U()
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return sp.log_ndtr(U.negative(U.divide(U.subtract(x, loc), scale)))


norm = _ns("norm", logpdf=_norm_logpdf, pdf=_from_logpdf(_norm_logpdf), cdf=_norm_cdf,
           logcdf=_norm_logcdf, ppf=_norm_ppf, sf=_norm_sf, isf=_norm_isf, logsf=_norm_logsf)


# ----------------------------------------------------------------------------- others

def _mvn_logpdf(x, mean, cov, allow_singular=None):
    """Log-density of the multivariate normal (Cholesky-based)."""
    import jaxlite.numpy as jnp
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


def _mvn_pdf(x, mean, cov):
    """Density of the multivariate normal distribution."""
    return _U().exp(_mvn_logpdf(x, mean, cov))


multivariate_normal = _ns("multivariate_normal", logpdf=_mvn_logpdf, pdf=_mvn_pdf)


def _bern_logpmf(k, p, loc=0):
    """Log-pmf of the Bernoulli distribution."""
    U = _U()
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    x = U.subtract(k, loc)
    val = U.add(sp.xlogy(x, p), sp.xlog1py(U.subtract(1, x), U.negative(p)))
    return U.where(U.logical_or(U.less(x, 0), U.greater(x, 1)), -np.inf, val)


def _bern_cdf(k, p):
    """CDF of the Bernoulli distribution."""
    U = _U()
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    return U.where(U.less(k, 0), 0.0, U.where(U.less(k, 1), U.subtract(1, p), 1.0))


bernoulli = _ns("bernoulli", logpmf=_bern_logpmf, pmf=_from_logpdf(_bern_logpmf),
                cdf=_bern_cdf)


def _beta_logpdf(x, a, b, loc=0, scale=1):
    """Log-density of the beta distribution."""
    U = _U()
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    lp = U.subtract(U.add(sp.xlogy(U.subtract(a, 1), y), sp.xlog1py(U.subtract(b, 1),
                                                                   U.negative(y))),
                    U.add(sp.betaln(a, b), U.log(scale)))
    return U.where(U.logical_or(U.less(y, 0), U.greater(y, 1)), -np.inf, lp)


def _beta_cdf(x, a, b, loc=0, scale=1):
    """CDF of the beta distribution."""
    U = _U()
    x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    y = U.clip(U.divide(U.subtract(x, loc), scale), 0, 1)
    return sp.betainc(a, b, y)


beta = _ns("beta", logpdf=_beta_logpdf, pdf=_from_logpdf(_beta_logpdf), cdf=_beta_cdf)


def _gamma_logpdf(x, a, loc=0, scale=1):
    """Log-density of the gamma distribution."""
    U = _U()
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    lp = U.subtract(U.subtract(sp.xlogy(U.subtract(a, 1), y), y),
                    U.add(sp.gammaln(a), U.log(scale)))
    return U.where(U.less(y, 0), -np.inf, lp)


def _gamma_cdf(x, a, loc=0, scale=1):
    """CDF of the gamma distribution."""
    U = _U()
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return sp.gammainc(a, U.maximum(U.divide(U.subtract(x, loc), scale), 0))


gamma = _ns("gamma", logpdf=_gamma_logpdf, pdf=_from_logpdf(_gamma_logpdf), cdf=_gamma_cdf)


def _chi2_logpdf(x, df, loc=0, scale=1):
    """Log-density of the chi-squared distribution."""
    U = _U()
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    return _gamma_logpdf(x, U.divide(df, 2), loc, U.multiply(scale, 2))


chi2 = _ns("chi2", logpdf=_chi2_logpdf, pdf=_from_logpdf(_chi2_logpdf))


def _unif_logpdf(x, loc=0, scale=1):
    """Log-density of the uniform distribution on ``[loc, loc + scale]``."""
    U = _U()
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    inside = U.logical_and(U.greater_equal(x, loc), U.less_equal(x, U.add(loc, scale)))
    return U.where(inside, U.negative(U.log(scale)), -np.inf)


def _unif_cdf(x, loc=0, scale=1):
    """CDF of the uniform distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    return U.clip(U.divide(U.subtract(x, loc), scale), 0, 1)


uniform = _ns("uniform", logpdf=_unif_logpdf, pdf=_from_logpdf(_unif_logpdf), cdf=_unif_cdf)


def _expon_logpdf(x, loc=0, scale=1):
    """Log-density of the exponential distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    return U.where(U.less(y, 0), -np.inf, U.subtract(U.negative(y), U.log(scale)))


def _expon_cdf(x, loc=0, scale=1):
    """CDF of the exponential distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    return U.where(U.less(y, 0), 0.0, U.negative(U.expm1(U.negative(y))))


expon = _ns("expon", logpdf=_expon_logpdf, pdf=_from_logpdf(_expon_logpdf), cdf=_expon_cdf)


def _laplace_logpdf(x, loc=0, scale=1):
    """Log-density of the Laplace distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    return U.subtract(U.negative(U.divide(U.abs(U.subtract(x, loc)), scale)),
                      U.log(U.multiply(2, scale)))


def _laplace_cdf(x, loc=0, scale=1):
    """CDF of the Laplace distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    z = U.divide(U.subtract(x, loc), scale)
    return U.where(U.less(z, 0), U.multiply(0.5, U.exp(z)),
                   U.subtract(1, U.multiply(0.5, U.exp(U.negative(z)))))


laplace = _ns("laplace", logpdf=_laplace_logpdf, pdf=_from_logpdf(_laplace_logpdf),
              cdf=_laplace_cdf)


def _logistic_logpdf(x, loc=0, scale=1):
    """Log-density of the logistic distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    z = U.divide(U.subtract(x, loc), scale)
    return U.subtract(U.subtract(U.negative(z), U.multiply(2, U.log1p(U.exp(U.negative(z))))),
                      U.log(scale))


def _logistic_cdf(x, loc=0, scale=1):
    """CDF of the logistic distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return sp.expit(U.divide(U.subtract(x, loc), scale))


logistic = _ns("logistic", logpdf=_logistic_logpdf, pdf=_from_logpdf(_logistic_logpdf),
               cdf=_logistic_cdf)


def _cauchy_logpdf(x, loc=0, scale=1):
    """Log-density of the Cauchy distribution."""
    U = _U()
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    z = U.divide(U.subtract(x, loc), scale)
    return U.negative(U.add(U.log(U.multiply(np.pi, scale)), U.log1p(U.square(z))))


cauchy = _ns("cauchy", logpdf=_cauchy_logpdf, pdf=_from_logpdf(_cauchy_logpdf))


def _t_logpdf(x, df, loc=0, scale=1):
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


t = _ns("t", logpdf=_t_logpdf, pdf=_from_logpdf(_t_logpdf))


def _poisson_logpmf(k, mu, loc=0):
    """Log-pmf of the Poisson distribution."""
    U = _U()
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    x = U.subtract(k, loc)
    lp = U.subtract(U.subtract(sp.xlogy(x, mu), mu), sp.gammaln(U.add(x, 1)))
    return U.where(U.logical_or(U.less(x, 0), U.not_equal(U.round(x), x)), -np.inf, lp)


def _poisson_cdf(k, mu, loc=0):
    """CDF of the Poisson distribution."""
    U = _U()
    k, mu, loc = promote_args_inexact("poisson.cdf", k, mu, loc)
    x = U.floor(U.subtract(k, loc))
    return U.where(U.less(x, 0), 0.0, sp.gammaincc(U.add(x, 1), mu))


poisson = _ns("poisson", logpmf=_poisson_logpmf, pmf=_from_logpdf(_poisson_logpmf),
              cdf=_poisson_cdf)


def _binom_logpmf(k, n, p, loc=0):
    """Log-pmf of the binomial distribution."""
    U = _U()
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = U.subtract(k, loc)
    comb = U.subtract(U.subtract(sp.gammaln(U.add(n, 1)), sp.gammaln(U.add(y, 1))),
                      sp.gammaln(U.add(U.subtract(n, y), 1)))
    lp = U.add(comb, U.add(sp.xlogy(y, p), sp.xlog1py(U.subtract(n, y), U.negative(p))))
    return U.where(U.logical_or(U.less(y, 0), U.greater(y, n)), -np.inf, lp)


binom = _ns("binom", logpmf=_binom_logpmf, pmf=_from_logpdf(_binom_logpmf))


def _geom_logpmf(k, p, loc=0):
    """Log-pmf of the geometric distribution (trials until the first success)."""
    U = _U()
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    x = U.subtract(k, loc)
    lp = U.add(sp.xlog1py(U.subtract(x, 1), U.negative(p)), U.log(p))
    return U.where(U.less_equal(x, 0), -np.inf, lp)


geom = _ns("geom", logpmf=_geom_logpmf, pmf=_from_logpdf(_geom_logpmf))


def _pareto_logpdf(x, b, loc=0, scale=1):
    """Log-density of the Pareto distribution."""
    U = _U()
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    y = U.divide(U.subtract(x, loc), scale)
    lp = U.subtract(U.subtract(U.log(b), U.multiply(U.add(b, 1), U.log(y))), U.log(scale))
    return U.where(U.less(y, 1), -np.inf, lp)


pareto = _ns("pareto", logpdf=_pareto_logpdf, pdf=_from_logpdf(_pareto_logpdf))


def _dirichlet_logpdf(x, alpha):
    """Log-density of the Dirichlet distribution (``x`` on the simplex, last axis)."""
    U, R = _U(), _R()
    x, alpha = promote_args_inexact("dirichlet.logpdf", x, alpha)
    normalize = U.subtract(R.sum(sp.gammaln(alpha), axis=-1), sp.gammaln(R.sum(alpha, -1)))
    return U.subtract(R.sum(sp.xlogy(U.subtract(alpha, 1), x), axis=-1), normalize)


dirichlet = _ns("dirichlet", logpdf=_dirichlet_logpdf, pdf=_from_logpdf(_dirichlet_logpdf))



# ------------------------------------------- distribution functions and families added later

def _merge_extras():
    from jaxlite._src.scipy import stats_extra as _x
    for _name, _fns in _x.EXTRA_FUNCTIONS.items():
        for _fn_name, _fn in _fns.items():
            setattr(globals()[_name], _fn_name, _fn)
    for _name, _fam in _x.NEW_FAMILIES.items():
        globals()[_name] = _fam
        __all__.append(_name)


_merge_extras()
