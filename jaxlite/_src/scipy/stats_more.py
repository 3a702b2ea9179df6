"""The jax.scipy.stats functions and distributions beyond stats.py's core set, ported from
JAX's own jnp/lax formulations (Apache-2.0, The JAX Authors) so that values, NaN/inf
conventions and gradients follow JAX's."""
from __future__ import annotations

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite._src.numpy.util import (promote_args_inexact, promote_args_numeric,
                                     promote_dtypes_inexact)
from jaxlite._src.nn.functions import log1mexp
from jaxlite._src.scipy import stats as _st
from jaxlite._src.scipy.special import (betaln, betainc, xlogy, xlog1py, gammaln, gammainc,
                                        gammaincc, expit, logit, entr, logsumexp, log_ndtr,
                                        ndtr)
from jaxlite._src.core import dtypes
from jaxlite._src.numpy.ufuncs import arctan

norm = _st.norm


def ensure_arraylike(fun_name, *args):
    return [jnp.asarray(a) for a in args] if len(args) > 1 else jnp.asarray(args[0])


def _lax_const(x, v):
    return np.asarray(v, dtype=np.result_type(x))

def _bernoulli_ppf(q, p):
    """Bernoulli percent point function (as jax.scipy.stats.bernoulli.ppf)."""
    q, p = promote_args_inexact('bernoulli.ppf', q, p)
    zero, one = (_lax_const(q, 0), _lax_const(q, 1))
    return jnp.where(jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one), jnp.nan, jnp.where(lax.le(q, one - p), zero, one))


def _beta_cdf(x, a, b, loc=0, scale=1):
    """beta: cdf."""
    x, a, b, loc, scale = promote_args_inexact('beta.cdf', x, a, b, loc, scale)
    return betainc(a, b, lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), scale), _lax_const(x, 1)))


def _beta_logcdf(x, a, b, loc=0, scale=1):
    """Beta log cumulative distribution function (as jax.scipy.stats.beta.logcdf)."""
    return lax.log(_beta_cdf(x, a, b, loc, scale))


def _beta_sf(x, a, b, loc=0, scale=1):
    """Beta distribution survival function (as jax.scipy.stats.beta.sf)."""
    x, a, b, loc, scale = promote_args_inexact('beta.sf', x, a, b, loc, scale)
    return betainc(b, a, 1 - lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), scale), _lax_const(x, 1)))


def _beta_logsf(x, a, b, loc=0, scale=1):
    """Beta distribution log survival function (as jax.scipy.stats.beta.logsf)."""
    return lax.log(_beta_sf(x, a, b, loc, scale))


def _betabinom_logpmf(k, n, a, b, loc=0):
    """Beta-binomial log probability mass function (as jax.scipy.stats.betabinom.logpmf)."""
    k, n, a, b, loc = promote_args_inexact('betabinom.logpmf', k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one = _lax_const(y, 1)
    zero = _lax_const(y, 0)
    combiln = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one), lax.add(y, one))))
    beta_lns = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
    log_probs = lax.add(combiln, beta_lns)
    log_probs = jnp.where(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0.0, log_probs)
    y_cond = jnp.logical_or(jnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)), lax.le(lax.add(y, a), zero))
    log_probs = jnp.where(y_cond, -np.inf, log_probs)
    n_a_b_cond = jnp.logical_or(jnp.logical_or(lax.lt(n, zero), lax.le(a, zero)), lax.le(b, zero))
    return jnp.where(n_a_b_cond, np.nan, log_probs)


def _betabinom_pmf(k, n, a, b, loc=0):
    """Beta-binomial probability mass function (as jax.scipy.stats.betabinom.pmf)."""
    return lax.exp(_betabinom_logpmf(k, n, a, b, loc))


def _cauchy_cdf(x, loc=0, scale=1):
    """Cauchy cumulative distribution function (as jax.scipy.stats.cauchy.cdf)."""
    x, loc, scale = promote_args_inexact('cauchy.cdf', x, loc, scale)
    pi = _lax_const(x, np.pi)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    return lax.add(_lax_const(x, 0.5), lax.mul(lax.div(_lax_const(x, 1.0), pi), arctan(scaled_x)))


def _cauchy_logcdf(x, loc=0, scale=1):
    """Cauchy log cumulative distribution function (as jax.scipy.stats.cauchy.logcdf)."""
    return lax.log(_cauchy_cdf(x, loc, scale))


