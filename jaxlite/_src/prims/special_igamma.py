"""Derivatives of the regularized incomplete gamma function with respect to its shape ``a``:
the kernel of the ``igamma_grad_a`` primitive (prims/special.py: d/da P(a, x), the tangent
rule of ``igamma`` and, negated, of ``igammac`` in ``a``) and that of ``random_gamma_grad`` (the implicit derivative of
a Gamma(a) sample ``x`` with respect to ``a``).

JAX expands both into the same algorithm as ``igamma`` itself (Cephes' power series for
``x <= 1`` or ``x <= a``, else Legendre's continued fraction), carrying the derivative of
every term with respect to ``a`` along, and iterating until the derivative (not the value)
has converged. The kernels below follow that algorithm step for step in NumPy, in the
operands' dtype (float16 and bfloat16 computed in float32, as JAX upcasts them), so the
results agree with JAX's to a few ulp (the logarithms and lgamma/digamma come from NumPy
and SciPy, not from XLA's expansions).
"""
from __future__ import annotations

import numpy as np

__all__ = ["igamma_grad_a_np", "random_gamma_grad_np"]


def _series(ax, x, a, enabled, sample):
    """The power series of P(a, x) and its derivative in ``a`` (where ``enabled``)."""
    eps = np.finfo(x.dtype).eps
    r, c, ans = a.copy(), np.ones_like(a), np.ones_like(a)
    dc_da, dans_da = np.zeros_like(a), np.zeros_like(a)
    on = enabled.copy()
    while on.any():
        r1 = r + 1
        dc_da1 = dc_da * (x / r1) - (c * x) / (r1 * r1)
        dans_da1 = dans_da + dc_da1
        c1 = c * (x / r1)
        ans1 = ans + c1
        nxt = on & (np.abs(dc_da1 / dans_da1) > eps)
        for old, new in ((r, r1), (c, c1), (ans, ans1), (dc_da, dc_da1),
                         (dans_da, dans_da1)):
            np.copyto(old, new, where=on)
        on = nxt
    dlogax_da = np.log(x) - _digamma(a + 1)
    if sample:
        return -(dans_da + ans * dlogax_da) * x / a
    return ax * (ans * dlogax_da + dans_da) / a


def _continued_fraction(ax, x, a, enabled, sample):
    """The continued fraction of Q(a, x) and its derivative in ``a`` (where ``enabled``),
    at most 2000 terms."""
    eps = np.finfo(x.dtype).eps
    one = x.dtype.type(1)
    y = 1 - a
    z = x + y + 1
    pkm2, qkm2 = np.ones_like(x), x.copy()
    pkm1 = x + 1
    qkm1 = z * x
    ans = pkm1 / qkm1
    t = np.ones_like(x)
    dpkm2_da, dqkm2_da, dpkm1_da = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    dqkm1_da = -x
    dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1
    on = enabled.copy()
    c = 0
    while c < 2000 and on.any():
        c += 1
        y1, z1 = y + 1, z + 2
        yc = y1 * x.dtype.type(c)
        pk = pkm1 * z1 - pkm2 * yc
        qk = qkm1 * z1 - qkm2 * yc
        nz = qk != 0
        r = pk / qk
        t1 = np.where(nz, np.abs((ans - r) / r), one)
        ans1 = np.where(nz, r, ans)
        cc = x.dtype.type(c)
        dpk_da = dpkm1_da * z1 - pkm1 - dpkm2_da * yc + pkm2 * cc
        dqk_da = dqkm1_da * z1 - qkm1 - dqkm2_da * yc + qkm2 * cc
        dans_da1 = np.where(nz, (dpk_da - ans1 * dqk_da) / qk, dans_da)
        moved = np.where(nz, np.abs(dans_da1 - dans_da), one)
        rescale = np.abs(pk) > 1 / eps
        s = np.where(rescale, eps, one)
        new = {"pkm2": pkm1 * s, "pkm1": pk * s, "qkm2": qkm1 * s, "qkm1": qk * s,
               "dpkm2_da": dpkm1_da * s, "dqkm2_da": dqkm1_da * s,
               "dpkm1_da": dpk_da * s, "dqkm1_da": dqk_da * s}
        nxt = on & (moved > eps)
        for old, val in ((ans, ans1), (t, t1), (y, y1), (z, z1), (pkm1, new["pkm1"]),
                         (qkm1, new["qkm1"]), (pkm2, new["pkm2"]), (qkm2, new["qkm2"]),
                         (dpkm2_da, new["dpkm2_da"]), (dqkm2_da, new["dqkm2_da"]),
                         (dpkm1_da, new["dpkm1_da"]), (dqkm1_da, new["dqkm1_da"]),
                         (dans_da, dans_da1)):
            np.copyto(old, val, where=on)
        on = nxt
    dlogax_da = np.log(x) - _digamma(a)
    if sample:
        return -(dans_da + ans * dlogax_da) * x
    return ax * (ans * dlogax_da + dans_da)


def _digamma(v):
    import scipy.special
    return np.asarray(scipy.special.digamma(v), v.dtype)


def _lgamma(v):
    import scipy.special
    return np.asarray(scipy.special.gammaln(v), v.dtype)


def _grad_a(a, x, sample):
    a, x = np.asarray(a), np.asarray(x)
    out_dt = np.result_type(a, x)
    dt = out_dt if out_dt.itemsize >= 4 else np.dtype(np.float32)
    a, x = np.broadcast_arrays(a.astype(dt), x.astype(dt))
    shape = a.shape
    a, x = a.ravel().copy(), x.ravel().copy()
    with np.errstate(all="ignore"):
        nan = np.isnan(a) | np.isnan(x)
        x_zero = x == 0
        domain = (x < 0) | (a <= 0)
        use_cf = (x > 1) & (x > a)
        ax = a * np.log(x) - x - _lgamma(a)
        underflow = ax < -np.log(np.finfo(dt).max)
        ax = np.exp(ax)
        enabled = ~(x_zero | domain | underflow | nan)
        out = np.where(use_cf,
                       -_continued_fraction(ax, x, a, enabled & use_cf, sample),
                       _series(ax, x, a, enabled & ~use_cf, sample))
        out = np.where(x_zero, dt.type(0), out)
        out = np.where(domain | nan, dt.type(np.nan), out)
    return out.astype(out_dt).reshape(shape)


def igamma_grad_a_np(a, x):
    """d/da P(a, x) elementwise, in the operands' dtype (NaN outside a > 0, x >= 0)."""
    return _grad_a(a, x, sample=False)


def random_gamma_grad_np(a, x):
    """The derivative of a Gamma(a) sample ``x`` with respect to ``a`` at fixed noise,
    -(dP/da) / (dP/dx), elementwise in the operands' dtype."""
    return _grad_a(a, x, sample=True)
