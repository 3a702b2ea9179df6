"""Kummer's confluent hypergeometric function ``1F1(a; b; x)``, written for jaxlite from
DLMF 13.2.2 (power series ``sum (a)_k / (b)_k x^k / k!``), Kummer's transformation
``M(a, b, x) = e^x M(b - a, b, -x)`` (DLMF 13.2.39) so the series is summed at x >= 0, and
the large-argument expansion
``M ~ Gamma(b)/Gamma(a) e^x x^(a-b) sum_k (b-a)_k (1-a)_k / k! x^-k`` (DLMF 13.7.2)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["hyp1f1"]

_SERIES_TERMS = 200
_ASYM_FROM = 60.0
_ASYM_TERMS = 30


def hyp1f1(a, b, x):
    """Confluent hypergeometric function of the first kind ``M(a, b, x) = 1F1(a; b; x)``
    for real arguments (series for |x| <= 60, asymptotic expansion beyond)."""
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.scipy.special_basic import gammaln
    from jaxlite._src.scipy.special_gamma_family import gammasgn
    a, b, x = promote_args_inexact("hyp1f1", a, b, x)
    a, b, x = jnp.broadcast_arrays(a, b, x)
    dt = x.dtype
    one = np.asarray(1, dt)
    neg = x < 0
    # a non-positive integer: a terminating polynomial, summed directly at any x
    poly = jnp.logical_and(a <= 0, jnp.floor(a) == a)
    flip = jnp.logical_and(neg, jnp.logical_not(poly))
    aa = jnp.where(flip, b - a, a)
    xx = jnp.where(flip, -x, x)
    far = jnp.logical_and(jnp.abs(xx) > _ASYM_FROM, jnp.logical_not(poly))
    xs = jnp.where(far, one, xx)
    term, total = jnp.ones_like(xs), jnp.ones_like(xs)
    for k in range(_SERIES_TERMS):
        term = term * (aa + k) / (b + k) * xs / (k + 1)
        total = total + term
    series = jnp.where(flip, jnp.exp(x) * total, total)
    # asymptotic (x -> +inf after the flip): e^xx xx^(aa-b) Gamma(b)/Gamma(aa) S
    xl = jnp.where(far, xx, np.asarray(2 * _ASYM_FROM, dt))
    t, s = jnp.ones_like(xl), jnp.ones_like(xl)
    for k in range(_ASYM_TERMS):
        t = t * (b - aa + k) * (1 - aa + k) / ((k + 1) * xl)
        s = s + t
    aa_s = jnp.where(far, aa, one)
    logmag = gammaln(b) - gammaln(aa_s) + xl + (aa_s - b) * jnp.log(xl)
    # after the flip the prefactor e^x cancels the expansion's e^(-x)
    asym = gammasgn(b) * gammasgn(aa_s) * s * jnp.exp(jnp.where(flip, logmag - xl, logmag))
    out = jnp.where(far, asym, series)
    bad_b = jnp.logical_and(b <= 0, jnp.floor(b) == b)
    return jnp.where(bad_b, np.asarray(np.nan, dt), out)
