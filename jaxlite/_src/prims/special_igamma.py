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

__all__ = ["elementary", "flush", "igamma_grad_a_np", "igamma_np", "igammac_np", "loops",
           "random_gamma_grad_np"]

_VALUE, _DERIV, _SAMPLE = 0, 1, 2
_F32 = np.dtype(np.float32)


def elementary(dt):
    """``(log, log1p, exp, lgamma, digamma)`` as XLA:CPU computes them in ``dt`` (float32
    from ``cpu_math``; float64 from NumPy/SciPy, with NaN at digamma's poles)."""
    if dt == _F32:   # (the shared kernels: numba-compiled once numba is chosen)
        from jaxlite._src.cpu_math.dispatch import kernel
        return tuple(kernel(n, 1) for n in ("log", "log1p", "exp", "lgamma", "digamma"))
    import scipy.special

    def lgamma(v):
        return np.asarray(scipy.special.gammaln(v), v.dtype)

    def digamma(v):
        r = np.asarray(scipy.special.digamma(v), v.dtype)
        return np.where((v <= 0) & (v == np.floor(v)), v.dtype.type(np.nan), r)
    return np.log, np.log1p, np.exp, lgamma, digamma


def loops(n):
    """The compiled loops (``special_loops_nb``) if numba is to serve ``n`` lanes
    (``cpu_math.accel``'s choice), else None: the NumPy loops below serve."""
    from jaxlite._src.cpu_math import accel
    if not accel.ready(n):
        return None
    try:
        from jaxlite._src.prims import special_loops_nb
    except ImportError:
        return None
    return special_loops_nb


def _series_np(x, a, enabled, value):
    """The power series' sum and its ``a``-derivative, the lanes still converging kept in
    compacted arrays (each lane's recurrence is its own: the same bits as stepping all)."""
    eps = np.finfo(x.dtype).eps
    ans_out, dans_out = np.ones_like(a), np.zeros_like(a)
    idx = np.flatnonzero(enabled)
    xs, r = x[idx], a[idx]
    c, ans = np.ones_like(r), np.ones_like(r)
    dc, dans = np.zeros_like(r), np.zeros_like(r)
    while idx.size:
        r = r + 1
        xr = xs / r
        dc = dc * xr - (c * xs) / (r * r)
        dans = dans + dc
        c = c * xr
        ans = ans + c
        go = (c / ans > eps) if value else (np.abs(dc / dans) > eps)
        if not go.all():
            done = ~go
            ans_out[idx[done]], dans_out[idx[done]] = ans[done], dans[done]
            idx, xs, r, c, ans, dc, dans = (v[go] for v in (idx, xs, r, c, ans, dc, dans))
    return ans_out, dans_out


def _continued_fraction_np(x, a, enabled, value):
    """The continued fraction and its ``a``-derivative (at most 2000 terms), the lanes
    still converging kept in compacted arrays."""
    eps = np.finfo(x.dtype).eps
    one = x.dtype.type(1)
    big = one / eps
    y = 1 - a
    z = x + y + 1
    qkm1 = z * x
    ans_out = (x + 1) / qkm1
    dans_out = (0 - ans_out * -x) / qkm1
    idx = np.flatnonzero(enabled)
    xs, y, z, qkm1 = x[idx], y[idx], z[idx], qkm1[idx]
    ans, dans = ans_out[idx], dans_out[idx]
    pkm2, qkm2, pkm1 = np.ones_like(xs), xs.copy(), xs + 1
    dpkm2, dqkm2, dpkm1, dqkm1 = (np.zeros_like(xs), np.zeros_like(xs),
                                  np.zeros_like(xs), -xs)
    c = 0
    while c < 2000 and idx.size:
        c += 1
        cc = x.dtype.type(c)
        y, z = y + 1, z + 2
        yc = y * cc
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        nz = qk != 0
        r = pk / qk
        t1 = np.where(nz, np.abs((ans - r) / r), one)
        ans = np.where(nz, r, ans)
        dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * cc
        dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * cc
        dans1 = np.where(nz, (dpk - ans * dqk) / qk, dans)
        moved = np.where(nz, np.abs(dans1 - dans), one)
        dans = dans1
        s = np.where(np.abs(pk) > big, eps, one)
        pkm2, pkm1, qkm2, qkm1 = pkm1 * s, pk * s, qkm1 * s, qk * s
        dpkm2, dqkm2, dpkm1, dqkm1 = dpkm1 * s, dqkm1 * s, dpk * s, dqk * s
        go = (t1 if value else moved) > eps
        if c == 2000:
            go[:] = False
        if not go.all():
            done = ~go
            ans_out[idx[done]], dans_out[idx[done]] = ans[done], dans[done]
            (idx, xs, y, z, ans, dans, pkm2, pkm1, qkm2, qkm1, dpkm2, dqkm2, dpkm1,
             dqkm1) = (v[go] for v in (idx, xs, y, z, ans, dans, pkm2, pkm1, qkm2, qkm1,
                                       dpkm2, dqkm2, dpkm1, dqkm1))
    return ans_out, dans_out


def _run(kind, x, a, enabled, value):
    """``(sum, d sum/da)`` of the series (``kind`` "series") or the continued fraction,
    by the compiled loops when numba serves, else NumPy's."""
    nb = loops(x.size)
    if nb is None:
        from jaxlite._src.cpu_math import accel
        with accel.timer():
            fn = _series_np if kind == "series" else _continued_fraction_np
            return fn(x, a, enabled, value)
    T = x.dtype.type
    eps = np.finfo(x.dtype).eps
    k = np.array([0, 1, eps, T(1) / eps, 2], x.dtype)
    ans, dans = np.empty_like(x), np.empty_like(x)
    fn = nb.series if kind == "series" else nb.continued_fraction
    fn(np.ascontiguousarray(x), np.ascontiguousarray(a), np.ascontiguousarray(enabled),
       value, k, ans, dans)
    return ans, dans


def _series(ax, x, a, enabled, mode, fns):
    """Cephes' power series of P(a, x) (``mode`` VALUE) or of its derivative in ``a``
    (DERIV; SAMPLE: the sample derivative), advanced only in the ``enabled`` lanes."""
    log, _, _, _, digamma = fns
    ans, dans_da = _run("series", x, a, enabled, mode == _VALUE)
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
    ans, dans_da = _run("cf", x, a, enabled, mode == _VALUE)
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


def flush(r):
    """A float32 result with XLA:CPU's flush of subnormals to (signed) zero, as the last
    multiply of these expansions gives it in JAX; float64 unchanged."""
    if r.dtype != _F32:
        return r
    return np.where(np.abs(r) < np.finfo(_F32).tiny, r * 0, r)


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
        out = flush(np.where(bad, np.nan, out).astype(x.dtype))
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
        out = flush(np.where(bad, np.nan, out).astype(x.dtype))
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
        out = flush(np.where(bad | nan, np.nan, out).astype(x.dtype))
    return out.astype(out_dt).reshape(shape)


def igamma_grad_a_np(a, x):
    """d/da P(a, x) elementwise, in the operands' dtype (NaN outside a > 0, x >= 0)."""
    return _grad_a(a, x, _DERIV)


def random_gamma_grad_np(a, x):
    """The derivative of a Gamma(a) sample ``x`` with respect to ``a`` at fixed noise,
    -(dP/da) / (dP/dx), elementwise in the operands' dtype."""
    return _grad_a(a, x, _SAMPLE)
