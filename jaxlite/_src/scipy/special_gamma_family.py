"""Closed-form special functions built on log-gamma and logarithms: gammasgn, loggamma,
factorial, comb, beta, poch, boxcox, boxcox1p, kl_div, rel_entr and the Bernoulli numbers.

Written for jaxlite from the textbook definitions (DLMF 5.2, 5.12, 24.2) with SciPy's
conventions for the edge cases (poles, zeros, out-of-domain arguments)."""
from __future__ import annotations

import math

import numpy as np

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
    """Principal branch of log(Gamma(x)) for real ``x``: ``gammaln(x)`` for x >= 0 and NaN
    for negative x (where the real result would be complex)."""
    jnp = _np()
    (x,) = promote_args_inexact("loggamma", x)
    if jnp.iscomplexobj(x):
        raise NotImplementedError("loggamma of complex arguments is not implemented")
    safe = jnp.where(x < 0, _c(1, x), x)
    return jnp.where(x < 0, _c(np.nan, x), _lgam(safe))


def factorial(n, exact=False):
    """``n!`` as ``Gamma(n + 1)`` (0 for negative ``n``); ``exact=True`` is not supported
    (as in JAX)."""
    jnp = _np()
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = promote_args_inexact("factorial", n)
    safe = jnp.where(n < 0, _c(0, n), n)
    return jnp.where(n < 0, _c(0, n), jnp.exp(_lgam(safe + 1)))


def comb(N, k, *, repetition=False):
    """Number of combinations ``N choose k`` (``exp`` of log-gamma differences; 0 outside
    ``0 <= k <= N``); ``repetition=True`` counts multisets, ``comb(N + k - 1, k)``."""
    jnp = _np()
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        N = N + k - 1
        # SciPy: choosing zero items from an empty set with repetition is one way
        zero = jnp.logical_and(k == 0, N == -1)
    else:
        zero = None
    ok = jnp.logical_and(jnp.logical_and(k >= 0, N >= 0), k <= N)
    Ns = jnp.where(ok, N, _c(1, N))
    ks = jnp.where(ok, k, _c(0, k))
    val = jnp.exp(_lgam(Ns + 1) - _lgam(ks + 1) - _lgam(Ns - ks + 1))
    out = jnp.where(ok, val, _c(0, N))
    if zero is not None:
        out = jnp.where(zero, _c(1, N), out)
    return out


def beta(a, b):
    """The beta function ``Gamma(a) Gamma(b) / Gamma(a + b)`` (sign from gammasgn, magnitude
    from log-gamma)."""
    jnp = _np()
    a, b = promote_args_inexact("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    mag = jnp.exp(_lgam(a) + _lgam(b) - _lgam(a + b))
    return sign * mag


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
    """Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log(x)`` for ``lmbda == 0``), computed
    as ``expm1(lmbda * log(x)) / lmbda``."""
    jnp = _np()
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    lx = jnp.log(x)
    lsafe = jnp.where(lmbda == 0, _c(1, lmbda), lmbda)
    return jnp.where(lmbda == 0, lx, jnp.expm1(lsafe * lx) / lsafe)


def boxcox1p(x, lmbda):
    """Box-Cox transform of ``1 + x``: ``((1 + x)**lmbda - 1) / lmbda`` (``log1p(x)`` for
    ``lmbda == 0``)."""
    jnp = _np()
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    lx = jnp.log1p(x)
    lsafe = jnp.where(lmbda == 0, _c(1, lmbda), lmbda)
    return jnp.where(lmbda == 0, lx, jnp.expm1(lsafe * lx) / lsafe)


def _xlogx_over(p, q):
    """``p * log(p / q)`` on p > 0, q > 0 (other entries get a harmless dummy)."""
    jnp = _np()
    good = jnp.logical_and(p > 0, q > 0)
    ps = jnp.where(good, p, _c(1, p))
    qs = jnp.where(good, q, _c(1, q))
    return good, ps * jnp.log(ps / qs)


def rel_entr(p, q):
    """Elementwise relative entropy: ``p log(p/q)`` for p, q > 0, 0 for p == 0 <= q, and
    infinity otherwise."""
    jnp = _np()
    p, q = promote_args_inexact("rel_entr", p, q)
    good, val = _xlogx_over(p, q)
    zero = jnp.logical_and(p == 0, q >= 0)
    out = jnp.where(good, val, jnp.where(zero, _c(0, p), _c(np.inf, p)))
    return jnp.where(jnp.isnan(p) | jnp.isnan(q), _c(np.nan, p), out)


def kl_div(p, q):
    """Elementwise Kullback-Leibler term ``p log(p/q) - p + q`` for p, q > 0; ``q`` for
    p == 0 <= q; infinity otherwise."""
    jnp = _np()
    p, q = promote_args_inexact("kl_div", p, q)
    good, val = _xlogx_over(p, q)
    zero = jnp.logical_and(p == 0, q >= 0)
    out = jnp.where(good, val - p + q, jnp.where(zero, q, _c(np.inf, p)))
    return jnp.where(jnp.isnan(p) | jnp.isnan(q), _c(np.nan, p), out)


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
