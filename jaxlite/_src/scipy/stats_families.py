"""Distribution families of jax.scipy.stats written for jaxlite from their textbook
densities (SciPy's parameterisations): betabinom, gennorm, gumbel_l, gumbel_r, multinomial,
nbinom, truncnorm, vonmises and wrapcauchy."""
from __future__ import annotations

import inspect

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact
from jaxlite._src.scipy import special as sp


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _c(v, like):
    return np.asarray(v, like.dtype)


def _exp_of(logf, doc="The density/mass: ``exp`` of the matching log function."):
    def f(*args, **kw):
        return _np().exp(logf(*args, **kw))
    f.__doc__ = doc
    f.__signature__ = inspect.signature(logf)
    f.__name__ = logf.__name__.replace("log", "", 1)
    return f


def _log1mexp(a):
    """``log(1 - exp(a))`` for a <= 0 (expm1 near 0, log1p far from it)."""
    jnp = _np()
    close = a > _c(-0.6931471805599453, a)
    a_close = jnp.where(close, a, _c(-1, a))
    a_far = jnp.where(close, _c(-1, a), a)
    return jnp.where(close, jnp.log(-jnp.expm1(a_close)), jnp.log1p(-jnp.exp(a_far)))


# ------------------------------------------------------------------------------ gumbel

def _gumbel_z(name, x, loc, scale):
    x, loc, scale = promote_args_inexact(name, x, loc, scale)
    return (x - loc) / scale, scale


def gumbel_r_logpdf(x, loc=0, scale=1):
    """Log-density of the right-skewed Gumbel distribution, ``-(z + exp(-z)) - log(scale)``."""
    jnp = _np()
    z, scale = _gumbel_z("gumbel_r.logpdf", x, loc, scale)
    return -(z + jnp.exp(-z)) - jnp.log(scale)


def gumbel_r_logcdf(x, loc=0, scale=1):
    """Log-CDF of the right-skewed Gumbel distribution, ``-exp(-z)``."""
    z, _ = _gumbel_z("gumbel_r.logcdf", x, loc, scale)
    return -_np().exp(-z)


def gumbel_r_cdf(x, loc=0, scale=1):
    """CDF of the right-skewed Gumbel distribution, ``exp(-exp(-z))``."""
    return _np().exp(gumbel_r_logcdf(x, loc, scale))


def gumbel_r_logsf(x, loc=0, scale=1):
    """Log survival function of the right-skewed Gumbel distribution."""
    return _log1mexp(gumbel_r_logcdf(x, loc, scale))


def gumbel_r_sf(x, loc=0, scale=1):
    """Survival function of the right-skewed Gumbel distribution, ``-expm1(-exp(-z))``."""
    return -_np().expm1(gumbel_r_logcdf(x, loc, scale))


def gumbel_r_ppf(p, loc=0, scale=1):
    """Quantile of the right-skewed Gumbel distribution, ``loc - scale log(-log p)``."""
    jnp = _np()
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    out = loc - scale * jnp.log(-jnp.log(p))
    return jnp.where(jnp.logical_or(p < 0, p > 1), _c(np.nan, p), out)


def gumbel_l_logpdf(x, loc=0, scale=1):
    """Log-density of the left-skewed Gumbel distribution, ``z - exp(z) - log(scale)``."""
    jnp = _np()
    z, scale = _gumbel_z("gumbel_l.logpdf", x, loc, scale)
    return z - jnp.exp(z) - jnp.log(scale)


def gumbel_l_logsf(x, loc=0, scale=1):
    """Log survival function of the left-skewed Gumbel distribution, ``-exp(z)``."""
    z, _ = _gumbel_z("gumbel_l.logsf", x, loc, scale)
    return -_np().exp(z)


def gumbel_l_sf(x, loc=0, scale=1):
    """Survival function of the left-skewed Gumbel distribution, ``exp(-exp(z))``."""
    return _np().exp(gumbel_l_logsf(x, loc, scale))


def gumbel_l_logcdf(x, loc=0, scale=1):
    """Log-CDF of the left-skewed Gumbel distribution."""
    return _log1mexp(gumbel_l_logsf(x, loc, scale))


def gumbel_l_cdf(x, loc=0, scale=1):
    """CDF of the left-skewed Gumbel distribution, ``-expm1(-exp(z))``."""
    return -_np().expm1(gumbel_l_logsf(x, loc, scale))


def gumbel_l_ppf(p, loc=0, scale=1):
    """Quantile of the left-skewed Gumbel distribution, ``loc + scale log(-log1p(-p))``."""
    jnp = _np()
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    out = loc + scale * jnp.log(-jnp.log1p(-p))
    return jnp.where(jnp.logical_or(p < 0, p > 1), _c(np.nan, p), out)


