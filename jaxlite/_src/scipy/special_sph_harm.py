"""Spherical harmonics ``Y_n^m(theta, phi)`` (SciPy's ``sph_harm_y`` convention: ``theta`` the
polar, ``phi`` the azimuthal angle, Condon-Shortley phase), written for jaxlite from DLMF
14.30.1 with the fully normalised associated Legendre functions computed by the standard
three-term recurrence in the degree (DLMF 14.10.3 rescaled):
``P_m^m = (-1)^m sqrt((2m+1)/(4 pi) Gamma(m+1/2)/(sqrt(pi) m!)) |sin(theta)|^m``,
``P_{m+1}^m = sqrt(2m+3) cos(theta) P_m^m`` and
``P_l^m = a_l (cos(theta) P_{l-1}^m - P_{l-2}^m / a_{l-1})``, ``a_l = sqrt((4l^2-1)/(l^2-m^2))``."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["sph_harm_y"]


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """Spherical harmonic of degree ``n`` and order ``m`` at polar angle ``theta`` and
    azimuth ``phi`` (arrays broadcast together); zero where ``|m| > n``. ``n_max`` (the
    largest degree, needed under ``jit``) defaults to ``max(n)``; derivatives (``diff_n``)
    are not supported, as in JAX."""
    from jaxlite._src.numpy import namespace as jnp
    from jaxlite._src.scipy.special_basic import gammaln
    if diff_n is not None:
        raise NotImplementedError(
            "The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    theta, phi = promote_args_inexact("sph_harm_y", theta, phi)
    n, m, theta, phi = jnp.broadcast_arrays(jnp.asarray(n), jnp.asarray(m), theta, phi)
    if n_max is None:
        try:
            n_max = int(np.max(np.asarray(n))) if n.size else 0
        except Exception:
            raise TypeError("sph_harm_y: n_max must be given when n is traced") from None
    n_max = int(n_max)
    dt = theta.dtype
    cdt = np.complex128 if dt == np.float64 else np.complex64
    nf = n.astype(dt)
    am = jnp.abs(m).astype(dt)
    x, s = jnp.cos(theta), jnp.sin(theta)
    # P_m^m (normalised), via logs for the factorial ratio
    log_ratio = gammaln(am + 0.5) - gammaln(am + 1) - 0.5 * np.log(np.pi)
    # (1 - cos^2)^(m/2) = |sin(theta)|^m, as SciPy for any theta
    s_pow = jnp.where(am == 0, np.asarray(1, dt), jnp.abs(s) ** am)
    cs = jnp.where(jnp.remainder(am, 2) == 1, np.asarray(-1, dt), np.asarray(1, dt))
    pmm = cs * jnp.sqrt((2 * am + 1) / (4 * np.pi) * jnp.exp(log_ratio)) * s_pow
    prev2 = jnp.zeros_like(x)     # P_{l-2}^m
    prev1 = jnp.zeros_like(x)     # P_{l-1}^m
    result = jnp.zeros_like(x)
    for l in range(n_max + 1):
        lf = np.asarray(l, dt)
        denom = jnp.where(lf * lf - am * am > 0, lf * lf - am * am, np.asarray(1, dt))
        use = lf >= am + 2             # (the recurrence is only read there; keep the
        a_l = jnp.sqrt(jnp.where(use, (4 * lf * lf - 1) / denom, np.asarray(1, dt)))
        lm1 = lf - 1
        denom1 = jnp.where(lm1 * lm1 - am * am > 0, lm1 * lm1 - am * am, np.asarray(1, dt))
        a_lm1 = jnp.sqrt(jnp.where(use, (4 * lm1 * lm1 - 1) / denom1,   # others finite)
                                   np.asarray(1, dt)))
        rec = a_l * (x * prev1 - jnp.where(lf - 2 >= am, prev2 / a_lm1, np.asarray(0, dt)))
        cur = jnp.where(lf < am, np.asarray(0, dt),
                        jnp.where(lf == am, pmm,
                                  jnp.where(lf == am + 1, jnp.sqrt(2 * am + 3) * x * pmm,
                                            rec)))
        result = jnp.where(nf == lf, cur, result)
        prev2, prev1 = prev1, cur
    # Y_n^{-|m|} = (-1)^|m| conj(Y_n^{|m|}) = (-1)^|m| P e^{i m phi}
    sign = jnp.where(jnp.logical_and(m < 0, jnp.remainder(am, 2) == 1), np.asarray(-1, dt),
                     np.asarray(1, dt))
    val = (sign * result).astype(cdt)
    mphi = m.astype(dt) * phi
    phase = jnp.cos(mphi).astype(cdt) + np.asarray(1j, cdt) * jnp.sin(mphi).astype(cdt)
    out = val * phase
    return jnp.where(jnp.logical_or(jnp.abs(m) > n, n < 0), np.asarray(0, cdt), out)
