"""jax.scipy.fft: the type-II discrete cosine transform and its inverse (dct, idct, dctn,
idctn), built on jnp.fft so that jit, vmap and grad go through the FFT primitive.

DCT-II of length N with one N-point FFT (Makhoul's reordering): ``v`` holds the even samples
followed by the odd ones reversed, and ``X[k] = 2 Re(exp(-i pi k / 2N) FFT(v)[k])``. The
inverse undoes each step: ``FFT(v)[k] = exp(i pi k / 2N) (X[k] - i X[N-k]) / 2`` (with
``X[N] = 0``), an inverse FFT, and the even/odd interleave. Complex input is transformed as
its real and imaginary parts. As in JAX, only type 2 and the norms None/'backward'/'ortho'
are available.
"""
from __future__ import annotations

import operator

import numpy as np

from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.core import dtypes
from jaxlite._src.numpy.util import canonicalize_axis, check_arraylike

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name, type, norm):
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm not in (None, "backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: norm={norm!r} is not implemented")


def _out_dtype(dt):
    """JAX's DCT result dtype: complex inputs keep theirs, real ones give the real part of
    the FFT dtype (so float16 and small ints give float32)."""
    if np.issubdtype(dt, np.complexfloating):
        return np.dtype(dt)
    return np.finfo(dtypes.canonicalize_dtype(dtypes.to_complex_dtype(dt))).dtype


def _resize(x, n, axis, name):
    """Truncate or zero-pad ``x`` to ``n`` samples along ``axis``."""
    if n is None:
        return x
    n = operator.index(n)
    if n < 1:
        err = TypeError if n == 0 else ValueError
        raise err(f"jax.scipy.fft.{name}: invalid number of data points n={n}; it must be "
                  "at least 1.")
    size = x.shape[axis]
    if n <= size:
        return jnp.take(x, np.arange(n), axis=axis) if n < size else x
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - size)
    return jnp.pad(x, pad)


def _ortho_factors(n, dtype):
    f = np.full(n, np.sqrt(1.0 / (2 * n)))
    f[0] = np.sqrt(1.0 / (4 * n))
    return f.astype(dtype)


def _dct2_last(x, ortho):
    """Unnormalised (or orthonormal) DCT-II of a real array along its last axis."""
    n = x.shape[-1]
    v = jnp.concatenate([x[..., ::2], jnp.flip(x[..., 1::2], axis=-1)], axis=-1)
    spec = jnp.fft.fft(v, axis=-1)
    rdt = np.finfo(spec.dtype).dtype
    k = np.arange(n)
    twiddle = jnp.asarray(np.exp(-0.5j * np.pi * k / n).astype(spec.dtype))
    out = 2 * jnp.real(spec * twiddle)
    if ortho:
        out = out * jnp.asarray(_ortho_factors(n, rdt))
    return out.astype(rdt)


def _idct2_last(x, ortho):
    """Inverse of :func:`_dct2_last` (a scaled DCT-III) along the last axis."""
    n = x.shape[-1]
    cdt = dtypes.canonicalize_dtype(dtypes.to_complex_dtype(x.dtype))
    rdt = np.finfo(cdt).dtype
    if ortho:
        x = x / jnp.asarray(_ortho_factors(n, rdt))
    mirrored = jnp.concatenate([jnp.zeros(x.shape[:-1] + (1,), x.dtype),
                                jnp.flip(x[..., 1:], axis=-1)], axis=-1)   # X[N - k]
    k = np.arange(n)
    twiddle = jnp.asarray((0.5 * np.exp(0.5j * np.pi * k / n)).astype(cdt))
    v = jnp.real(jnp.fft.ifft((x - 1j * mirrored) * twiddle, axis=-1))
    half = (n + 1) // 2
    out = jnp.zeros(x.shape, rdt)
    out = out.at[..., ::2].set(v[..., :half])
    out = out.at[..., 1::2].set(jnp.flip(v[..., half:], axis=-1))
    return out.astype(rdt)


