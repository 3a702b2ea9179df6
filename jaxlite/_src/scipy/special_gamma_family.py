"""Closed-form special functions built on log-gamma and logarithms: gammasgn, loggamma,
factorial, comb, beta, poch, boxcox, boxcox1p, kl_div, rel_entr and the Bernoulli numbers.

Written for jaxlite from the textbook definitions (DLMF 5.2, 5.12, 24.2) with SciPy's
conventions for the edge cases (poles, zeros, out-of-domain arguments)."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["gammasgn", "loggamma", "factorial", "comb", "beta", "poch", "boxcox", "boxcox1p",
           "kl_div", "rel_entr", "bernoulli"]


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _lgam(x):
    from jaxlite._src.lax import special as ls
    return ls.lgamma(x)


def _c(v, like):
    return np.asarray(v, like.dtype)


def _is_nonpos_int(x):
    jnp = _np()
    return jnp.logical_and(x <= 0, jnp.floor(x) == x)


@jit
def gammasgn(x):
    """Sign of the gamma function: 1 for x > 0 and +0 (and +inf), -1 for -0 and between the
    poles ``(-2k-1, -2k)``, NaN at the poles (negative integers, -inf) and for NaN
    (JAX's ``jnp.select`` over the two conditions)."""
    from jaxlite._src.lax import elementwise as lax
    jnp = _np()
    (x,) = promote_args_inexact("gammasgn", x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise ValueError("gammasgn does not support complex-valued inputs.")
    typ = x.dtype.type
    floor_x = lax.floor(x)
    x_negative = x < 0
    return jnp.select(
        [(x_negative & (x == floor_x)) | jnp.isnan(x),
         (x_negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))],
        [typ(np.nan), typ(-1.0)], typ(1.0))


def loggamma(x):
    """Principal branch of log(Gamma(x)) for real ``x``: ``gammaln(x)`` for x > 0 and NaN
    elsewhere (JAX's real branch: also at 0)."""
    jnp = _np()
    (x,) = promote_args_inexact("loggamma", x)
    if jnp.iscomplexobj(x):
        raise NotImplementedError("loggamma of complex arguments is not implemented")
    res = _lgam(x)
    return jnp.where(x > 0, res, jnp.nan)


def factorial(n, exact=False):
    """``n!`` as ``exp(gammaln(n + 1))`` (0 for negative ``n``); ``exact=True`` is not
    supported (as in JAX)."""
    jnp = _np()
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = promote_args_inexact("factorial", n)
    from jaxlite._src.lax import elementwise as lax
    return jnp.where(n < 0, 0, lax.exp(_lgam(n + 1)))


def comb(N, k, *, repetition=False):
    """Number of combinations ``N choose k`` (``exp`` of log-gamma differences; 0 outside
    ``0 <= k <= N``); ``repetition=True`` counts multisets, ``comb(N + k - 1, k)`` (1 for
    ``k == 0 <= N``). JAX's composition."""
    from jaxlite._src.lax import elementwise as lax
    jnp = _np()
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        cond = (k == 0) & (N >= 0)
        return jnp.where(cond, 1.0, comb(N + k - 1, k, repetition=False))
    cond = (k <= N) & (N >= 0) & (k >= 0)
    safe_N = jnp.where(cond, N, 0.0)
    safe_k = jnp.where(cond, k, 0.0)
    result = lax.exp(_lgam(safe_N + 1) - _lgam(safe_k + 1) - _lgam(safe_N + 1 - safe_k))
    return jnp.where(cond, result, 0.0)


def beta(a, b):
    """The beta function: the sign from gammasgn, the magnitude ``exp(betaln(a, b))`` (as
    JAX)."""
    from jaxlite._src.lax import elementwise as lax
    from jaxlite._src.scipy.special_xlogy import betaln
    a, b = promote_args_inexact("beta", a, b)
    if np.issubdtype(a.dtype, np.complexfloating):
        raise ValueError("beta does not support complex-valued inputs.")
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def poch(z, m):
    """Pochhammer's rising factorial ``(z)_m = Gamma(z + m) / Gamma(z)``; 1 for m = 0; at
    poles of both gammas (z and z + m non-positive integers) the limit
    ``(-1)^m Gamma(1 - z) / Gamma(1 - z - m)``; 0 when only ``Gamma(z)`` has a pole and
    infinite when only ``Gamma(z + m)`` has one."""
    jnp = _np()
    z, m = promote_args_inexact("poch", z, m)
    zm = z + m
    pz, pzm = _is_nonpos_int(z), _is_nonpos_int(zm)
    both = jnp.logical_and(pz, pzm)
    # generic: sign and exp of the log-gamma difference
    zs = jnp.where(pz, _c(0.5, z), z)
    zms = jnp.where(pzm, _c(0.5, z), zm)
    generic = gammasgn(zms) * gammasgn(zs) * jnp.exp(_lgam(zms) - _lgam(zs))
    # reflection when both are poles (then m is an integer and 1 - z, 1 - z - m >= 1)
    a = jnp.where(both, 1 - z, _c(1, z))
    b = jnp.where(both, 1 - zm, _c(1, z))
    parity = jnp.where(jnp.remainder(jnp.where(both, m, _c(0, m)), 2) != 0, _c(-1, z),
                       _c(1, z))
    reflected = parity * jnp.exp(_lgam(a) - _lgam(b))
    out = jnp.where(both, reflected,
                    jnp.where(pz, _c(0, z), jnp.where(pzm, _c(np.inf, z), generic)))
    return jnp.where(m == 0, _c(1, z), out)


def boxcox(x, lmbda):
    """Box-Cox transform: ``expm1(lmbda * log(x)) / lmbda`` (``log(x)`` for
    ``lmbda == 0``)."""
    jnp = _np()
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    lmbda_is_zero = lmbda == 0
    safe_lmbda = jnp.where(lmbda_is_zero, jnp.ones_like(lmbda), lmbda)
    log_x = jnp.log(x)
    power_branch = jnp.expm1(safe_lmbda * log_x) / safe_lmbda
    return jnp.where(lmbda_is_zero, log_x, power_branch)


def boxcox1p(x, lmbda):
    """Box-Cox transform of ``1 + x``: ``expm1(lmbda * log1p(x)) / lmbda`` (``log1p(x)`` for
    ``lmbda == 0``)."""
    jnp = _np()
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    lmbda_is_zero = lmbda == 0
    safe_lmbda = jnp.where(lmbda_is_zero, jnp.ones_like(lmbda), lmbda)
    log1p_x = jnp.log1p(x)
    power_branch = jnp.expm1(safe_lmbda * log1p_x) / safe_lmbda
    return jnp.where(lmbda_is_zero, log1p_x, power_branch)


def rel_entr(p, q):
    """Elementwise relative entropy: ``xlogx(p) - xlogy(p, q)`` for p, q > 0, 0 for p == 0 <=
    q, and infinity otherwise (JAX's composition)."""
    from jaxlite._src.lax import elementwise as lax
    from jaxlite._src.scipy.special_xlogy import _xlogx, xlogy
    jnp = _np()
    p, q = promote_args_inexact("rel_entr", p, q)
    if np.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("rel_entr does not support complex-valued inputs.")
    zero = _c(0.0, p)
    both_gt_zero_mask = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    one_zero_mask = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p = jnp.where(both_gt_zero_mask, p, 1)
    safe_q = jnp.where(both_gt_zero_mask, q, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_gt_zero_mask, log_val, jnp.where(one_zero_mask, zero, np.inf))


def kl_div(p, q):
    """Elementwise Kullback-Leibler term ``rel_entr(p, q) - p + q`` (as JAX)."""
    p, q = promote_args_inexact("kl_div", p, q)
    if np.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("kl_div does not support complex-valued inputs.")
    return rel_entr(p, q) - p + q


def _zeta_int(s):
    """Riemann zeta at an even integer s >= 4 in float64: partial sum (smallest terms first)
    plus the Euler-Maclaurin tail ``N^(1-s)/(s-1) + N^-s/2 + s N^(-s-1)/12``."""
    n = 1000
    head = sum(float(j) ** -s for j in range(n - 1, 0, -1))
    return head + n ** (1.0 - s) / (s - 1) + 0.5 * n ** -float(s) + s * n ** (-s - 1.0) / 12


def bernoulli(n):
    """The first ``n + 1`` Bernoulli numbers ``B_0 .. B_n`` (``B_1 = -1/2``), from
    ``B_2k = (-1)^(k+1) 2 (2k)! zeta(2k) / (2 pi)^(2k)`` and ``B_odd = 0`` for odd > 1."""
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.core import dtypes
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        try:
            n = int(np.asarray(n))
        except Exception:
            raise TypeError("bernoulli: n must be a concrete integer") from None
    n = int(n)
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    vals = np.zeros(n + 1, np.float64)
    vals[0] = 1.0
    if n >= 1:
        vals[1] = -0.5
    for k in range(2, n + 1, 2):
        z = math.pi ** 2 / 6 if k == 2 else _zeta_int(k)
        try:
            logmag = math.log(2.0) + math.lgamma(k + 1) + math.log(z) - k * math.log(2 * math.pi)
            mag = math.exp(logmag)
        except OverflowError:
            mag = math.inf
        vals[k] = mag if (k // 2) % 2 == 1 else -mag
    return jnp.asarray(vals, dtype=dtypes.canonicalize_dtype(np.float64))
