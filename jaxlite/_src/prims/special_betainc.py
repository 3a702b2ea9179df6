"""The kernel of ``regularized_incomplete_beta`` (I_x(a, b)) as JAX computes it.

JAX expands betainc into lax operations: the continued fraction of DLMF 8.17.22 evaluated
by the modified Lentz method (200 iterations at most in float32, 600 in float64; tiny
denominators replaced by eps/2), on (a, b, x) when ``x < (a + 1) / (a + b + 2)`` and on
(b, a, 1 - x) otherwise (DLMF 8.17.4, the result then taken from 1), times the prefactor
``x^a (1 - x)^b / (a B(a, b))`` (for ``a`` below twice the smallest normal,
``a Gamma(a) -> 1`` is used). All lanes step together until every one has converged, so a
lane's value can depend on its neighbours, exactly as in JAX. Selects then give the edge
values: 0 and 1 where ``a`` or ``b`` is 0 or infinite, NaN for a NaN operand, a negative
``a``/``b``, ``x`` outside [0, 1] or ``a`` and ``b`` both "zero".
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.prims.special_igamma import elementary, flush, loops

__all__ = ["betainc_np"]


def _numerator(n, a, b, x):
    """The n-th partial numerator (n >= 1) of the continued fraction."""
    if n == 1:
        return np.ones_like(x)
    m = (n - 1) // 2
    mm = x.dtype.type(m)
    one, two = x.dtype.type(1), x.dtype.type(2)
    if n % 2 == 0:
        if m == 0:
            return -(a + b) * x / (a + one)
        return -(a + mm) * (a + b + mm) * x / ((a + two * mm) * (a + two * mm + one))
    return mm * (b - mm) * x / ((a + two * mm - one) * (a + two * mm))


def _lentz(a, b, x, iterations, small):
    """The continued fraction by the modified Lentz method (denominators 0, then 1)."""
    h = np.full_like(x, small)          # the 0th denominator is 0 (< small)
    c, d = h.copy(), np.zeros_like(x)
    n = 1
    while n < iterations:
        num = _numerator(n, a, b, x)
        c = 1 + num / c
        c = np.where(np.abs(c) < small, small, c)
        d = 1 + num * d
        d = np.where(np.abs(d) < small, small, d)
        d = 1 / d
        delta = c * d
        h = h * delta
        n += 1
        if not (np.abs(delta - 1) >= small).any():
            break
    return h


def betainc_np(a, b, x):
    """I_x(a, b) elementwise (float16/bfloat16 computed in float32)."""
    a, b, x = (np.asarray(v) for v in (a, b, x))
    out_dt = np.result_type(a, b, x)
    dt = out_dt if out_dt.itemsize >= 4 else np.dtype(np.float32)
    a, b, x = np.broadcast_arrays(a.astype(dt), b.astype(dt), x.astype(dt))
    shape = a.shape
    a, b, x = a.ravel(), b.ravel(), x.ravel()
    _, log1p, exp, lgamma, _ = fns = elementary(dt)
    log = fns[0]
    T = dt.type
    with np.errstate(all="ignore"):
        a_zero = (a == 0) | (b == np.inf)
        b_zero = (b == 0) | (a == np.inf)
        x0, x1 = x == 0, x == 1
        nan = np.isnan(a) | np.isnan(b) | np.isnan(x)
        is_zero = (b_zero & ~x1) | (a_zero & x0)
        is_one = (a_zero & ~x0) | (b_zero & x1)
        is_nan = (a < 0) | (b < 0) | (x < 0) | (x > 1) | (a_zero & b_zero) | nan
        fast = x < (a + T(1)) / (a + b + T(2))
        a, b, x = np.where(fast, a, b), np.where(fast, b, a), np.where(fast, x, T(1) - x)
        eps2 = T(np.finfo(dt).eps / 2)
        iterations = 200 if dt == np.float32 else 600
        nb = loops(x.size)
        if nb is None:
            from jaxlite._src.cpu_math import accel
            with accel.timer():
                cf = _lentz(a, b, x, iterations, eps2)
        else:
            cf = np.empty_like(x)
            nb.lentz(np.ascontiguousarray(a), np.ascontiguousarray(b),
                     np.ascontiguousarray(x), iterations, np.array([0, 1, 2, eps2], dt),
                     np.arange(iterations, dtype=dt), cf)
        lb_small = lgamma(b) - lgamma(a + b)
        lb = lgamma(a) + lb_small
        l1 = log1p(-x)
        factor = np.where(a < T(np.finfo(dt).tiny * 2), exp(l1 * b - lb_small),
                          exp(log(x) * a + l1 * b - lb) / a)
        r = cf * factor
        r = np.where(fast, r, T(1) - r)
        r = np.where(is_zero, T(0), r)
        r = np.where(is_one, T(1), r)
        r = np.where(is_nan, T(np.nan), r)
    return flush(r).astype(out_dt).reshape(shape)
