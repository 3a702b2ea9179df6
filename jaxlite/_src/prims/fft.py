"""The ``fft`` primitive (as JAX's ``lax.fft_p``): complex/real discrete Fourier transforms over
the trailing ``len(fft_lengths)`` dimensions.

Parameters: ``fft_type`` (an ``FftType``: FFT, IFFT, RFFT, IRFFT; printed as its integer as in
JAX) and ``fft_lengths`` (tuple of ints). The primitive is linear: its JVP applies it to the
tangent, its transpose is an FFT of the cotangent (with the Hermitian mask for RFFT/IRFFT, as
JAX), and it batches by moving the batch dimension to the front.
"""
from __future__ import annotations

import enum

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import moveaxis

__all__ = ["fft_p", "FftType"]


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
        from jaxlite._src.lax import fft as lax_fft
        ct = u.instantiate(ct)
        if fft_type == FftType.RFFT:
            return [lax_fft._rfft_transpose(ct, fft_lengths)]
        if fft_type == FftType.IRFFT:
            return [lax_fft._irfft_transpose(ct, fft_lengths)]
        return [lax_fft.fft(ct, fft_type, fft_lengths)]

    def batch(self, size, args, dims, fft_type, fft_lengths):
        from jaxlite._src.lax import fft as lax_fft
        x = moveaxis(args[0], dims[0], 0)
        return lax_fft.fft(x, fft_type, fft_lengths), 0


fft_p = Fft()
