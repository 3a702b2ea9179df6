"""The Faddeeva function ``w(z) = exp(-z^2) erfc(-i z)``, written for jaxlite from the
literature: in the upper half-plane Weideman's rational approximation (J. A. C. Weideman,
"Computation of the complex error function", SIAM J. Numer. Anal. 31, 1994) -- a polynomial
in ``Z = (L + i z) / (L - i z)`` whose coefficients are the Fourier coefficients of
``exp(-t^2) (L^2 + t^2)`` at ``t = L tan(theta / 2)`` -- and, far from the origin, Laplace's
continued fraction ``w(z) = (i / sqrt(pi)) / (z - (1/2) / (z - 1 / (z - (3/2) / (z - ...))))``
(DLMF 7.9.3); the lower half-plane follows from ``w(z) = 2 exp(-z^2) - w(-z)``."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["wofz"]

_N = 40                              # polynomial degree (accuracy ~1e-15 in double)
_L = np.sqrt(_N / np.sqrt(2.0))
_CF_RADIUS = 8.0
_CF_DEPTH = 60


def _weideman_coefficients():
    """Coefficients ``a_1..a_N`` (highest power first) of the polynomial in Z."""
    m = 2 * _N
    k = np.arange(-m + 1, m)
    theta = k * np.pi / m
    t = _L * np.tan(theta / 2)
    f = np.exp(-t * t) * (_L * _L + t * t)
    f = np.concatenate([[0.0], f])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return a[1:_N + 1][::-1].copy()


_COEFFS = _weideman_coefficients()


def _upper(z):
    """w(z) for Im z >= 0."""
    from jaxlite._src.numpy import namespace as jnp
    cdt = z.dtype
    big = jnp.abs(z) > _CF_RADIUS
    # rational approximation (inputs far out replaced by a harmless point)
    zs = jnp.where(big, np.asarray(1j, cdt), z)
    izs = np.asarray(1j, cdt) * zs
    ds = np.asarray(_L, cdt) - izs
    Z = (np.asarray(_L, cdt) + izs) / ds
    p = jnp.zeros_like(Z)
    for coef in _COEFFS:
        p = p * Z + np.asarray(coef, cdt)
    rational = 2 * p / (ds * ds) + np.asarray(1 / np.sqrt(np.pi), cdt) / ds
    # continued fraction for |z| > 8
    zl = jnp.where(big, z, np.asarray(2 * _CF_RADIUS * 1j, cdt))
    acc = zl
    for k in range(_CF_DEPTH, 0, -1):
        acc = zl - np.asarray(k / 2.0, cdt) / acc
    cf = np.asarray(1j / np.sqrt(np.pi), cdt) / acc
    return jnp.where(big, cf, rational)


def wofz(z):
    """Faddeeva function ``w(z) = exp(-z**2) * erfc(-1j * z)`` (complex result; real inputs
    are treated as complex with zero imaginary part)."""
    from jaxlite._src.numpy import namespace as jnp
    (z,) = promote_args_inexact("wofz", z)
    if not jnp.iscomplexobj(z):
        z = z.astype(np.complex128 if z.dtype == np.float64 else np.complex64)
    cdt = z.dtype
    lower = jnp.imag(z) < 0
    zu = jnp.where(lower, -z, z)
    wu = _upper(zu)
    zl = jnp.where(lower, z, np.asarray(0, cdt))
    return jnp.where(lower, 2 * jnp.exp(-zl * zl) - wu, wu)