def _along(x, axis, fn):
    """Apply a last-axis transform along ``axis``, splitting complex input into parts."""
    x = jnp.moveaxis(x, axis, -1)
    if np.issubdtype(x.dtype, np.complexfloating):
        out = fn(jnp.real(x)) + 1j * fn(jnp.imag(x))
    else:
        out = fn(x)
    return jnp.moveaxis(out, -1, axis)


def _transform_1d(name, x, n, axis, norm, inverse):
    x = jnp.asarray(x)
    axis = canonicalize_axis(axis, x.ndim)
    x = _resize(x, n, axis, name)
    if x.shape[axis] == 0:
        raise TypeError(f"jax.scipy.fft.{name}: cannot transform an empty axis (axis {axis} "
                        f"of shape {tuple(x.shape)}).")
    out_dt = _out_dtype(x.dtype)
    if not np.issubdtype(x.dtype, np.inexact) or np.dtype(x.dtype).itemsize < 4:
        x = x.astype(np.finfo(_out_dtype(x.dtype)).dtype)
    fn = _idct2_last if inverse else _dct2_last
    out = _along(x, axis, lambda a: fn(a, norm == "ortho"))
    return out.astype(out_dt)


def dct(x, type=2, n=None, axis=-1, norm=None):
    """Discrete cosine transform of ``x`` along ``axis`` (``scipy.fft.dct``; type 2 only):
    ``y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / 2N)``, scaled to an orthonormal transform by
    ``norm='ortho'``. ``n`` truncates or zero-pads the axis first."""
    check_arraylike("dct", x)
    _check("dct", type, norm)
    return _transform_1d("dct", x, n, axis, norm, inverse=False)


def idct(x, type=2, n=None, axis=-1, norm=None):
    """Inverse of :func:`dct` along ``axis`` (``scipy.fft.idct``; type 2 only, i.e. a scaled
    DCT-III): ``idct(dct(x)) == x`` for the same ``norm``."""
    check_arraylike("idct", x)
    _check("idct", type, norm)
    return _transform_1d("idct", x, n, axis, norm, inverse=True)


def _nd_plan(x, s, axes):
    """The (axis, length) pairs of an n-d transform."""
    if s is not None and not np.iterable(s):
        s = (s,)
    if axes is not None and not np.iterable(axes):
        axes = (axes,)
    if axes is None:
        axes = tuple(range(x.ndim)) if s is None else tuple(range(x.ndim - len(s), x.ndim))
    axes = tuple(canonicalize_axis(operator.index(a), x.ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis: {axes}")
    if s is None:
        return [(a, None) for a in axes]
    # as JAX: extra lengths are ignored and axes without one keep their size
    return [(a, s[i] if i < len(s) else None) for i, a in enumerate(axes)]


def _transform_nd(name, x, s, axes, norm, inverse):
    x = jnp.asarray(x)
    plan = _nd_plan(x, s, axes)
    for axis, n in plan:
        x = _transform_1d(name, x, n, axis, norm, inverse)
    return x


def dctn(x, type=2, s=None, axes=None, norm=None):
    """Multidimensional DCT (``scipy.fft.dctn``; type 2 only): :func:`dct` along each of
    ``axes`` (default all, or the last ``len(s)``), each axis first resized to the matching
    entry of ``s``."""
    check_arraylike("dctn", x)
    _check("dctn", type, norm)
    return _transform_nd("dctn", x, s, axes, norm, inverse=False)


def idctn(x, type=2, s=None, axes=None, norm=None):
    """Multidimensional inverse DCT (``scipy.fft.idctn``; type 2 only): :func:`idct` along
    each of ``axes``, inverting :func:`dctn` with the same arguments."""
    check_arraylike("idctn", x)
    _check("idctn", type, norm)
    return _transform_nd("idctn", x, s, axes, norm, inverse=True)
