"""lax.fft (mirrors ``jax.lax.fft``): the FFT operator and its transpose helpers."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.prims.fft import FftType, complex_dtype, fft_p, real_dtype

__all__ = ["fft", "fft_p", "FftType"]


def _str_to_fft_type(s):
    table = {"fft": FftType.FFT, "ifft": FftType.IFFT, "rfft": FftType.RFFT,
             "irfft": FftType.IRFFT}
    t = table.get(s.lower()) if s in table or s.isupper() else None
    if t is None:
        raise ValueError(f"Unknown FFT type '{s}'")
    return t


def _to_inexact(dt):
    dt = np.dtype(dt)
    if np.issubdtype(dt, np.inexact):
        return dt
    return dtypes.canonicalize_dtype(np.float64)


def fft(x, fft_type, fft_lengths):
    """Fast Fourier transform over the trailing ``len(fft_lengths)`` dimensions of ``x``.

    ``fft_type`` is an ``FftType`` or one of "fft", "ifft", "rfft", "irfft". RFFT takes real
    input (of shape ending in ``fft_lengths``) and keeps the non-negative frequencies of the
    last axis; IRFFT is its inverse (output shape ending in ``fft_lengths``). Lists are
    accepted for ``fft_lengths`` (JAX needs a hashable tuple)."""
    return _fft(x, fft_type, tuple(int(n) for n in fft_lengths))


def _fft_impl(x, fft_type, fft_lengths):
    if isinstance(fft_type, str):
        typ = _str_to_fft_type(fft_type)
    elif isinstance(fft_type, FftType):
        typ = fft_type
    else:
        raise TypeError(f"Unknown FFT type value '{fft_type}'")
    dt = dtypes.dtype(x)
    if typ == FftType.RFFT:
        if np.issubdtype(dt, np.complexfloating):
            raise ValueError("only real valued inputs supported for rfft")
        x = lax_ew.convert_element_type(x, _to_inexact(dt))
    else:
        x = lax_ew.convert_element_type(x, complex_dtype(dtypes.canonicalize_dtype(
            _to_inexact(dt))))
    if len(fft_lengths) == 0:
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=fft_lengths)


_fft_impl.__name__ = _fft_impl.__qualname__ = "fft"
_fft = jit(_fft_impl, static_argnums=(1, 2))


def _mask(like, n, odd, dtype):
    mask = lax_shape.full_like(like, 2.0, dtype=dtype, shape=(n,))
    mask = lax_shape.dynamic_update_slice(
        mask, lax_shape.full_like(like, 1.0, dtype=dtype, shape=(1,)), (0,))
    if not odd:
        mask = lax_shape.dynamic_update_slice(
            mask, lax_shape.full_like(like, 1.0, dtype=dtype, shape=(1,)), (n - 1,))
    return mask


def _spread(mask, shape):
    # JAX expands the mask to rank and lets the product broadcast its unit dimensions; the
    # mask is broadcast to the full shape here instead (same values; the JVP of a product
    # with implicit unit-dimension broadcasting is not supported by jaxlite's mul rule).
    if len(shape) <= 1:
        return mask
    return lax_shape.broadcast_in_dim(mask, tuple(shape), (len(shape) - 1,))


@partial(jit, static_argnums=1)
def _rfft_transpose(t, fft_lengths):
    """Transpose of RFFT: an IRFFT of the conjugated cotangent, de-weighting the Hermitian
    duplicates (every bin but DC and Nyquist counts twice)."""
    m = t.shape[-1]
    mask = _mask(t, m, fft_lengths[-1] % 2, t.dtype)
    n = math.prod(fft_lengths)
    mask = _spread(mask, t.shape)
    return n * fft(lax_ew.conj(t) / mask, FftType.IRFFT, fft_lengths)


def _irfft_transpose(t, fft_lengths):
    """Transpose of IRFFT: the scaled, masked RFFT of the cotangent (conjugated, JAX's
    convention for complex cotangents)."""
    x = fft(t, FftType.RFFT, fft_lengths)
    n = x.shape[-1]
    mask = _mask(t, n, fft_lengths[-1] % 2, x.dtype)
    scale = 1 / math.prod(fft_lengths)
    out = scale * _spread(mask, x.shape) * x
    return lax_ew.conj(out)


del real_dtype
