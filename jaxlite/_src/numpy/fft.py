"""jax.numpy.fft: NumPy's FFT API over the ``fft`` primitive (lax.fft).

Transforms of up to three axes are one ``fft`` equation; more axes are split into groups of
at most three as JAX does. ``s`` crops or zero-pads the input, ``axes`` are moved to the end
and back, and ``norm`` ("backward", "ortho", "forward") scales the result.
"""
from __future__ import annotations

import operator

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.lax import fft as lax_fft
from jaxlite._src.lax.fft import FftType
from jaxlite._src.numpy import (array_edit, creation, joining, reductions, scalar_types, shape_ops,
                                ufuncs)
from jaxlite._src.numpy.util import check_arraylike

__all__ = ["fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn",
           "ifftn", "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]


def _fft_norm(s, func_name, norm):
    if norm == "backward":
        return creation.array(1)
    s = creation.asarray(s)
    if not scalar_types.issubdtype(s.dtype, scalar_types.inexact):
        s = s.astype(dtypes.canonicalize_dtype(np.float64))
    if norm == "ortho":
        r = ufuncs.sqrt(reductions.prod(s))
        return r if func_name.startswith("i") else 1 / r
    if norm == "forward":
        r = reductions.prod(s)
        return r if func_name.startswith("i") else 1 / r
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _fft_core(func_name, fft_type, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{func_name}"
    check_arraylike(full_name, a)
    arr = creation.asarray(a)
    if s is not None:
        s = tuple(map(operator.index, s))
        if any(x <= 0 for x in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if orig_axes is not None:
        axes = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = shape_ops.moveaxis(arr, orig_axes, axes)
    if s is not None:
        in_s = list(arr.shape)
        for axis, x in zip(axes, s):
            in_s[axis] = x
        if fft_type == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(x) for x in in_s)]
        arr = array_edit.pad(arr, [(0, x - y) for x, y in zip(in_s, arr.shape)])
    else:
        if fft_type == FftType.IRFFT:
            s = [arr.shape[axis] for axis in axes[:-1]]
            if axes:
                s += [max(0, 2 * (arr.shape[axes[-1]] - 1))]
        else:
            s = [arr.shape[axis] for axis in axes]
    out = _fft_core_nd(arr, fft_type, s)
    if norm is not None:
        out = out * _fft_norm(creation.array(s, dtype=out.dtype), func_name, norm)
    if orig_axes is not None:
        out = shape_ops.moveaxis(out, axes, orig_axes)
    return out


def _fft_core_nd(arr, fft_type, s):
    if len(s) <= 3:
        return lax_fft.fft(arr, fft_type, tuple(s))
    n = 2 if len(s) == 4 else 3
    src = tuple(range(arr.ndim - len(s), arr.ndim - n))
    dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if fft_type in (FftType.RFFT, FftType.FFT):
        arr = lax_fft.fft(arr, fft_type, tuple(s)[-n:])
        arr = shape_ops.moveaxis(arr, src, dst)
        arr = _fft_core_nd(arr, FftType.FFT, s[:-n])
        arr = shape_ops.moveaxis(arr, dst, src)
    else:
        arr = shape_ops.moveaxis(arr, src, dst)
        arr = _fft_core_nd(arr, FftType.IFFT, s[:-n])
        arr = shape_ops.moveaxis(arr, dst, src)
        arr = lax_fft.fft(arr, fft_type, tuple(s)[-n:])
    return arr


def fftn(a, s=None, axes=None, norm=None):
    """N-dimensional complex FFT over ``axes`` (default: all, or the last ``len(s)``)."""
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """N-dimensional inverse complex FFT."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """N-dimensional FFT of real input (the last axis keeps n//2+1 frequencies)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of rfftn: real output of shape ``s`` (last axis 2*(m-1) by default)."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _axis_check_1d(func_name, axis):
    full_name = f"jax.numpy.fft.{func_name}"
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"{full_name} does not support multiple axes. Please use {full_name}n. "
                         f"Got axis = {axis!r}.")


def _fft_core_1d(func_name, fft_type, a, n, axis, norm):
    _axis_check_1d(func_name, axis)
    axes = None if axis is None else [axis]
    s = None if n is None else [n]
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a, n=None, axis=-1, norm=None):
    """One-dimensional complex FFT along ``axis`` (input cropped/zero-padded to ``n``)."""
    return _fft_core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    """One-dimensional inverse complex FFT along ``axis``."""
    return _fft_core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    """One-dimensional FFT of real input: the n//2+1 non-negative frequencies."""
    return _fft_core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    """Inverse of rfft: ``n`` real samples (default 2*(m-1))."""
    return _fft_core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """FFT of a Hermitian-symmetric signal given by its first half: a real spectrum."""
    conj_a = ufuncs.conj(a)
    _axis_check_1d("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a, n=None, axis=-1, norm=None):
    """Inverse of hfft: the first half of the Hermitian spectrum of a real signal."""
    _axis_check_1d("ihfft", axis)
    arr = creation.asarray(a)
    nn = arr.shape[axis] if n is None else n
    out = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return ufuncs.conj(out) * (1 / nn)


def _fft_core_2d(func_name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. "
                         f"Got axes = {axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional complex FFT over ``axes``."""
    return _fft_core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional inverse complex FFT over ``axes``."""
    return _fft_core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional FFT of real input."""
    return _fft_core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """Inverse of rfft2."""
    return _fft_core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single value. "
                         f"Got d = {list(d)}.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    [0, 1, ..., n//2-1, -n//2, ..., -1] / (d*n) (NumPy's order)."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtype
    dtype = np.finfo(dtypes.canonicalize_dtype(
        dtype if scalar_types.issubdtype(dtype, scalar_types.inexact)
        else dtypes.default_float_dtype())).dtype
    i = creation.arange(n, dtype=dtype)
    k = (i + n // 2) % n - n // 2
    result = k.astype(dtype) / creation.array(d * n, dtype=dtype)
    return result.astype(out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of an ``n``-point rfft: [0, 1, ..., n//2] / (d*n)."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("rfftfreq", n, d)
    k = creation.arange(0, n // 2 + 1 if n % 2 == 0 else (n - 1) // 2 + 1, dtype=dtype)
    return k / creation.array(d * n, dtype=dtype)


def _shifts(x, axes, sign):
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [sign * (dim // 2) for dim in x.shape]
    elif isinstance(axes, int):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return joining.roll(x, shift, axes)


def fftshift(x, axes=None):
    """Move the zero frequency to the centre (roll each axis by half its length)."""
    check_arraylike("fftshift", x)
    return _shifts(creation.asarray(x), axes, 1)


def ifftshift(x, axes=None):
    """Inverse of fftshift."""
    check_arraylike("ifftshift", x)
    return _shifts(creation.asarray(x), axes, -1)