def _cauchy_sf(x, loc=0, scale=1):
    """Cauchy distribution log survival function (as jax.scipy.stats.cauchy.sf)."""
    x, loc, scale = promote_args_inexact('cauchy.sf', x, loc, scale)
    return _cauchy_cdf(-x, -loc, scale)


def _cauchy_logsf(x, loc=0, scale=1):
    """Cauchy distribution log survival function (as jax.scipy.stats.cauchy.logsf)."""
    x, loc, scale = promote_args_inexact('cauchy.logsf', x, loc, scale)
    return _cauchy_logcdf(-x, -loc, scale)


def _cauchy_isf(q, loc=0, scale=1):
    """Cauchy distribution inverse survival function (as jax.scipy.stats.cauchy.isf)."""
    q, loc, scale = promote_args_inexact('cauchy.isf', q, loc, scale)
    pi = _lax_const(q, np.pi)
    half_pi = _lax_const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(half_pi, lax.mul(pi, q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def _cauchy_ppf(q, loc=0, scale=1):
    """Cauchy distribution percent point function (as jax.scipy.stats.cauchy.ppf)."""
    q, loc, scale = promote_args_inexact('cauchy.ppf', q, loc, scale)
    pi = _lax_const(q, np.pi)
    half_pi = _lax_const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(lax.mul(pi, q), half_pi))
    return lax.add(lax.mul(unscaled, scale), loc)


def _chi2_cdf(x, df, loc=0, scale=1):
    """Chi-square cumulative distribution function (as jax.scipy.stats.chi2.cdf)."""
    x, df, loc, scale = promote_args_inexact('chi2.cdf', x, df, loc, scale)
    two = _lax_const(scale, 2)
    return gammainc(lax.div(df, two), lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), lax.mul(scale, two)), _lax_const(x, np.inf)))


def _chi2_logcdf(x, df, loc=0, scale=1):
    """Chi-square log cumulative distribution function (as jax.scipy.stats.chi2.logcdf)."""
    return lax.log(_chi2_cdf(x, df, loc, scale))


def _chi2_sf(x, df, loc=0, scale=1):
    """Chi-square survival function (as jax.scipy.stats.chi2.sf)."""
    x, df, loc, scale = promote_args_inexact('chi2.sf', x, df, loc, scale)
    two = _lax_const(scale, 2)
    return gammaincc(lax.div(df, two), lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), lax.mul(scale, two)), _lax_const(x, np.inf)))


def _chi2_logsf(x, df, loc=0, scale=1):
    """Chi-square log survival function (as jax.scipy.stats.chi2.logsf)."""
    return lax.log(_chi2_sf(x, df, loc, scale))


def _expon_logcdf(x, loc=0, scale=1):
    """Exponential log cumulative density function (as jax.scipy.stats.expon.logcdf)."""
    return lax.log1p(lax.neg(_expon_sf(x, loc, scale)))


def _expon_logsf(x, loc=0, scale=1):
    """Exponential log survival function (as jax.scipy.stats.expon.logsf)."""
    x, loc, scale = promote_args_inexact('expon.sf', x, loc, scale)
    neg_scaled_x = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_scaled_x), neg_scaled_x)


def _expon_sf(x, loc=0, scale=1):
    """Exponential survival function (as jax.scipy.stats.expon.sf)."""
    return lax.exp(_expon_logsf(x, loc, scale))


def _expon_ppf(q, loc=0, scale=1):
    """Exponential percent point function (as jax.scipy.stats.expon.ppf)."""
    q, loc, scale = promote_args_inexact('expon.ppf', q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))


def _gamma_cdf(x, a, loc=0, scale=1):
    """gamma: cdf."""
    x, a, loc, scale = promote_args_inexact('gamma.cdf', x, a, loc, scale)
    return gammainc(a, lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), scale), _lax_const(x, np.inf)))


def _gamma_logcdf(x, a, loc=0, scale=1):
    """Gamma log cumulative distribution function (as jax.scipy.stats.gamma.logcdf)."""
    return lax.log(_gamma_cdf(x, a, loc, scale))


