"""Owen's T function, written for jaxlite from its definition
``T(h, a) = 1/(2 pi) integral_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx`` (DLMF 7.18 /
Owen 1956): Gauss-Legendre quadrature on [0, a] for |a| <= 1 and, for |a| > 1, the identity
``T(h, a) = (Q(h) + Q(a h)) / 2 - Q(h) Q(a h) - T(a h, 1/a)`` (h, a >= 0, Q = 1 - Phi),
with T even in h and odd in a."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["owens_t"]

_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(40)


def _np():
    from jaxlite._src.numpy import namespace as jnp
    return jnp


def _t_small_a(h, a):
    """Quadrature for 0 <= a <= 1 (nodes mapped from [-1, 1] to [0, a])."""
    jnp = _np()
    dt = h.dtype
    x = (a[..., None] / 2) * (np.asarray(_NODES, dt) + 1)
    f = jnp.exp(-(h[..., None] ** 2) * (1 + x * x) / 2) / (1 + x * x)
    return a / 2 * jnp.sum(f * np.asarray(_WEIGHTS, dt), axis=-1) / (2 * np.pi)


def owens_t(h, a):
    """Owen's T function ``T(h, a)``, the probability of ``{X > h, 0 < Y < a X}`` for
    independent standard normals (times the symmetry factors of the definition)."""
    from jaxlite._src.scipy.special_basic import ndtr
    jnp = _np()
    h, a = promote_args_inexact("owens_t", h, a)
    h, a = jnp.broadcast_arrays(h, a)
    sgn = jnp.where(a < 0, np.asarray(-1, a.dtype), np.asarray(1, a.dtype))
    ah, aa = jnp.abs(h), jnp.abs(a)
    small = aa <= 1
    a_in = jnp.where(small, aa, np.asarray(1, a.dtype))
    direct = _t_small_a(ah, a_in)
    # |a| > 1: reflect to T(a h, 1/a)
    a_big = jnp.where(small, np.asarray(2, a.dtype), aa)
    hb = a_big * ah
    qh, qah = ndtr(-ah), ndtr(-hb)
    refl = (qh + qah) / 2 - qh * qah - _t_small_a(hb, 1 / a_big)
    inf_a = jnp.isinf(aa)
    refl = jnp.where(inf_a, jnp.where(ah == 0, np.asarray(0.25, a.dtype), qh / 2), refl)
    out = jnp.where(small, direct, refl)
    return sgn * out
