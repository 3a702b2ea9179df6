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
from jaxlite._src.scipy.stats_families import _log1mexp


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


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
    """Quantile of the uniform distribution on ``[loc, loc + scale]`` (NaN outside [0, 1])."""
    jnp = _np()
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return jnp.where(_outside_unit(q), _c(np.nan, q), loc + q * scale)


# ------------------------------------------------------------------------------- cauchy

def cauchy_cdf(x, loc=0, scale=1):
    """CDF of the Cauchy distribution, ``1/2 + arctan(z) / pi``."""
    jnp = _np()
    z, _ = _std("cauchy.cdf", x, loc, scale)
    return _c(0.5, z) + jnp.arctan(z) / np.pi


def cauchy_sf(x, loc=0, scale=1):
    """Survival function of the Cauchy distribution (``cdf`` at the mirrored point)."""
    jnp = _np()
    z, _ = _std("cauchy.sf", x, loc, scale)
    return _c(0.5, z) - jnp.arctan(z) / np.pi


def cauchy_logcdf(x, loc=0, scale=1):
    """Log-CDF of the Cauchy distribution."""
    return _np().log(cauchy_cdf(x, loc, scale))


def cauchy_logsf(x, loc=0, scale=1):
    """Log of the Cauchy survival function."""
    return _np().log(cauchy_sf(x, loc, scale))


def cauchy_ppf(q, loc=0, scale=1):
    """Quantile of the Cauchy distribution, ``loc + scale tan(pi (q - 1/2))`` (+-inf at 1 and
    0, NaN outside [0, 1])."""
    jnp = _np()
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    out = loc + scale * jnp.tan(np.pi * (q - _c(0.5, q)))
    out = jnp.where(q == 0, _c(-np.inf, q), jnp.where(q == 1, _c(np.inf, q), out))
    return jnp.where(_outside_unit(q), _c(np.nan, q), out)


def cauchy_isf(q, loc=0, scale=1):
    """Inverse survival function of the Cauchy distribution."""
    jnp = _np()
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    return 2 * loc - cauchy_ppf(q, loc, scale)


# ------------------------------------------------------------- gamma / chi2 / beta / expon

def gamma_sf(x, a, loc=0, scale=1):
    """Survival function of the gamma distribution (upper regularized incomplete gamma)."""
    jnp = _np()
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = jnp.maximum((x - loc) / scale, _c(0, x))
    return sp.gammaincc(a, y)


def gamma_logcdf(x, a, loc=0, scale=1):
    """Log-CDF of the gamma distribution."""
    jnp = _np()
    x, a, loc, scale = promote_args_inexact("gamma.logcdf", x, a, loc, scale)
    return jnp.log(sp.gammainc(a, jnp.maximum((x - loc) / scale, _c(0, x))))


def gamma_logsf(x, a, loc=0, scale=1):
    """Log of the gamma survival function."""
    return _np().log(gamma_sf(x, a, loc, scale))


def chi2_cdf(x, df, loc=0, scale=1):
    """CDF of the chi-squared distribution (``gammainc(df/2, x/2)``)."""
    jnp = _np()
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    return sp.gammainc(df / 2, jnp.maximum((x - loc) / scale, _c(0, x)) / 2)


def chi2_sf(x, df, loc=0, scale=1):
    """Survival function of the chi-squared distribution."""
    jnp = _np()
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    return sp.gammaincc(df / 2, jnp.maximum((x - loc) / scale, _c(0, x)) / 2)


def chi2_logcdf(x, df, loc=0, scale=1):
    """Log-CDF of the chi-squared distribution."""
    return _np().log(chi2_cdf(x, df, loc, scale))


def chi2_logsf(x, df, loc=0, scale=1):
    """Log of the chi-squared survival function."""
    return _np().log(chi2_sf(x, df, loc, scale))


def beta_sf(x, a, b, loc=0, scale=1):
    """Survival function of the beta distribution, ``I_{1-y}(b, a)``."""
    jnp = _np()
    x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
    y = jnp.clip((x - loc) / scale, 0, 1)
    return sp.betainc(b, a, 1 - y)


