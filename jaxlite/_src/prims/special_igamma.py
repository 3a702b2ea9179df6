"""Kernels of the regularized incomplete gamma family: ``igamma`` (P(a, x)), ``igammac``
(Q(a, x) = 1 - P), ``igamma_grad_a`` (dP/da: the tangent of ``igamma`` and, negated, of
``igammac`` in ``a``) and ``random_gamma_grad`` (the implicit derivative of a Gamma(a)
sample ``x`` with respect to ``a``).

JAX does not call a library for these: it expands them into lax operations (Cephes' power
series of P for ``x < 1`` or ``x <= a``, else Legendre's continued fraction of Q, with the
derivative in ``a`` of every term carried along for the two gradients; a lane stops
changing once its own term is below the dtype's epsilon, the continued fraction after at
most 2000 terms), followed by selects that give the edge values (NaN for a NaN operand,
``x < 0``, ``a < 0`` or ``a = x = 0``; P = 0 at ``x = 0``, P = 1 at ``x = inf``; Q = 0 at
``x = inf`` or ``a = 0``). The kernels below evaluate the same recurrences, lane by lane in
the operands' dtype (float16/bfloat16 in float32, as JAX upcasts them), with float32's
logarithm, exponential, lgamma and digamma taken from ``cpu_math`` (XLA:CPU's expansions)
so that the bits match; float64 uses NumPy's and SciPy's.
"""
from __future__ import annotations

import numpy as np

__all__ = ["elementary", "igamma_grad_a_np", "igamma_np", "igammac_np",
           "random_gamma_grad_np"]

_VALUE, _DERIV, _SAMPLE = 0, 1, 2
_F32 = np.dtype(np.float32)


def elementary(dt):
    """``(log, log1p, exp, lgamma, digamma)`` as XLA:CPU computes them in ``dt`` (float32
    from ``cpu_math``; float64 from NumPy/SciPy, with NaN at digamma's poles)."""
    if dt == _F32:
        from jaxlite._src.cpu_math.exp import exp_f32
        from jaxlite._src.cpu_math.gamma import digamma_f32, lgamma_f32
        from jaxlite._src.cpu_math.log import log1p_f32, log_f32
        return log_f32, log1p_f32, exp_f32, lgamma_f32, digamma_f32
    import scipy.special

    def lgamma(v):
        return np.asarray(scipy.special.gammaln(v), v.dtype)

    def digamma(v):
        r = np.asarray(scipy.special.digamma(v), v.dtype)
        return np.where((v <= 0) & (v == np.floor(v)), v.dtype.type(np.nan), r)
    return np.log, np.log1p, np.exp, lgamma, digamma


def _series(ax, x, a, enabled, mode, fns):
    """Cephes' power series of P(a, x) (``mode`` VALUE) or of its derivative in ``a``
    (DERIV; SAMPLE: the sample derivative), advanced only in the ``enabled`` lanes."""
    log, _, _, _, digamma = fns
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
        if mode == _VALUE:
            nxt = on & (c1 / ans1 > eps)
        else:
            nxt = on & (np.abs(dc_da1 / dans_da1) > eps)
        for old, new in ((r, r1), (c, c1), (ans, ans1), (dc_da, dc_da1),
                         (dans_da, dans_da1)):
            np.copyto(old, new, where=on)
        on = nxt
    if mode == _VALUE:
        return (ans * ax) / a
    dlogax_da = log(x) - digamma(a + 1)
    if mode == _SAMPLE:
        return -(dans_da + ans * dlogax_da) * x / a
    return ax * (ans * dlogax_da + dans_da) / a


def _continued_fraction(ax, x, a, enabled, mode, fns):
    """Legendre's continued fraction of Q(a, x) (``mode`` VALUE) or of its derivative in
    ``a``, advanced only in the ``enabled`` lanes, at most 2000 terms."""
    log, _, _, _, digamma = fns
    eps = np.finfo(x.dtype).eps
    one = x.dtype.type(1)
    y = 1 - a
    z = x + y + 1
    pkm2, qkm2 = np.ones_like(x), x.copy()
    pkm1 = x + 1
    qkm1 = z * x
    ans = pkm1 / qkm1
    dpkm2_da, dqkm2_da, dpkm1_da = np.zeros_like(x), np.zeros_like(x), np.zeros_like(x)
    dqkm1_da = -x
    dans_da = (dpkm1_da - ans * dqkm1_da) / qkm1
    on = enabled.copy()
    c = 0
    while c < 2000 and on.any():
        c += 1
        cc = x.dtype.type(c)
        y1, z1 = y + 1, z + 2
        yc = y1 * cc
        pk = pkm1 * z1 - pkm2 * yc
        qk = qkm1 * z1 - qkm2 * yc
        nz = qk != 0
        r = pk / qk
        t1 = np.where(nz, np.abs((ans - r) / r), one)
        ans1 = np.where(nz, r, ans)
        dpk_da = dpkm1_da * z1 - pkm1 - dpkm2_da * yc + pkm2 * cc
        dqk_da = dqkm1_da * z1 - qkm1 - dqkm2_da * yc + qkm2 * cc
        dans_da1 = np.where(nz, (dpk_da - ans1 * dqk_da) / qk, dans_da)
        moved = np.where(nz, np.abs(dans_da1 - dans_da), one)
        s = np.where(np.abs(pk) > 1 / eps, eps, one)
        nxt = on & ((t1 if mode == _VALUE else moved) > eps)
        for old, val in ((ans, ans1), (y, y1), (z, z1), (pkm2, pkm1 * s), (pkm1, pk * s),
                         (qkm2, qkm1 * s), (qkm1, qk * s), (dpkm2_da, dpkm1_da * s),
                         (dqkm2_da, dqkm1_da * s), (dpkm1_da, dpk_da * s),
                         (dqkm1_da, dqk_da * s), (dans_da, dans_da1)):
            np.copyto(old, val, where=on)
        on = nxt
    if mode == _VALUE:
        return ans * ax
    dlogax_da = log(x) - digamma(a)
    if mode == _SAMPLE:
        return -(dans_da + ans * dlogax_da) * x
    return ax * (ans * dlogax_da + dans_da)


