"""Compiled (numba) twins of the iteration loops of ``special_igamma`` and
``special_betainc``: the same float32/float64 operations in the same order, so the same
bits (numba's defaults: no ``fastmath``, so no FMA contraction and no reassociation;
``error_model="numpy"`` gives IEEE results for a division by zero).

This module imports numba, so only ``special_igamma.loops()`` imports it, once numba is
chosen (``cpu_math.accel``). The constants come in as a small array of the operands'
dtype so one source serves float32 and float64 without promotion to float64.

The incomplete gamma loops run lane by lane: in JAX a lane stops changing once its own
term is small (its updates are selected by its own ``enabled`` flag), so a lane's value
does not depend on its neighbours. The Lentz loop of betainc runs step by step over all
lanes, because there it does: every lane keeps stepping until all have converged.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["continued_fraction", "lentz", "series"]

_jit = numba.njit(nogil=True, cache=True, error_model="numpy")


@_jit
def series(x, a, enabled, value, k, ans_out, dans_out):
    """Cephes' power series per lane; ``k`` = (0, 1, eps); ``value``: stop on the value's
    term (else on its derivative's). Writes the sum and its ``a``-derivative."""
    zero, one, eps = k[0], k[1], k[2]
    for i in range(x.size):
        xi = x[i]
        r, c, ans, dc, dans = a[i], one, one, zero, zero
        if enabled[i]:
            while True:
                r1 = r + one
                dc1 = dc * (xi / r1) - (c * xi) / (r1 * r1)
                dans1 = dans + dc1
                c1 = c * (xi / r1)
                ans1 = ans + c1
                if value:
                    nxt = c1 / ans1 > eps
                else:
                    nxt = abs(dc1 / dans1) > eps
                r, c, ans, dc, dans = r1, c1, ans1, dc1, dans1
                if not nxt:
                    break
        ans_out[i] = ans
        dans_out[i] = dans


@_jit
def continued_fraction(x, a, enabled, value, k, ans_out, dans_out):
    """Legendre's continued fraction per lane, at most 2000 terms; ``k`` = (0, 1, eps,
    1/eps, 2). Writes the fraction and its ``a``-derivative."""
    zero, one, eps, inv_eps, two = k[0], k[1], k[2], k[3], k[4]
    for i in range(x.size):
        xi = x[i]
        y = one - a[i]
        z = xi + y + one
        pkm2, qkm2 = one, xi
        pkm1 = xi + one
        qkm1 = z * xi
        ans = pkm1 / qkm1
        dpkm2, dqkm2, dpkm1 = zero, zero, zero
        dqkm1 = -xi
        dans = (dpkm1 - ans * dqkm1) / qkm1
        if enabled[i]:
            c = 0
            cc = zero
            while c < 2000:
                c += 1
                cc = cc + one
                y1, z1 = y + one, z + two
                yc = y1 * cc
                pk = pkm1 * z1 - pkm2 * yc
                qk = qkm1 * z1 - qkm2 * yc
                dpk = dpkm1 * z1 - pkm1 - dpkm2 * yc + pkm2 * cc
                dqk = dqkm1 * z1 - qkm1 - dqkm2 * yc + qkm2 * cc
                if qk != zero:
                    r = pk / qk
                    t1 = abs((ans - r) / r)
                    ans1 = r
                    dans1 = (dpk - ans1 * dqk) / qk
                    moved = abs(dans1 - dans)
                else:
                    t1, ans1, dans1, moved = one, ans, dans, one
                s = eps if abs(pk) > inv_eps else one
                nxt = (t1 if value else moved) > eps
                ans, y, z, dans = ans1, y1, z1, dans1
                pkm2, pkm1, qkm2, qkm1 = pkm1 * s, pk * s, qkm1 * s, qk * s
                dpkm2, dqkm2, dpkm1, dqkm1 = dpkm1 * s, dqkm1 * s, dpk * s, dqk * s
                if not nxt:
                    break
        ans_out[i] = ans
        dans_out[i] = dans


@_jit
def lentz(a, b, x, iterations, k, ms, h):
    """The modified Lentz loop of betainc over all lanes, step by step until no lane moves
    by ``small`` or ``iterations`` is reached; ``k`` = (0, 1, 2, small), ``ms`` = 0, 1,
    2, ... in the dtype. Writes ``h``."""
    zero, one, two, small = k[0], k[1], k[2], k[3]
    size = x.size
    c = np.empty_like(x)
    d = np.empty_like(x)
    for i in range(size):
        h[i], c[i], d[i] = small, small, zero
    n = 1
    while n < iterations:
        m = (n - 1) // 2
        mm = ms[m]
        unconverged = False
        for i in range(size):
            ai, bi, xi = a[i], b[i], x[i]
            if n == 1:
                num = one
            elif n % 2 == 0:
                if m == 0:
                    num = -(ai + bi) * xi / (ai + one)
                else:
                    num = -(ai + mm) * (ai + bi + mm) * xi / (
                        (ai + two * mm) * (ai + two * mm + one))
            else:
                num = mm * (bi - mm) * xi / ((ai + two * mm - one) * (ai + two * mm))
            ci = one + num / c[i]
            if abs(ci) < small:
                ci = small
            di = one + num * d[i]
            if abs(di) < small:
                di = small
            di = one / di
            delta = ci * di
            h[i] = h[i] * delta
            c[i], d[i] = ci, di
            if abs(delta - one) >= small:
                unconverged = True
        n += 1
        if not unconverged:
            break
