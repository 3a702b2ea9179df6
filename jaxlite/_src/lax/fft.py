"""lax.fft (mirrors ``jax.lax.fft``): the ``fft`` primitive and the FFT operator.

``fft_p`` computes complex/real discrete Fourier transforms over the trailing
``len(fft_lengths)`` dimensions. Parameters: ``fft_type`` (an ``FftType``: FFT, IFFT, RFFT,
IRFFT; printed as its integer as in JAX) and ``fft_lengths`` (tuple of ints). The primitive is
linear: its JVP applies it to the tangent, its transpose is an FFT of the cotangent (with the
Hermitian mask for RFFT/IRFFT, as JAX), and it batches by moving the batch dimension to the
front.

Unlike the primitives of ``prims/``, this one is defined at the library level, as in JAX:
its transpose and batching rules call the jit-compiled operator (the jaxpr of a gradient
shows ``jit[name=_rfft_transpose]`` and ``jit[name=fft]`` as JAX's does), and ``jit`` sits
above the primitives.
"""
from __future__ import annotations

import enum
import math
from functools import partial

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import moveaxis

__all__ = ["fft", "fft_p", "FftType"]


class FftType(enum.IntEnum):
    """Which transform ``fft`` performs."""
    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __str__(self):
        return str(int(self))


def complex_dtype(dt):
    """complex64 for float32/complex64, complex128 for float64/complex128."""
    dt = np.dtype(dt)
    return np.dtype(np.complex128) if dt in (np.dtype(np.float64), np.dtype(np.complex128)) \
        else np.dtype(np.complex64)


def real_dtype(dt):
    """The real dtype matching a complex (or real) dtype."""
    return np.dtype(np.finfo(np.dtype(dt)).dtype)


class Fft(Primitive):
    """Discrete Fourier transform over the trailing ``len(fft_lengths)`` axes."""
    name = "fft"
    weak_rule = "never"

    def sharding_rule(self, avals, fft_type, fft_lengths):
        """For the partitioner: every dimension keeps its layout, but the last one of a real
        transform, whose size changes (computed whole, and left whole as XLA does)."""
        nd = avals[0].ndim
        real = fft_type in (FftType.RFFT, FftType.IRFFT)
        return [tuple(None if real and k == nd - 1 else k for k in range(nd))]

    def whole_dims(self, avals, fft_type, fft_lengths):
        """The transformed dimensions are computed whole (then split again as the operand
        was, where their sizes allow, as XLA does)."""
        nd = avals[0].ndim
        real = fft_type in (FftType.RFFT, FftType.IRFFT)
        return [tuple(range(nd - len(fft_lengths), nd - 1 if real else nd))]

    def explicit_sharding_rule(self, avals, dims, fft_type, fft_lengths):
        """Over Explicit axes the result keeps the operand's sharding (as in JAX)."""
        return [dims[0]]

    def impl(self, x, fft_type, fft_lengths):
        axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
        if fft_type == FftType.FFT:
            out = np.fft.fftn(x, axes=axes)
            dt = x.dtype
        elif fft_type == FftType.IFFT:
            out = np.fft.ifftn(x, axes=axes)
            dt = x.dtype
        elif fft_type == FftType.RFFT:
            out = np.fft.rfftn(x, axes=axes)
            dt = complex_dtype(x.dtype)
        else:
            out = np.fft.irfftn(x, s=fft_lengths, axes=axes)
            dt = real_dtype(x.dtype)
        return np.asarray(out, dt)

    def abstract_eval(self, x, fft_type, fft_lengths):
        fft_lengths = tuple(fft_lengths)
        n = len(fft_lengths)
        if n > x.ndim:
            raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                             f"dimensions as fft_lengths {fft_lengths}.")
        if fft_type == FftType.RFFT:
            if x.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
                raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
            if x.shape[-n:] != fft_lengths:
                raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal "
                                 f"to fft_lengths {fft_lengths}")
            shape = x.shape[:-n] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
            dtype = complex_dtype(x.dtype)
        elif fft_type == FftType.IRFFT:
            if not np.issubdtype(x.dtype, np.complexfloating):
                raise ValueError(f"IRFFT input must be complex64 or complex128, got {x.dtype}")
            if x.shape[-n:-1] != fft_lengths[:-1]:
                raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal "
                                 f"to all except the last fft_length, got "
                                 f"fft_lengths={fft_lengths}")
            shape = x.shape[:-n] + fft_lengths
            dtype = real_dtype(x.dtype)
        else:
            if not np.issubdtype(x.dtype, np.complexfloating):
                raise ValueError(f"FFT input must be complex64 or complex128, got {x.dtype}")
            if x.shape[-n:] != fft_lengths:
                raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal "
                                 f"to fft_lengths {fft_lengths}")
            shape, dtype = x.shape, x.dtype
        return ShapedArray(shape, dtype, False)

    def jvp(self, primals, tangents, fft_type, fft_lengths):
        (x,), (t,) = primals, tangents
        y = self.bind(x, fft_type=fft_type, fft_lengths=fft_lengths)
        return y, self.bind(u.instantiate(t), fft_type=fft_type, fft_lengths=fft_lengths)

    def transpose(self, ct, x, fft_type, fft_lengths):
        if u.is_zero(ct):
            return [None]
        ct = u.instantiate(ct)
        if fft_type == FftType.RFFT:
            return [_rfft_transpose(ct, fft_lengths)]
        if fft_type == FftType.IRFFT:
            return [_irfft_transpose(ct, fft_lengths)]
        return [fft(ct, fft_type, fft_lengths)]

    def batch(self, size, args, dims, fft_type, fft_lengths):
        x = moveaxis(args[0], dims[0], 0)
        return fft(x, fft_type, fft_lengths), 0


fft_p = Fft()


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