def _prepare(a, x):
    """The operands broadcast, flattened and in the computing dtype, the output dtype and
    shape, and the elementary functions."""
    a, x = np.asarray(a), np.asarray(x)
    out_dt = np.result_type(a, x)
    dt = out_dt if out_dt.itemsize >= 4 else _F32
    a, x = np.broadcast_arrays(a.astype(dt), x.astype(dt))
    return a.ravel().copy(), x.ravel().copy(), out_dt, a.shape, elementary(dt)


def _log_ax(a, x, fns):
    """``a log x - x - lgamma(a)``, whether it underflows, and its exponential."""
    log, _, exp, lgamma, _ = fns
    lax_ = a * log(x) - x - lgamma(a)
    under = lax_ < -np.log(np.finfo(x.dtype).max).astype(x.dtype)
    return exp(lax_), under


def _domain(a, x):
    a0, x0 = a == 0, x == 0
    return (x < 0) | (a < 0) | (a0 & x0) | np.isnan(a) | np.isnan(x)


def igamma_np(a, x):
    """P(a, x) elementwise as JAX computes it (NaN outside a >= 0, x >= 0)."""
    a, x, out_dt, shape, fns = _prepare(a, x)
    with np.errstate(all="ignore"):
        bad, x0, xinf = _domain(a, x), x == 0, x == np.inf
        use_cf = (x >= 1) & (x > a)
        ax, under = _log_ax(a, x, fns)
        on = ~(x0 | bad | under | xinf)
        out = np.where(use_cf, 1 - _continued_fraction(ax, x, a, on & use_cf, _VALUE, fns),
                       _series(ax, x, a, on & ~use_cf, _VALUE, fns))
        out = np.where(x0, 0, out)
        out = np.where(xinf, 1, out)
        out = np.where(bad, np.nan, out).astype(x.dtype)
    return out.astype(out_dt).reshape(shape)


def igammac_np(a, x):
    """Q(a, x) = 1 - P(a, x) elementwise as JAX computes it."""
    a, x, out_dt, shape, fns = _prepare(a, x)
    with np.errstate(all="ignore"):
        bad, a0, xinf = _domain(a, x), a == 0, x == np.inf
        use_series = (x < 1) | (x < a)
        ax, under = _log_ax(a, x, fns)
        on = ~(bad | under | xinf | a0)
        out = np.where(use_series, 1 - _series(ax, x, a, on & use_series, _VALUE, fns),
                       _continued_fraction(ax, x, a, on & ~use_series, _VALUE, fns))
        out = np.where(xinf | a0, 0, out)
        out = np.where(bad, np.nan, out).astype(x.dtype)
    return out.astype(out_dt).reshape(shape)


def _grad_a(a, x, mode):
    a, x, out_dt, shape, fns = _prepare(a, x)
    with np.errstate(all="ignore"):
        nan = np.isnan(a) | np.isnan(x)
        x0 = x == 0
        bad = (x < 0) | (a <= 0)
        use_cf = (x > 1) & (x > a)
        ax, under = _log_ax(a, x, fns)
        on = ~(x0 | bad | under | nan)
        out = np.where(use_cf, -_continued_fraction(ax, x, a, on & use_cf, mode, fns),
                       _series(ax, x, a, on & ~use_cf, mode, fns))
        out = np.where(x0, 0, out)
        out = np.where(bad | nan, np.nan, out).astype(x.dtype)
    return out.astype(out_dt).reshape(shape)


def igamma_grad_a_np(a, x):
    """d/da P(a, x) elementwise, in the operands' dtype (NaN outside a > 0, x >= 0)."""
    return _grad_a(a, x, _DERIV)


def random_gamma_grad_np(a, x):
    """The derivative of a Gamma(a) sample ``x`` with respect to ``a`` at fixed noise,
    -(dP/da) / (dP/dx), elementwise in the operands' dtype."""
    return _grad_a(a, x, _SAMPLE)
