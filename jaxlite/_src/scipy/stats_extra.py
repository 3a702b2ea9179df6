"""More of jax.scipy.stats, written for jaxlite from the distributions' textbook formulas
(SciPy's parameterisations and edge-case conventions): the distribution functions
(cdf/sf/logcdf/logsf/ppf/isf/entropy) that the basic families in ``stats.py`` lacked, and
the families betabinom, gennorm, gumbel_l, gumbel_r, multinomial, nbinom, truncnorm,
vonmises and wrapcauchy (in ``stats_families``). ``stats.FAMILIES`` says which functions
make up each public module ``jaxlite.scipy.stats.<family>``."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact
from jaxlite._src.scipy import special as sp


def _L():
    from jaxlite._src.lax import elementwise
    return elementwise


def _ls():
    from jaxlite._src.lax import special
    return special


def _asarray(x):
    from jaxlite._src.numpy.util import asarray_value
    return asarray_value(x)


def _const(x, v):
    """``v`` as a constant of ``x``'s dtype (JAX's ``_lax_const``)."""
    return np.asarray(v, x.dtype)


def _U():
    from jaxlite._src.numpy import ufuncs
    return ufuncs


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp



def norm_logpdf(x, loc=0, scale=1):
    """Log-density of the normal distribution: ``(log(2 pi scale²) + (x - loc)² / scale²) /
    -2`` (JAX's composition)."""
    L = _L()
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sqrd = L.square(scale)
    log_normalizer = L.log(L.mul(_const(x, 2 * np.pi), scale_sqrd))
    quadratic = L.div(L.square(L.sub(x, loc)), scale_sqrd)
    return L.div(L.add(log_normalizer, quadratic), _const(x, -2))


def gamma_cdf(x, a, loc=0, scale=1):
    """CDF of the gamma distribution (``gammainc`` of the clamped standardized ``x``)."""
    L = _L()
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return sp.gammainc(a, L.clamp(_const(x, 0), L.div(L.sub(x, loc), scale),
                                  _const(x, np.inf)))


def beta_cdf(x, a, b, loc=0, scale=1):
    """CDF of the beta distribution (``betainc`` of the clamped standardized ``x``)."""
    L = _L()
    x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    return sp.betainc(a, b, L.clamp(_const(x, 0), L.div(L.sub(x, loc), scale),
                                    _const(x, 1)))


def _c(v, like):
    return np.asarray(v, like.dtype)


def _std(name, x, loc, scale):
    x, loc, scale = promote_args_inexact(name, x, loc, scale)
    return (x - loc) / scale, scale


def _outside_unit(q):
    jnp = _np()
    return jnp.logical_or(q < 0, q > 1)


# --------------------------------------------------------------------- bernoulli / uniform

def bernoulli_ppf(q, p):
    """Quantile of the Bernoulli distribution: -1 at q == 0, 0 up to ``1 - p``, 1 above;
    NaN outside [0, 1]."""
    jnp = _np()
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    out = jnp.where(q > 1 - p, _c(1, q), _c(0, q))
    out = jnp.where(q == 0, _c(-1, q), out)
    return jnp.where(_outside_unit(q), _c(np.nan, q), out)


def uniform_ppf(q, loc=0, scale=1):
    """Quantile function of the uniform distribution (NaN outside ``[0, 1]``)."""
    U, L = _U(), _L()
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return U.where(U.isnan(q) | (q < 0) | (q > 1), np.nan, L.add(loc, L.mul(scale, q)))


# ------------------------------------------------------------------------------- cauchy

def cauchy_cdf(x, loc=0, scale=1):
    """CDF of the Cauchy distribution: ``1/2 + arctan(z) / pi``."""
    U, L = _U(), _L()
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    pi = _const(x, np.pi)
    scaled_x = L.div(L.sub(x, loc), scale)
    return L.add(_const(x, 0.5), L.mul(L.div(_const(x, 1.0), pi), U.arctan(scaled_x)))


def cauchy_sf(x, loc=0, scale=1):
    """Survival function ``cdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cauchy_cdf(-x, -loc, scale)


def cauchy_logcdf(x, loc=0, scale=1):
    """Log-CDF of the Cauchy distribution."""
    return _L().log(cauchy_cdf(x, loc, scale))


def cauchy_logsf(x, loc=0, scale=1):
    """Log survival function ``logcdf(-x, -loc, scale)``."""
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return cauchy_logcdf(-x, -loc, scale)


def cauchy_ppf(q, loc=0, scale=1):
    """Quantile function of the Cauchy distribution: ``tan(pi q - pi/2) scale + loc``."""
    L = _L()
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    unscaled = L.tan(L.sub(L.mul(_const(q, np.pi), q), _const(q, np.pi / 2)))
    return L.add(L.mul(unscaled, scale), loc)


def cauchy_isf(q, loc=0, scale=1):
    """Inverse survival function: ``tan(pi/2 - pi q) scale + loc``."""
    L = _L()
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    unscaled = L.tan(L.sub(_const(q, np.pi / 2), L.mul(_const(q, np.pi), q)))
    return L.add(L.mul(unscaled, scale), loc)


# ------------------------------------------------------------- gamma / chi2 / beta / expon

def gamma_sf(x, a, loc=0, scale=1):
    """Survival function of the gamma distribution (1 below ``loc``)."""
    U, L = _U(), _L()
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = L.div(L.sub(x, loc), scale)
    return U.where(L.lt(y, _const(y, 0)), 1, sp.gammaincc(a, y))


def gamma_logcdf(x, a, loc=0, scale=1):
    """Log-CDF of the gamma distribution."""
    return _L().log(gamma_cdf(x, a, loc, scale))


def gamma_logsf(x, a, loc=0, scale=1):
    """Log survival function of the gamma distribution."""
    return _L().log(gamma_sf(x, a, loc, scale))


def chi2_cdf(x, df, loc=0, scale=1):
    """CDF of the chi-squared distribution (``gammainc(df/2, (x - loc) / (2 scale))``)."""
    L = _L()
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    two = _const(scale, 2)
    return sp.gammainc(L.div(df, two), L.clamp(_const(x, 0), L.div(L.sub(x, loc),
                                                                   L.mul(scale, two)),
                                               _const(x, np.inf)))


def chi2_sf(x, df, loc=0, scale=1):
    """Survival function of the chi-squared distribution."""
    L = _L()
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    two = _const(scale, 2)
    return sp.gammaincc(L.div(df, two), L.clamp(_const(x, 0), L.div(L.sub(x, loc),
                                                                    L.mul(scale, two)),
                                                _const(x, np.inf)))


def chi2_logcdf(x, df, loc=0, scale=1):
    """Log-CDF of the chi-squared distribution."""
    return _L().log(chi2_cdf(x, df, loc, scale))


def chi2_logsf(x, df, loc=0, scale=1):
    """Log of the chi-squared survival function."""
    return _L().log(chi2_sf(x, df, loc, scale))


def beta_sf(x, a, b, loc=0, scale=1):
    """Survival function of the beta distribution, ``I_{1-y}(b, a)``."""
    L = _L()
    x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
    return sp.betainc(b, a, 1 - L.clamp(_const(x, 0), L.div(L.sub(x, loc), scale),
                                        _const(x, 1)))


def beta_logcdf(x, a, b, loc=0, scale=1):
    """Log-CDF of the beta distribution."""
    return _L().log(beta_cdf(x, a, b, loc, scale))


def beta_logsf(x, a, b, loc=0, scale=1):
    """Log of the beta survival function."""
    return _L().log(beta_sf(x, a, b, loc, scale))


def expon_sf(x, loc=0, scale=1):
    """Survival function of the exponential distribution: ``exp(logsf)``."""
    return _L().exp(expon_logsf(x, loc, scale))


def expon_logsf(x, loc=0, scale=1):
    """Log survival function of the exponential distribution (0 below ``loc``)."""
    from jaxlite._src.numpy.creation import zeros_like
    U, L = _U(), _L()
    x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)
    neg_scaled_x = L.div(L.sub(loc, x), scale)
    return U.where(L.lt(x, loc), zeros_like(neg_scaled_x), neg_scaled_x)


def expon_logcdf(x, loc=0, scale=1):
    """Log-CDF of the exponential distribution: ``log1p(-sf)``."""
    L = _L()
    return L.log1p(L.neg(expon_sf(x, loc, scale)))


def expon_ppf(q, loc=0, scale=1):
    """Quantile function of the exponential distribution (NaN outside ``[0, 1]``)."""
    U, L = _U(), _L()
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    return U.where(U.isnan(q) | (q < 0) | (q > 1), np.nan,
                   L.sub(loc, L.mul(scale, L.log1p(L.neg(q)))))


# ----------------------------------------------------------------------- logistic/pareto

def logistic_sf(x, loc=0, scale=1):
    """Survival function of the logistic distribution."""
    L = _L()
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return sp.expit(L.neg(L.div(L.sub(x, loc), scale)))


def logistic_ppf(x, loc=0, scale=1):
    """Quantile function of the logistic distribution: ``logit(q) scale + loc``."""
    L = _L()
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return L.add(L.mul(sp.logit(x), scale), loc)


def logistic_isf(x, loc=0, scale=1):
    """Inverse survival function of the logistic distribution."""
    L = _L()
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return L.add(L.mul(L.neg(sp.logit(x)), scale), loc)


def pareto_logsf(x, b, loc=0, scale=1):
    """Log survival function of the Pareto distribution: ``-b log(z)`` (0 below ``loc +
    scale``)."""
    U, L = _U(), _L()
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    zero = _const(x, 0)
    scaled_x = L.div(L.sub(x, loc), scale)
    logsf_val = L.neg(L.mul(b, L.log(scaled_x)))
    return U.where(L.lt(x, L.add(loc, scale)), zero, logsf_val)


def pareto_sf(x, b, loc=0, scale=1):
    """Survival function of the Pareto distribution: ``exp(logsf)``."""
    return _L().exp(pareto_logsf(x, b, loc, scale))


def pareto_logcdf(x, b, loc=0, scale=1):
    """Log-CDF of the Pareto distribution: ``log1p(-z**-b)`` (-inf below ``loc + scale``)."""
    U, L = _U(), _L()
    x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    scaled_x = L.div(L.sub(x, loc), scale)
    logcdf_val = L.log1p(L.neg(L.pow(scaled_x, L.neg(b))))
    return U.where(L.lt(x, L.add(loc, scale)), -np.inf, logcdf_val)


def pareto_cdf(x, b, loc=0, scale=1):
    """CDF of the Pareto distribution: ``1 - z**-b`` (0 below ``loc + scale``)."""
    U, L = _U(), _L()
    x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
    one, zero = _const(x, 1), _const(x, 0)
    scaled_x = L.div(L.sub(x, loc), scale)
    cdf = L.sub(one, L.pow(scaled_x, L.neg(b)))
    return U.where(L.lt(x, L.add(loc, scale)), zero, cdf)


def pareto_ppf(q, b, loc=0, scale=1):
    """Quantile function of the Pareto distribution (NaN outside ``[0, 1]``)."""
    U, L = _U(), _L()
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = _const(q, 1)
    ppf_val = L.add(loc, L.mul(scale, L.pow(L.sub(one, q), L.neg(L.div(one, b)))))
    return U.where(U.isnan(q) | (q < 0) | (q > 1), np.nan, ppf_val)


# ------------------------------------------------------------------------------ poisson

_POISSON_SUM_MAX_MU = 100.0
_POISSON_SUM_TERMS = 400


def poisson_entropy(mu, loc=0):
    """Entropy of the Poisson distribution (``loc`` does not change it): the sum
    ``-sum_k pmf(k) log pmf(k)`` over k < 400 for mu <= 100, else the asymptotic expansion
    ``log(2 pi e mu)/2 - 1/(12 mu) - 1/(24 mu^2) - 19/(360 mu^3)``."""
    jnp = _np()
    mu, loc = promote_args_inexact("poisson.entropy", mu, loc)
    mu = mu + jnp.zeros_like(loc)
    small = mu <= _POISSON_SUM_MAX_MU
    ms = jnp.where(small, mu, _c(1, mu))
    k = jnp.arange(_POISSON_SUM_TERMS, dtype=mu.dtype)
    mse = ms[..., None]
    logp = sp.xlogy(k, mse) - mse - sp.gammaln(k + 1)
    terms = jnp.where(logp > -np.inf, -jnp.exp(logp) * logp, _c(0, mu))
    summed = jnp.sum(terms, axis=-1)
    ml = jnp.where(small, _c(_POISSON_SUM_MAX_MU * 2, mu), mu)
    asym = (0.5 * jnp.log(2 * np.pi * np.e * ml) - 1 / (12 * ml) - 1 / (24 * ml * ml)
            - 19 / (360 * ml ** 3))
    out = jnp.where(small, summed, asym)
    return jnp.where(mu < 0, _c(np.nan, mu), out)