def _gamma_sf(x, a, loc=0, scale=1):
    """Gamma survival function (as jax.scipy.stats.gamma.sf)."""
    x, a, loc, scale = promote_args_inexact('gamma.sf', x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return jnp.where(lax.lt(y, _lax_const(y, 0)), 1, gammaincc(a, y))


def _gamma_logsf(x, a, loc=0, scale=1):
    """Gamma log survival function (as jax.scipy.stats.gamma.logsf)."""
    return lax.log(_gamma_sf(x, a, loc, scale))


def _gennorm_logpdf(x, beta):
    """Generalized normal log probability distribution function (as jax.scipy.stats.gennorm.logpdf)."""
    x, beta = promote_args_inexact('gennorm.logpdf', x, beta)
    return lax.log(0.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def _gennorm_cdf(x, beta):
    """Generalized normal cumulative distribution function (as jax.scipy.stats.gennorm.cdf)."""
    x, beta = promote_args_inexact('gennorm.cdf', x, beta)
    return 0.5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


def _gennorm_pdf(x, beta):
    """Generalized normal probability distribution function (as jax.scipy.stats.gennorm.pdf)."""
    return lax.exp(_gennorm_logpdf(x, beta))


def _gumbel_l_logpdf(x, loc=0, scale=1):
    """Gumbel Distribution (Left Skewed) log probability distribution function (as jax.scipy.stats.gumbel_l.logpdf)."""
    x, loc, scale = promote_args_inexact('gumbel_l.logpdf', x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_log_scale = xlogy(-1, scale)
    t2 = lax.sub(z, lax.exp(z))
    log_pdf = lax.add(neg_log_scale, t2)
    return jnp.where(ok, log_pdf, np.nan)


def _gumbel_l_pdf(x, loc=0, scale=1):
    """Gumbel Distribution (Left Skewed) probability distribution function (as jax.scipy.stats.gumbel_l.pdf)."""
    return lax.exp(_gumbel_l_logpdf(x, loc, scale))


def _gumbel_l_logcdf(x, loc=0, scale=1):
    """Gumbel Distribution (Left Skewed) log cumulative density function (as jax.scipy.stats.gumbel_l.logcdf)."""
    x, loc, scale = promote_args_inexact('gumbel_l.logcdf', x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_exp_z = lax.neg(lax.exp(z))
    log_cdf = lax.log(-lax.expm1(neg_exp_z))
    return jnp.where(ok, log_cdf, np.nan)


def _gumbel_l_cdf(x, loc=0, scale=1):
    """Gumbel Distribution (Left Skewed) cumulative density function (as jax.scipy.stats.gumbel_l.cdf)."""
    return lax.exp(_gumbel_l_logcdf(x, loc, scale))


def _gumbel_l_ppf(p, loc=0, scale=1):
    """Gumbel Distribution (Left Skewed) percent point function (inverse of CDF) (as jax.scipy.stats.gumbel_l.ppf)."""
    p, loc, scale = promote_args_inexact('gumbel_l.ppf', p, loc, scale)
    ok = lax.bitwise_and(lax.gt(p, _lax_const(p, 0)), lax.lt(p, _lax_const(p, 1)))
    t1 = xlog1py(-1, lax.neg(p))
    t = lax.mul(scale, lax.log(t1))
    quantile = lax.add(loc, t)
    return jnp.where(ok, quantile, np.nan)


def _gumbel_l_sf(x, loc=0, scale=1):
    """Gumbel Distribution (Left Skewed) survival function (as jax.scipy.stats.gumbel_l.sf)."""
    return jnp.exp(_gumbel_l_logsf(x, loc, scale))


def _gumbel_l_logsf(x, loc=0, scale=1):
    """Gumbel Distribution (Left Skewed) log survival function (as jax.scipy.stats.gumbel_l.logsf)."""
    x, loc, scale = promote_args_inexact('gumbel_l.logsf', x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    log_sf = lax.neg(lax.exp(z))
    return jnp.where(ok, log_sf, np.nan)


def _gumbel_r_logpdf(x, loc=0, scale=1):
    """Gumbel Distribution (Right Skewed) log probability distribution function (as jax.scipy.stats.gumbel_r.logpdf)."""
    x, loc, scale = promote_args_inexact('gumbel_r.logpdf', x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_log_scale = xlogy(-1, scale)
    t2 = lax.neg(lax.add(z, lax.exp(lax.neg(z))))
    log_pdf = lax.add(neg_log_scale, t2)
    return jnp.where(ok, log_pdf, np.nan)


def _gumbel_r_pdf(x, loc=0, scale=1):
    """Gumbel Distribution (Right Skewed) probability distribution function (as jax.scipy.stats.gumbel_r.pdf)."""
    return lax.exp(_gumbel_r_logpdf(x, loc, scale))


def _gumbel_r_logcdf(x, loc=0, scale=1):
    """Gumbel Distribution (Right Skewed) log cumulative density function (as jax.scipy.stats.gumbel_r.logcdf)."""
    x, loc, scale = promote_args_inexact('gumbel_r.logcdf', x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    log_cdf = lax.neg(lax.exp(lax.neg(z)))
    return jnp.where(ok, log_cdf, np.nan)


def _gumbel_r_cdf(x, loc=0, scale=1):
    """Gumbel Distribution (Right Skewed) cumulative density function (as jax.scipy.stats.gumbel_r.cdf)."""
    return lax.exp(_gumbel_r_logcdf(x, loc, scale))


def _gumbel_r_ppf(p, loc=0, scale=1):
    """Gumbel Distribution (Right Skewed) percent point function (as jax.scipy.stats.gumbel_r.ppf)."""
    p, loc, scale = promote_args_inexact('gumbel_r.ppf', p, loc, scale)
    ok = lax.bitwise_and(lax.gt(p, _lax_const(p, 0)), lax.lt(p, _lax_const(p, 1)))
    t1 = xlogy(-1, p)
    t = lax.mul(scale, lax.log(t1))
    quantile = lax.sub(loc, t)
    return jnp.where(ok, quantile, np.nan)


def _gumbel_r_sf(x, loc=0, scale=1):
    """Gumbel Distribution (Right Skewed) survival function (as jax.scipy.stats.gumbel_r.sf)."""
    x, loc, scale = promote_args_inexact('gumbel_r.sf', x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    t1 = lax.exp(lax.neg(lax.exp(neg_z)))
    _sf = lax.sub(_lax_const(x, 1), t1)
    return jnp.where(ok, _sf, np.nan)


def _gumbel_r_logsf(x, loc=0, scale=1):
    """Gumbel Distribution (Right Skewed) log survival function (as jax.scipy.stats.gumbel_r.logsf)."""
    x, loc, scale = promote_args_inexact('gumbel_r.logsf', x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    log_sf = log1mexp(lax.exp(neg_z))
    return jnp.where(ok, log_sf, np.nan)


def _logistic_ppf(x, loc=0, scale=1):
    """Logistic distribution percent point function (as jax.scipy.stats.logistic.ppf)."""
    x, loc, scale = promote_args_inexact('logistic.ppf', x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def _logistic_sf(x, loc=0, scale=1):
    """Logistic distribution survival function (as jax.scipy.stats.logistic.sf)."""
    x, loc, scale = promote_args_inexact('logistic.sf', x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def _logistic_isf(x, loc=0, scale=1):
    """Logistic distribution inverse survival function (as jax.scipy.stats.logistic.isf)."""
    x, loc, scale = promote_args_inexact('logistic.isf', x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)


def _multinomial_logpmf(x, n, p):
    """Multinomial log probability mass function (as jax.scipy.stats.multinomial.logpmf)."""
    p, = promote_args_inexact('multinomial.logpmf', p)
    x, n = promote_args_numeric('multinomial.logpmf', x, n)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise ValueError(f'x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}')
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    logprobs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return jnp.where(jnp.equal(jnp.sum(x), n), logprobs, -np.inf)


def _multinomial_pmf(x, n, p):
    """Multinomial probability mass function (as jax.scipy.stats.multinomial.pmf)."""
    return lax.exp(_multinomial_logpmf(x, n, p))


def _nbinom_logpmf(k, n, p, loc=0):
    """Negative-binomial log probability mass function (as jax.scipy.stats.nbinom.logpmf)."""
    k, n, p, loc = promote_args_inexact('nbinom.logpmf', k, n, p, loc)
    one = _lax_const(k, 1)
    y = lax.sub(k, loc)
    comb_term = lax.sub(lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one)))
    log_linear_term = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    log_probs = lax.add(comb_term, log_linear_term)
    return jnp.where(lax.lt(k, loc), -np.inf, log_probs)


def _nbinom_pmf(k, n, p, loc=0):
    """Negative-binomial probability mass function (as jax.scipy.stats.nbinom.pmf)."""
    return lax.exp(_nbinom_logpmf(k, n, p, loc))


def _pareto_cdf(x, b, loc=0, scale=1):
    """Pareto cumulative distribution function (as jax.scipy.stats.pareto.cdf)."""
    x, b, loc, scale = promote_args_inexact('pareto.cdf', x, b, loc, scale)
    one = _lax_const(x, 1)
    zero = _lax_const(x, 0)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    _pareto_cdf = lax.sub(one, lax.pow(scaled_x, lax.neg(b)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), zero, _pareto_cdf)


def _pareto_logcdf(x, b, loc=0, scale=1):
    """Pareto log cumulative distribution function (as jax.scipy.stats.pareto.logcdf)."""
    x, b, loc, scale = promote_args_inexact('pareto.logcdf', x, b, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    logcdf_val = lax.log1p(lax.neg(lax.pow(scaled_x, lax.neg(b))))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, logcdf_val)


def _pareto_logsf(x, b, loc=0, scale=1):
    """Pareto log survival function (as jax.scipy.stats.pareto.logsf)."""
    x, b, loc, scale = promote_args_inexact('pareto.logsf', x, b, loc, scale)
    zero = _lax_const(x, 0)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    logsf_val = lax.neg(lax.mul(b, lax.log(scaled_x)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), zero, logsf_val)


def _pareto_sf(x, b, loc=0, scale=1):
    """Pareto survival function (as jax.scipy.stats.pareto.sf)."""
    return lax.exp(_pareto_logsf(x, b, loc, scale))


def _pareto_ppf(q, b, loc=0, scale=1):
    """Pareto percent point function (inverse CDF) (as jax.scipy.stats.pareto.ppf)."""
    q, b, loc, scale = promote_args_inexact('pareto.ppf', q, b, loc, scale)
    one = _lax_const(q, 1)
    ppf_val = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, ppf_val)


def _poisson_logpmf(k, mu, loc=0):
    """poisson: logpmf."""
    k, mu, loc = promote_args_inexact('poisson.logpmf', k, mu, loc)
    zero = _lax_const(k, 0)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.ne(jnp.round(k), k)), -np.inf, log_probs)


def _poisson_pmf(k, mu, loc=0):
    """poisson: pmf."""
    return jnp.exp(_poisson_logpmf(k, mu, loc))


def _poisson_entropy(mu, loc=0):
    """Shannon entropy of the Poisson distribution (as jax.scipy.stats.poisson.entropy)."""
    mu, loc = ensure_arraylike('poisson.entropy', mu, loc)
    promoted_mu, promoted_loc = promote_dtypes_inexact(mu, loc)
    result_shape = jnp.broadcast_shapes(promoted_mu.shape, promoted_loc.shape)
    mu_flat = jnp.ravel(promoted_mu)
    zero_result = jnp.zeros_like(mu_flat)
    result = jnp.where(mu_flat == 0, zero_result, jnp.where(mu_flat < 10, _poisson_entropy_small_mu(mu_flat), jnp.where(mu_flat < 100, _poisson_entropy_medium_mu(mu_flat), _poisson_entropy_large_mu(mu_flat))))
    result_mu_shape = jnp.reshape(result, promoted_mu.shape)
    return jnp.broadcast_to(result_mu_shape, result_shape)


def _poisson_entropy_small_mu(mu):
    """poisson: _entropy_small_mu."""
    max_k = 35
    k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = _poisson_pmf(k, mu, 0)
    upper_bounds = jnp.ceil(mu + 20).astype(k.dtype)
    mask = k < upper_bounds[None, :]
    probs_masked = jnp.where(mask, probs, 0.0)
    return jnp.sum(entr(probs_masked), axis=0)


def _poisson_entropy_medium_mu(mu):
    """poisson: _entropy_medium_mu."""
    max_k = 250
    k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
    probs = _poisson_pmf(k, mu, 0)
    upper_bounds = jnp.ceil(mu + 10 * jnp.sqrt(mu) + 20).astype(k.dtype)
    mask = k < upper_bounds[None, :]
    probs_masked = jnp.where(mask, probs, 0.0)
    return jnp.sum(entr(probs_masked), axis=0)


def _poisson_entropy_large_mu(mu):
    """poisson: _entropy_large_mu."""
    return 0.5 * jnp.log(2 * np.pi * np.e * mu) - 1.0 / (12 * mu)


def _truncnorm_log_diff(x, y):
    """truncnorm: _log_diff."""
    return logsumexp(jnp.array([x, y]), b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]), axis=0)


def _truncnorm_log_gauss_mass(a, b):
    """truncnorm: _log_gauss_mass."""
    a, b = (jnp.array(a), jnp.array(b))
    a, b = jnp.broadcast_arrays(a, b)
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    a_tail = jnp.where(case_right, -b, a)
    b_tail = jnp.where(case_right, -a, b)
    mass_tail = _truncnorm_log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
    mass_central = jnp.log1p(-ndtr(a) - ndtr(-b))
    out = jnp.where(case_central, mass_central, mass_tail)
    return out


def _truncnorm_logpdf(x, a, b, loc=0, scale=1):
    """Truncated normal log probability distribution function (as jax.scipy.stats.truncnorm.logpdf)."""
    x, a, b, loc, scale = promote_args_inexact('truncnorm.logpdf', x, a, b, loc, scale)
    val = lax.sub(norm.logpdf(x, loc, scale), _truncnorm_log_gauss_mass(a, b))
    x_scaled = lax.div(lax.sub(x, loc), scale)
    val = jnp.where((x_scaled < a) | (x_scaled > b), -np.inf, val)
    val = jnp.where(a >= b, np.nan, val)
    return val


def _truncnorm_pdf(x, a, b, loc=0, scale=1):
    """Truncated normal probability distribution function (as jax.scipy.stats.truncnorm.pdf)."""
    return lax.exp(_truncnorm_logpdf(x, a, b, loc, scale))


def _truncnorm_logsf(x, a, b, loc=0, scale=1):
    """Truncated normal distribution log survival function (as jax.scipy.stats.truncnorm.logsf)."""
    x, a, b, loc, scale = promote_args_inexact('truncnorm.logsf', x, a, b, loc, scale)
    return _truncnorm_logcdf(-x, -b, -a, -loc, scale)


def _truncnorm_sf(x, a, b, loc=0, scale=1):
    """Truncated normal distribution survival function (as jax.scipy.stats.truncnorm.sf)."""
    return lax.exp(_truncnorm_logsf(x, a, b, loc, scale))


def _truncnorm_logcdf(x, a, b, loc=0, scale=1):
    """Truncated normal log cumulative distribution function (as jax.scipy.stats.truncnorm.logcdf)."""
    x, a, b, loc, scale = promote_args_inexact('truncnorm.logcdf', x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    x = lax.div(lax.sub(x, loc), scale)
    lgm_ab = _truncnorm_log_gauss_mass(a, b)
    _truncnorm_logcdf = _truncnorm_log_gauss_mass(a, x) - lgm_ab
    _truncnorm_logsf = _truncnorm_log_gauss_mass(x, b) - lgm_ab
    _truncnorm_logcdf = jnp.select([x >= b, x <= a, _truncnorm_logcdf > -0.1, x > a], [0, -np.inf, jnp.log1p(-jnp.exp(_truncnorm_logsf)), _truncnorm_logcdf])
    _truncnorm_logcdf = jnp.where(a >= b, np.nan, _truncnorm_logcdf)
    return _truncnorm_logcdf


def _truncnorm_cdf(x, a, b, loc=0, scale=1):
    """Truncated normal cumulative distribution function (as jax.scipy.stats.truncnorm.cdf)."""
    return lax.exp(_truncnorm_logcdf(x, a, b, loc, scale))


def _uniform_ppf(q, loc=0, scale=1):
    """Uniform distribution percent point function (as jax.scipy.stats.uniform.ppf)."""
    q, loc, scale = promote_args_inexact('uniform.ppf', q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, lax.add(loc, lax.mul(scale, q)))


def _vonmises_logpdf(x, kappa):
    """von Mises log probability distribution function (as jax.scipy.stats.vonmises.logpdf)."""
    x, kappa = promote_args_inexact('vonmises.logpdf', x, kappa)
    zero = _lax_const(kappa, 0)
    return jnp.where(lax.gt(kappa, zero), kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa)), np.nan)


def _vonmises_pdf(x, kappa):
    """von Mises probability distribution function (as jax.scipy.stats.vonmises.pdf)."""
    return lax.exp(_vonmises_logpdf(x, kappa))


def _wrapcauchy_logpdf(x, c):
    """Wrapped Cauchy log probability distribution function (as jax.scipy.stats.wrapcauchy.logpdf)."""
    x, c = promote_args_inexact('wrapcauchy.logpdf', x, c)
    return jnp.where(lax.gt(c, _lax_const(c, 0)) & lax.lt(c, _lax_const(c, 1)), jnp.where(lax.ge(x, _lax_const(x, 0)) & lax.le(x, _lax_const(x, np.pi * 2)), jnp.log(1 - c * c) - jnp.log(2 * np.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x)), -np.inf), np.nan)


def _wrapcauchy_pdf(x, c):
    """Wrapped Cauchy probability distribution function (as jax.scipy.stats.wrapcauchy.pdf)."""
    return lax.exp(_wrapcauchy_logpdf(x, c))


_st.bernoulli.ppf = _bernoulli_ppf
_st.beta.logcdf = _beta_logcdf
_st.beta.logsf = _beta_logsf
_st.beta.sf = _beta_sf
betabinom = _st._ns('betabinom', logpmf=_betabinom_logpmf, pmf=_betabinom_pmf)
_st.cauchy.cdf = _cauchy_cdf
_st.cauchy.isf = _cauchy_isf
_st.cauchy.logcdf = _cauchy_logcdf
_st.cauchy.logsf = _cauchy_logsf
_st.cauchy.ppf = _cauchy_ppf
_st.cauchy.sf = _cauchy_sf
_st.chi2.cdf = _chi2_cdf
_st.chi2.logcdf = _chi2_logcdf
_st.chi2.logsf = _chi2_logsf
_st.chi2.sf = _chi2_sf
_st.expon.logcdf = _expon_logcdf
_st.expon.logsf = _expon_logsf
_st.expon.ppf = _expon_ppf
_st.expon.sf = _expon_sf
_st.gamma.logcdf = _gamma_logcdf
_st.gamma.logsf = _gamma_logsf
_st.gamma.sf = _gamma_sf
gennorm = _st._ns('gennorm', cdf=_gennorm_cdf, logpdf=_gennorm_logpdf, pdf=_gennorm_pdf)
gumbel_l = _st._ns('gumbel_l', cdf=_gumbel_l_cdf, logcdf=_gumbel_l_logcdf, logpdf=_gumbel_l_logpdf, logsf=_gumbel_l_logsf, pdf=_gumbel_l_pdf, ppf=_gumbel_l_ppf, sf=_gumbel_l_sf)
gumbel_r = _st._ns('gumbel_r', cdf=_gumbel_r_cdf, logcdf=_gumbel_r_logcdf, logpdf=_gumbel_r_logpdf, logsf=_gumbel_r_logsf, pdf=_gumbel_r_pdf, ppf=_gumbel_r_ppf, sf=_gumbel_r_sf)
_st.logistic.isf = _logistic_isf
_st.logistic.ppf = _logistic_ppf
_st.logistic.sf = _logistic_sf
multinomial = _st._ns('multinomial', logpmf=_multinomial_logpmf, pmf=_multinomial_pmf)
nbinom = _st._ns('nbinom', logpmf=_nbinom_logpmf, pmf=_nbinom_pmf)
_st.pareto.cdf = _pareto_cdf
_st.pareto.logcdf = _pareto_logcdf
_st.pareto.logsf = _pareto_logsf
_st.pareto.ppf = _pareto_ppf
_st.pareto.sf = _pareto_sf
_st.poisson.entropy = _poisson_entropy
truncnorm = _st._ns('truncnorm', cdf=_truncnorm_cdf, logcdf=_truncnorm_logcdf, logpdf=_truncnorm_logpdf, logsf=_truncnorm_logsf, pdf=_truncnorm_pdf, sf=_truncnorm_sf)
_st.uniform.ppf = _uniform_ppf
vonmises = _st._ns('vonmises', logpdf=_vonmises_logpdf, pdf=_vonmises_pdf)
wrapcauchy = _st._ns('wrapcauchy', logpdf=_wrapcauchy_logpdf, pdf=_wrapcauchy_pdf)