# ----------------------------------------------------------------------------- gennorm

def gennorm_logpdf(x, beta):
    """Log-density of the generalized normal distribution: ``log(beta / 2) - lgamma(1 /
    beta) - |x|**beta``."""
    from jaxlite._src.lax import elementwise as L
    from jaxlite._src.lax import special as ls
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return L.log(0.5 * beta) - ls.lgamma(1 / beta) - L.abs(x) ** beta


def gennorm_cdf(x, beta):
    """CDF of the generalized normal distribution: ``(1 + sign(x) igamma(1 / beta,
    |x|**beta)) / 2``."""
    from jaxlite._src.lax import elementwise as L
    from jaxlite._src.lax import special as ls
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + L.sign(x) * ls.igamma(1 / beta, L.abs(x) ** beta))


# ------------------------------------------------------------------ vonmises/wrapcauchy

def vonmises_logpdf(x, kappa):
    """Log-density of the von Mises distribution: ``kappa (cos x - 1) - log(2 pi
    i0e(kappa))`` (NaN for kappa <= 0; as JAX, no wrapping of x)."""
    from jaxlite._src.lax import elementwise as L
    from jaxlite._src.lax import special as ls
    jnp = _np()
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    zero = _c(0, kappa)
    return jnp.where(L.gt(kappa, zero),
                     kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * ls.bessel_i0e(kappa)),
                     np.nan)


def wrapcauchy_logpdf(x, c):
    """Log-density of the wrapped Cauchy distribution on ``[0, 2 pi]`` (-inf outside, NaN
    for ``c`` outside (0, 1))."""
    from jaxlite._src.lax import elementwise as L
    jnp = _np()
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    c_ok = L.gt(c, _c(0, c)) & L.lt(c, _c(1, c))
    inside = L.ge(x, _c(0, x)) & L.le(x, _c(np.pi * 2, x))
    return jnp.where(
        c_ok,
        jnp.where(inside, jnp.log(1 - c * c) - jnp.log(2 * np.pi)
                  - jnp.log(1 + c * c - 2 * c * jnp.cos(x)), -np.inf),
        np.nan)


# ------------------------------------------------------------- discrete: nbinom/betabinom

def nbinom_logpmf(k, n, p, loc=0):
    """Log-pmf of the negative binomial distribution (failures ``k`` before the ``n``-th
    success): ``log C(k + n - 1, k) + n log p + k log(1 - p)``, -inf below ``loc`` (JAX's
    composition; non-integer ``k`` are not rejected, as JAX)."""
    from jaxlite._src.lax import elementwise as L
    jnp = _np()
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = _c(1, k)
    y = L.sub(k, loc)
    comb_term = L.sub(L.sub(sp.gammaln(L.add(y, n)), sp.gammaln(n)), sp.gammaln(L.add(y, one)))
    log_linear_term = L.add(sp.xlogy(n, p), sp.xlogy(y, L.sub(one, p)))
    log_probs = L.add(comb_term, log_linear_term)
    return jnp.where(L.lt(k, loc), -np.inf, log_probs)


def betabinom_logpmf(k, n, a, b, loc=0):
    """Log-pmf of the beta-binomial distribution at ``floor(k)``: ``-log1p(n) - betaln(n - y
    + 1, y + 1) + betaln(y + a, n - y + b) - betaln(a, b)``; -inf outside the support, NaN
    for negative ``n`` or non-positive ``a``, ``b`` (JAX's composition)."""
    from jaxlite._src.lax import elementwise as L
    jnp = _np()
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = L.sub(L.floor(k), loc)
    one, zero = _c(1, y), _c(0, y)
    combiln = L.neg(L.add(L.log1p(n), sp.betaln(L.add(L.sub(n, y), one), L.add(y, one))))
    beta_lns = L.sub(sp.betaln(L.add(y, a), L.add(L.sub(n, y), b)), sp.betaln(a, b))
    log_probs = L.add(combiln, beta_lns)
    log_probs = jnp.where(jnp.logical_and(L.eq(y, zero), L.eq(n, zero)), 0.0, log_probs)
    y_cond = jnp.logical_or(jnp.logical_or(L.lt(y, L.neg(loc)), L.gt(y, n)),
                            L.le(L.add(y, a), zero))
    log_probs = jnp.where(y_cond, -np.inf, log_probs)
    n_a_b_cond = jnp.logical_or(jnp.logical_or(L.lt(n, zero), L.le(a, zero)), L.le(b, zero))
    return jnp.where(n_a_b_cond, np.nan, log_probs)


