"""Gauss's hypergeometric function ``2F1(a, b; c; x)`` for real arguments, written for
jaxlite from DLMF 15: the power series ``sum (a)_k (b)_k / ((c)_k k!) x^k`` (15.2.1), Pfaff's
transformation ``F(a, b; c; x) = (1 - x)^-a F(a, c - b; c; x / (x - 1))`` (15.8.1) for
x < 0, the connection formula in ``1 - x`` (15.8.4) near x = 1 (interpolated in ``c`` when
``c - a - b`` is at or near an integer, where its terms have cancelling poles), and Gauss's sum ``Gamma(c) Gamma(c-a-b) / (Gamma(c-a) Gamma(c-b))`` at x = 1."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["hyp2f1"]

_NEAR_ONE = 0.9         # beyond this (after Pfaff) use the 1 - x connection formula
_SHORT_TERMS = 500      # series at |z| <= 0.9: 0.9^500 ~ 1e-23


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _series(a, b, c, z, nterms):
    """Partial sum of the hypergeometric series (a fori_loop over the terms)."""
    from jaxlite._src.lax.control_flow import fori_loop
    jnp = _np()

    def body(k, carry):
        term, total = carry
        kf = k.astype(z.dtype) if hasattr(k, "astype") else np.asarray(k, z.dtype)
        den = (c + kf) * (kf + 1)
        # once a terminating series has hit zero, a later zero of (c)_k must not give 0/0
        den = jnp.where(den == 0, np.asarray(1, z.dtype), den)
        term = term * (a + kf) * (b + kf) / den * z
        return term, total + term
    one = jnp.ones_like(z)
    return fori_loop(0, nterms, body, (one, one))[1]


def _rgamma(x):
    """``1 / Gamma(x)`` (0 at the poles)."""
    from jaxlite._src.scipy.special_basic import gammaln
    from jaxlite._src.scipy.special_gamma_family import gammasgn
    jnp = _np()
    pole = jnp.logical_and(x <= 0, jnp.floor(x) == x)
    xs = jnp.where(pole, np.asarray(1, x.dtype), x)
    return jnp.where(pole, np.asarray(0, x.dtype), gammasgn(xs) * jnp.exp(-gammaln(xs)))


def _gamma(x):
    from jaxlite._src.scipy.special_basic import gammaln
    from jaxlite._src.scipy.special_gamma_family import gammasgn
    return gammasgn(x) * _np().exp(gammaln(x))


def _nonpos_int(v):
    jnp = _np()
    return jnp.logical_and(v <= 0, jnp.floor(v) == v)


def _connection(a, b, c, w, use):
    """DLMF 15.8.4 with ``w = 1 - x``: ``Gamma(c) Gamma(d) / (Gamma(c-a) Gamma(c-b))
    F(a, b; 1 - d; w) + w^d Gamma(c) Gamma(-d) / (Gamma(a) Gamma(b)) F(c-a, c-b; d+1; w)``,
    d = c - a - b (entries with ``use`` False get harmless values)."""
    jnp = _np()
    d = jnp.where(use, c - a - b, np.asarray(0.5, w.dtype))
    t1 = _gamma(c) * _gamma(d) * _rgamma(c - a) * _rgamma(c - b) * \
        _series(a, b, 1 - d, w, _SHORT_TERMS // 4)
    t2 = jnp.exp(d * jnp.log(w)) * _gamma(c) * _gamma(-d) * _rgamma(a) * _rgamma(b) * \
        _series(c - a, c - b, d + 1, w, _SHORT_TERMS // 4)
    return t1 + t2


def hyp2f1(a, b, c, x):
    """Gauss hypergeometric function ``2F1(a, b; c; x)`` for real ``x <= 1`` (infinite for
    x > 1, on the branch cut, as SciPy and JAX); infinite when ``c`` is a pole not cancelled by a terminating
    ``a`` or ``b``."""
    jnp = _np()
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
    dt = x.dtype
    zero, one = np.asarray(0, dt), np.asarray(1, dt)
    # a terminating series (a or b a non-positive integer) is summed as it stands
    poly = jnp.logical_or(_nonpos_int(a), _nonpos_int(b))
    order = jnp.where(_nonpos_int(a), -a, jnp.where(_nonpos_int(b), -b, np.inf))
    order = jnp.minimum(order, jnp.where(_nonpos_int(b), -b, np.inf))
    c_pole = jnp.logical_and(_nonpos_int(c), jnp.logical_not(
        jnp.logical_and(poly, order < -c)))
    # Pfaff for x < 0: z = x/(x-1) in (0, 1), (1 - x)^-a F(a, c - b; c; z)
    neg = jnp.logical_and(x < 0, jnp.logical_not(poly))
    xneg = jnp.where(neg, x, zero)
    z = jnp.where(neg, xneg / (xneg - 1), x)
    bb = jnp.where(neg, c - b, b)
    pref = jnp.where(neg, jnp.exp(-a * jnp.log1p(-xneg)), one)
    near = jnp.logical_and(z > _NEAR_ONE, jnp.logical_not(poly))
    d = c - a - bb
    # direct series (|z| <= 0.9 or terminating)
    zs = jnp.where(near, zero, jnp.where(z > 1, zero, z))
    direct = _series(a, bb, c, zs, _SHORT_TERMS)
    # 1 - z connection formula. For c - a - b within eps of an integer (where its two terms
    # have nearly cancelling poles) it is evaluated at c' +- eps, c' +- 2 eps around the c' that
    # makes c' - a - b an exact integer, and the cubic through those four values is read off
    # at c (Lagrange interpolation; error O(eps^4)).
    w = jnp.where(near, 1 - z, np.asarray(0.05, dt))
    eps = np.asarray(2e-3 if dt == np.float64 else 5e-2, dt)
    delta = d - jnp.round(d)
    close = jnp.abs(delta) < eps
    plain, pert = near & ~close, near & close
    conn = _connection(a, bb, c, w, plain)
    c0 = c - jnp.where(pert, delta, zero)
    t = jnp.where(pert, delta, zero)
    interp = jnp.zeros_like(z)
    nodes = (-2.0, -1.0, 1.0, 2.0)
    for j, nj in enumerate(nodes):
        weight = one
        for k, nk in enumerate(nodes):
            if k != j:
                weight = weight * (t - nk * eps) / ((nj - nk) * eps)
        interp = interp + weight * _connection(a, bb, c0 + nj * eps, w, pert)
    connected = jnp.where(close, interp, conn)
    val = pref * jnp.where(near, connected, direct)
    # x == 1: Gauss's sum (finite only for c - a - b > 0)
    at1 = jnp.logical_and(x == 1, jnp.logical_not(poly))
    d1 = jnp.where(at1, c - a - b, one)
    gauss = jnp.where(d1 > 0, _gamma(c) * _gamma(d1) * _rgamma(c - a) * _rgamma(c - b),
                      np.asarray(np.inf, dt))
    out = jnp.where(at1, gauss, val)
    out = jnp.where(jnp.logical_and(x > 1, jnp.logical_not(poly)), np.asarray(np.inf, dt),
                    out)
    return jnp.where(c_pole, np.asarray(np.inf, dt), out)
