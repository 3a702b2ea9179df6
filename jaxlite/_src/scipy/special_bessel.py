"""Bessel functions of the first kind of integer order, written for jaxlite: Miller's
backward recurrence ``J_{k-1}(z) = (2k/z) J_k(z) - J_{k+1}(z)`` started from an order well
above both ``v`` and ``z`` and normalised by ``J_0 + 2 (J_2 + J_4 + ...) = 1`` (DLMF 10.74.iv,
10.12.4); the running values are rescaled whenever they grow large."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["bessel_jn"]


def bessel_jn(z, *, v, n_iter=50):
    """``J_0(z), ..., J_v(z)`` stacked along a new leading axis (shape ``(v + 1,) +
    z.shape``). The recurrence starts at order ``v + n_iter`` (made even); it is accurate
    while ``|z|`` stays well below that order."""
    from jaxlite._src.numpy import namespace as jnp
    v = int(v)
    n_iter = int(n_iter)
    if v < 0:
        raise ValueError("bessel_jn: v must be a non-negative integer")
    (z,) = promote_args_inexact("bessel_jn", z)
    dt = z.dtype
    zero = z == 0
    az = jnp.where(zero, np.asarray(1, dt), jnp.abs(z))
    start = v + max(n_iter, 2)
    start += start % 2
    big = np.asarray(1e10, dt)
    j_next = jnp.zeros_like(az)                          # J_{k+1}
    j_cur = jnp.full_like(az, np.asarray(1e-30 if dt == np.float64 else 1e-20, dt))  # J_k
    norm = jnp.zeros_like(az)
    outs = [None] * (v + 1)
    if start <= v:
        outs[start] = j_cur
    for k in range(start, 0, -1):
        j_prev = (2 * k / az) * j_cur - j_next           # J_{k-1}
        j_next, j_cur = j_cur, j_prev
        if (k - 1) % 2 == 0 and k - 1 > 0:
            norm = norm + 2 * j_cur
        if k - 1 <= v:
            outs[k - 1] = j_cur
        scale = jnp.where(jnp.abs(j_cur) > big, 1 / big, np.asarray(1, dt))
        j_cur, j_next, norm = j_cur * scale, j_next * scale, norm * scale
        outs = [o if o is None else o * scale for o in outs]
    norm = norm + j_cur                                  # + J_0
    res = []
    for n, o in enumerate(outs):
        val = o / norm
        # J_n(-z) = (-1)^n J_n(z); J_n(0) = [n == 0]
        if n % 2:
            val = jnp.where(z < 0, -val, val)
        val = jnp.where(zero, np.asarray(1.0 if n == 0 else 0.0, dt), val)
        res.append(val)
    return jnp.stack(res)