def beta_logcdf(x, a, b, loc=0, scale=1):
    """Log-CDF of the beta distribution."""
    jnp = _np()
    x, a, b, loc, scale = promote_args_inexact("beta.logcdf", x, a, b, loc, scale)
    return jnp.log(sp.betainc(a, b, jnp.clip((x - loc) / scale, 0, 1)))


def beta_logsf(x, a, b, loc=0, scale=1):
    """Log of the beta survival function."""
    return _np().log(beta_sf(x, a, b, loc, scale))


def expon_sf(x, loc=0, scale=1):
    """Survival function of the exponential distribution, ``exp(-y)`` (1 below ``loc``)."""
    jnp = _np()
    y, _ = _std("expon.sf", x, loc, scale)
    return jnp.exp(-jnp.maximum(y, _c(0, y)))


def expon_logsf(x, loc=0, scale=1):
    """Log of the exponential survival function, ``-y`` (0 below ``loc``)."""
    jnp = _np()
    y, _ = _std("expon.logsf", x, loc, scale)
    return -jnp.maximum(y, _c(0, y))


def expon_logcdf(x, loc=0, scale=1):
    """Log-CDF of the exponential distribution, ``log(-expm1(-y))`` (-inf below ``loc``)."""
    jnp = _np()
    y, _ = _std("expon.logcdf", x, loc, scale)
    pos = y > 0
    ys = jnp.where(pos, y, _c(1, y))
    return jnp.where(pos, _log1mexp(-ys), _c(-np.inf, y))


def expon_ppf(q, loc=0, scale=1):
    """Quantile of the exponential distribution, ``loc - scale log1p(-q)``."""
    jnp = _np()
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    return jnp.where(_outside_unit(q), _c(np.nan, q), loc - scale * jnp.log1p(-q))


# ----------------------------------------------------------------------- logistic/pareto

def logistic_sf(x, loc=0, scale=1):
    """Survival function of the logistic distribution, ``expit(-z)``."""
    z, _ = _std("logistic.sf", x, loc, scale)
    return sp.expit(-z)


def logistic_ppf(x, loc=0, scale=1):
    """Quantile of the logistic distribution, ``loc + scale logit(q)``."""
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return loc + scale * sp.logit(x)


def logistic_isf(x, loc=0, scale=1):
    """Inverse survival function of the logistic distribution, ``loc - scale logit(q)``."""
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return loc - scale * sp.logit(x)


def pareto_logsf(x, b, loc=0, scale=1):
    """Log survival function of the Pareto distribution, ``-b log(y)`` (0 below 1)."""
    jnp = _np()
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    y = (x - loc) / scale
    ys = jnp.where(y < 1, _c(1, y), y)
    return jnp.where(y < 1, _c(0, y), -b * jnp.log(ys))


def pareto_sf(x, b, loc=0, scale=1):
    """Survival function of the Pareto distribution, ``y**-b`` (1 below 1)."""
    return _np().exp(pareto_logsf(x, b, loc, scale))


def pareto_logcdf(x, b, loc=0, scale=1):
    """Log-CDF of the Pareto distribution, ``log(1 - y**-b)``."""
    jnp = _np()
    ls = pareto_logsf(x, b, loc, scale)
    neg = ls < 0
    return jnp.where(neg, _log1mexp(jnp.where(neg, ls, _c(-1, ls))), _c(-np.inf, ls))


def pareto_cdf(x, b, loc=0, scale=1):
    """CDF of the Pareto distribution, ``1 - y**-b`` (0 below 1)."""
    return -_np().expm1(pareto_logsf(x, b, loc, scale))


def pareto_ppf(q, b, loc=0, scale=1):
    """Quantile of the Pareto distribution, ``loc + scale (1 - q)**(-1/b)``."""
    jnp = _np()
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    return jnp.where(_outside_unit(q), _c(np.nan, q),
                     loc + scale * jnp.exp(-jnp.log1p(-q) / b))


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
