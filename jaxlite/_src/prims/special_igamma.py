"""The derivative of the regularized incomplete gamma function with respect to ``a``
(JAX's ``lax.igamma_grad_a``), computed in float64 with NumPy:

- for ``x < a + 1`` from the power series ``P = x^a e^-x / Gamma(a+1) * sum_n c_n`` with
  ``c_n = x^n / ((a+1)...(a+n))``, carrying ``dc_n/da`` along the recursion;
- otherwise from Legendre's continued fraction of ``Q = 1 - P`` (modified Lentz), with
  every quantity of the recursion carried with its derivative in ``a`` (forward mode), and
  ``dP/da = -dQ/da``.
"""
from __future__ import annotations

import numpy as np

__all__ = ["igamma_grad_a_np"]

_MAX_ITER = 10000
_EPS = 1e-16
_TINY = 1e-300


def _series(a, x):
    from scipy.special import gammaln, digamma
    c = np.ones_like(a)
    dc = np.zeros_like(a)
    s, ds = c.copy(), dc.copy()
    active = np.ones(a.shape, bool)
    for n in range(1, _MAX_ITER):
        r = x / (a + n)
        dc = np.where(active, r * (dc - c / (a + n)), 0.0)
        c = np.where(active, c * r, 0.0)
        s = s + c
        ds = ds + dc
        active &= (np.abs(c) > _EPS * np.abs(s)) | (np.abs(dc) > _EPS * np.abs(ds))
        if not active.any():
            break
    logf = a * np.log(x) - x - gammaln(a + 1)
    f = np.exp(logf)
    return f * (np.log(x) - digamma(a + 1)) * s + f * ds


def _continued_fraction(a, x):
    from scipy.special import gammaln, digamma
    b, db = x + 1 - a, -np.ones_like(a)
    c, dc = np.full_like(a, 1 / _TINY), np.zeros_like(a)
    d, dd = 1 / b, db * -(1 / b) ** 2
    h, dh = d.copy(), dd.copy()
    active = np.ones(a.shape, bool)
    for i in range(1, _MAX_ITER):
        an, dan = -i * (i - a), np.full_like(a, float(i))
        b = b + 2
        # d = 1 / (an * d + b)
        t, dt = an * d + b, dan * d + an * dd + db
        t = np.where(np.abs(t) < _TINY, _TINY, t)
        d, dd = 1 / t, -dt / t ** 2
        # c = b + an / c
        c, dc = b + an / c, db + (dan * c - an * dc) / c ** 2
        c = np.where(np.abs(c) < _TINY, _TINY, c)
        delta, ddelta = d * c, dd * c + d * dc
        h, dh = np.where(active, h * delta, h), np.where(active, dh * delta + h * ddelta, dh)
        active &= (np.abs(delta - 1) > _EPS) | (np.abs(ddelta) > _EPS * np.abs(dh / h))
        if not active.any():
            break
    logg = a * np.log(x) - x - gammaln(a)
    g = np.exp(logg)
    dq = g * (np.log(x) - digamma(a)) * h + g * dh
    return -dq


def igamma_grad_a_np(a, x):
    """d/da P(a, x) elementwise (NaN where ``a <= 0`` or ``x < 0``; 0 at ``x == 0`` and
    ``x == inf``), in the dtype of ``a``."""
    dt = np.result_type(np.asarray(a).dtype, np.asarray(x).dtype)
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    a64, x64 = a64.copy(), x64.copy()
    out = np.full(a64.shape, np.nan)
    with np.errstate(all="ignore"):
        ok = (a64 > 0) & (x64 > 0) & np.isfinite(x64) & np.isfinite(a64)
        out[(a64 > 0) & ((x64 == 0) | (x64 == np.inf))] = 0.0
        low = ok & (x64 < a64 + 1)
        high = ok & ~low
        if low.any():
            out[low] = _series(a64[low], x64[low])
        if high.any():
            out[high] = _continued_fraction(a64[high], x64[high])
    return out.astype(dt if dt.itemsize >= 4 else np.float32).astype(dt)