def multinomial_logpmf(x, n, p):
    """Log-pmf of the multinomial distribution over the last axis:
    ``log n! + sum(x log p - log x!)``; -inf unless the counts add up to ``n``."""
    jnp = _np()
    x, n, p = promote_args_inexact("multinomial.logpmf", x, n, p)
    val = sp.gammaln(n + 1) + jnp.sum(sp.xlogy(x, p) - sp.gammaln(x + 1), axis=-1)
    return jnp.where(jnp.sum(x, axis=-1) == n, val, _c(-np.inf, val))


# ----------------------------------------------------------------------------- truncnorm

def _log_diff(x, y):
    """``log(exp(x) - exp(y))`` as ``logsumexp([x, y], b=[1, -1])`` (JAX's)."""
    from jaxlite._src.nn.functions import logsumexp
    jnp = _np()
    return logsumexp(jnp.array([x, y]), b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]),
                     axis=0)


def _log_gauss_mass(a, b):
    """``log(Phi(b) - Phi(a))`` for a <= b: from log_ndtr on the side away from the bulk
    in the tails, ``log1p(-ndtr(a) - ndtr(-b))`` around the centre (JAX's)."""
    jnp = _np()
    a, b = jnp.array(a), jnp.array(b)
    a, b = jnp.broadcast_arrays(a, b)
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    a_tail = jnp.where(case_right, -b, a)
    b_tail = jnp.where(case_right, -a, b)
    mass_tail = _log_diff(sp.log_ndtr(b_tail), sp.log_ndtr(a_tail))
    mass_central = jnp.log1p(-sp.ndtr(a) - sp.ndtr(-b))
    return jnp.where(case_central, mass_central, mass_tail)


def truncnorm_logpdf(x, a, b, loc=0, scale=1):
    """Log-density of the normal distribution truncated to standardized ``[a, b]`` (-inf
    outside, NaN for a >= b)."""
    from jaxlite._src.lax import elementwise as L
    from jaxlite._src.scipy.stats_extra import norm_logpdf
    jnp = _np()
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = L.sub(norm_logpdf(x, loc, scale), _log_gauss_mass(a, b))
    x_scaled = L.div(L.sub(x, loc), scale)
    val = jnp.where((x_scaled < a) | (x_scaled > b), -np.inf, val)
    return jnp.where(a >= b, np.nan, val)


def truncnorm_logcdf(x, a, b, loc=0, scale=1):
    """Log-CDF of the truncated normal distribution (``log1p(-exp(logsf))`` where the CDF
    is near 1; NaN for a >= b)."""
    from jaxlite._src.lax import elementwise as L
    jnp = _np()
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    x = L.div(L.sub(x, loc), scale)
    lgm_ab = _log_gauss_mass(a, b)
    logcdf = _log_gauss_mass(a, x) - lgm_ab
    logsf = _log_gauss_mass(x, b) - lgm_ab
    logcdf = jnp.select([x >= b, x <= a, logcdf > -0.1, x > a],
                        [0, -np.inf, jnp.log1p(-jnp.exp(logsf)), logcdf])
    return jnp.where(a >= b, np.nan, logcdf)


def truncnorm_logsf(x, a, b, loc=0, scale=1):
    """Log survival function: ``logcdf(-x, -b, -a, -loc, scale)``."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return truncnorm_logcdf(-x, -b, -a, -loc, scale)


def truncnorm_cdf(x, a, b, loc=0, scale=1):
    """CDF of the truncated normal distribution."""
    from jaxlite._src.lax import elementwise as L
    return L.exp(truncnorm_logcdf(x, a, b, loc, scale))


def truncnorm_sf(x, a, b, loc=0, scale=1):
    """Survival function of the truncated normal distribution."""
    from jaxlite._src.lax import elementwise as L
    return L.exp(truncnorm_logsf(x, a, b, loc, scale))


gumbel_r_pdf = _exp_of(gumbel_r_logpdf)
gumbel_l_pdf = _exp_of(gumbel_l_logpdf)
gennorm_pdf = _exp_of(gennorm_logpdf)
vonmises_pdf = _exp_of(vonmises_logpdf)
wrapcauchy_pdf = _exp_of(wrapcauchy_logpdf)
nbinom_pmf = _exp_of(nbinom_logpmf)
betabinom_pmf = _exp_of(betabinom_logpmf)
multinomial_pmf = _exp_of(multinomial_logpmf)
truncnorm_pdf = _exp_of(truncnorm_logpdf)
