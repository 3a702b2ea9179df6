"""jax.scipy.signal convolutions and detrending: convolve, correlate, convolve2d, correlate2d,
fftconvolve and detrend.

Direct convolutions are one ``lax.conv_general_dilated`` whose padding selects exactly the
requested window of the full convolution (so 'same' and 'valid' cost no more than they
produce); fftconvolve goes through jnp.fft. Everything is built from existing primitives, so
jit, vmap and grad work through these functions. Output windows follow SciPy: 'same' is
centred on the full result (correlate2d uses SciPy's own centring, offset ``len(in2) // 2``)
and 'valid' keeps the positions where one input fully overlaps the other.
"""
from __future__ import annotations

import operator

import numpy as np

from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.lax.convolution import conv_general_dilated
from jaxlite._src.lax.elementwise import _convert_element_type
from jaxlite._src.numpy.util import (canonicalize_axis, check_arraylike,
                                     promote_dtypes_inexact)

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "detrend", "fftconvolve"]

_MODES = ("full", "same", "valid")


def _check_mode(mode, listed=_MODES):
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(listed)}")


def _is_complex(x):
    return np.issubdtype(x.dtype, np.complexfloating)


def _conj(x):
    return jnp.conjugate(x) if _is_complex(x) else x


_PRECISION_NAMES = ("highest", "float32", "high", "bfloat16_3x", "tensorfloat32", "default",
                    "bfloat16", "fastest")


def _valid_precision_item(p):
    if p is None:
        return True
    if isinstance(p, str):
        # a named precision, or the (upper-case) name of a dot-algorithm preset
        return p.lower() in _PRECISION_NAMES or (p.isupper() and p.isidentifier())
    return not isinstance(p, (int, float, complex, list))


def _check_precision(precision):
    """Reject what lax.conv_general_dilated would not accept as ``precision``, with JAX's
    message (the CPU ignores the value itself)."""
    if isinstance(precision, tuple) and len(precision) == 2:
        ok = all(_valid_precision_item(p) and p is not None for p in precision)
    else:
        ok = not isinstance(precision, tuple) and _valid_precision_item(precision)
    if not ok:
        raise ValueError(
            "Precision argument must be one of:\n- None,\n- a string in "
            f"{list(_PRECISION_NAMES) + [None]},\n- a lax.Precision value,\n- a tuple of two "
            "lax.Precision values or strings,\n- a lax.DotAlgorithmPreset or the name of one "
            "of these presets, or\n- a lax.DotAlgorithm value;\n"
            f"but got {precision}.")


def _conv_window(a, b, starts, lengths, precision):
    """Positions ``[start, start + length)`` (per axis) of the full N-d convolution ``a * b``.

    One conv_general_dilated: the operand that is smaller in every dimension becomes the
    flipped kernel and the padding of the other one is chosen so that output ``i`` is full
    position ``start + i`` (low pad ``k - 1 - start``, high pad ``length - n + start``; either
    may be negative, which crops)."""
    if all(sa >= sb for sa, sb in zip(a.shape, b.shape)):
        big, small = a, b
    else:
        big, small = b, a
    nd = big.ndim
    padding = [(k - 1 - st, ln - n + st)
               for n, k, st, ln in zip(big.shape, small.shape, starts, lengths)]
    kernel = jnp.flip(small)
    out = conv_general_dilated(big[None, None], kernel[None, None], (1,) * nd, padding,
                               precision=precision)
    return out[0, 0]


def _prepare_direct(in1, in2, mode, name, precision):
    """Shared argument checks of the direct (conv-based) functions, in JAX's order."""
    _check_mode(mode)
    check_arraylike(name, in1, in2)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{tuple(in1.shape)} and {tuple(in2.shape)}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    _check_precision(precision)
    s1, s2 = in1.shape, in2.shape
    first_bigger = all(p >= q for p, q in zip(s1, s2))
    if not first_bigger and not all(p <= q for p, q in zip(s1, s2)):
        raise ValueError("One input must be smaller than the other in every dimension.")
    return in1, in2, first_bigger


def _centered_window(n1, n2, mode):
    """(start, length) along one axis of the full convolution for SciPy's mode."""
    full = n1 + n2 - 1
    if mode == "full":
        return 0, full
    length = n1 if mode == "same" else abs(n1 - n2) + 1
    return (full - length) // 2, length


def _direct(in1, in2, mode, precision):
    """Convolution of already checked, promoted inputs (0-d inputs multiply)."""
    if in1.ndim == 0:
        return in1 * in2
    wins = [_centered_window(p, q, mode) for p, q in zip(in1.shape, in2.shape)]
    return _conv_window(in1, in2, [w[0] for w in wins], [w[1] for w in wins], precision)


_METHODS = ("auto", "fft", "direct")


def _check_method(method):
    if method not in _METHODS:
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional convolution of ``in1`` and ``in2`` (``scipy.signal.convolve``).

    ``mode`` is 'full' (every overlap), 'same' (the size of ``in1``, centred) or 'valid'
    (full overlaps only); ``method`` 'auto'/'direct' use ``lax.conv_general_dilated``
    (``precision`` is passed to it), 'fft' uses :func:`fftconvolve`. Both inputs must have
    the same rank, and for the direct method one must be at least as large as the other in
    every dimension. Integer and bool inputs are promoted to an inexact dtype."""
    _check_method(method)
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    in1, in2, _ = _prepare_direct(in1, in2, mode, "convolve", precision)
    return _direct(in1, in2, mode, precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional cross-correlation ``z[k] = sum_l in1[l + k] * conj(in2[l])`` of two
    arrays (``scipy.signal.correlate``), i.e. the convolution of ``in1`` with the flipped,
    conjugated ``in2``. Arguments are those of :func:`convolve`."""
    _check_method(method)
    if method == "fft":
        check_arraylike("correlate", in1, in2)
        in2 = jnp.asarray(in2)
        return fftconvolve(in1, jnp.flip(_conj(in2)), mode=mode)
    in1, in2, _ = _prepare_direct(in1, in2, mode, "correlate", precision)
    return _direct(in1, jnp.flip(_conj(in2)), mode, precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if jnp.ndim(in1) != 2 or jnp.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D convolution (``scipy.signal.convolve2d``) of two 2-D arrays, computed directly with
    ``lax.conv_general_dilated``. Only ``boundary='fill'`` with ``fillvalue=0`` is supported
    (as in JAX); ``mode`` is 'full', 'same' or 'valid'."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    in1, in2, _ = _prepare_direct(in1, in2, mode, "convolve2d", precision)
    return _direct(in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D cross-correlation (``scipy.signal.correlate2d``): ``in2`` is conjugated and slid
    over ``in1``. As in SciPy, 'same' output is centred at offset ``in2.shape // 2`` of the
    full result, and in 'valid' mode with ``in1`` the smaller input the result is that of
    correlating ``in2`` with ``in1``, reversed. Only ``boundary='fill'``, ``fillvalue=0``."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2, first_bigger = _prepare_direct(in1, in2, mode, "correlate2d", precision)
    s1, s2 = in1.shape, in2.shape
    if mode == "full":
        starts, lengths = [0, 0], [p + q - 1 for p, q in zip(s1, s2)]
    elif mode == "same":
        starts, lengths = [q // 2 for q in s2], list(s1)
    elif first_bigger:
        starts, lengths = [q - 1 for q in s2], [p - q + 1 for p, q in zip(s1, s2)]
    else:
        # reversed correlation of in2 with in1 = conj of this correlation's valid part
        starts, lengths = [p - 1 for p in s1], [q - p + 1 for p, q in zip(s1, s2)]
        return _conv_window(_conj(in1), jnp.flip(in2), starts, lengths, precision)
    return _conv_window(in1, jnp.flip(_conj(in2)), starts, lengths, precision)


def _fft_axes(axes, ndim):
    if axes is None:
        return tuple(range(ndim)), None
    given = tuple(axes) if np.iterable(axes) else (axes,)
    out = []
    for a in given:
        a = canonicalize_axis(operator.index(a), ndim)
        if a not in out:
            out.append(a)
    return tuple(out), given


def fftconvolve(in1, in2, mode="full", axes=None):
    """Convolution of two N-d arrays through the FFT (``scipy.signal.fftconvolve``).

    ``axes`` selects the convolved axes (default all); along the other axes the inputs must
    have equal sizes and are convolved independently (no broadcasting). ``mode`` is 'full',
    'same' (size of ``in1``) or 'valid'. Real inputs use rfftn/irfftn, complex ones
    fftn/ifftn; integer inputs are promoted to an inexact dtype."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(jnp.asarray(in1), jnp.asarray(in2))
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    _check_mode(mode, ("same", "full", "valid"))
    conv_axes, given = _fft_axes(axes, in1.ndim)
    mapped = [i for i in range(in1.ndim) if i not in conv_axes]
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={given}")
    if not conv_axes:
        return in1 * in2
    s1 = [in1.shape[a] for a in conv_axes]
    s2 = [in2.shape[a] for a in conv_axes]
    if mode == "valid" and not (all(p >= q for p, q in zip(s1, s2))
                                or all(p <= q for p, q in zip(s1, s2))):
        raise ValueError("For 'valid' mode, One input must be at least as large as the "
                         "other in every dimension.")
    full = [p + q - 1 for p, q in zip(s1, s2)]
    if _is_complex(in1) or _is_complex(in2):
        prod = jnp.fft.fftn(in1, s=full, axes=conv_axes) * jnp.fft.fftn(in2, s=full,
                                                                         axes=conv_axes)
        out = jnp.fft.ifftn(prod, s=full, axes=conv_axes)
    else:
        prod = jnp.fft.rfftn(in1, s=full, axes=conv_axes) * jnp.fft.rfftn(in2, s=full,
                                                                           axes=conv_axes)
        out = jnp.fft.irfftn(prod, s=full, axes=conv_axes)
    if mode == "full":
        return out
    index = [slice(None)] * in1.ndim
    for a, p, q in zip(conv_axes, s1, s2):
        start, length = _centered_window(p, q, mode)
        index[a] = slice(start, start + length)
    return out[tuple(index)]


def _linear_residual(seg):
    """``seg`` minus its least-squares straight line along the last axis (closed form: the
    line through the mean with slope cov(t, seg) / var(t))."""
    n = seg.shape[-1]
    centred = seg - jnp.mean(seg, axis=-1, keepdims=True)
    if n < 2:
        return centred
    t = np.arange(n, dtype=np.float64) - (n - 1) / 2.0
    t_over_var = t / np.dot(t, t)
    real = np.finfo(seg.dtype).dtype
    slope = jnp.sum(centred * jnp.asarray(t_over_var, real), axis=-1, keepdims=True)
    return centred - slope * jnp.asarray(t, real)


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """Remove a constant (``type='constant'``: the mean) or a least-squares line
    (``type='linear'``) along ``axis`` (``scipy.signal.detrend``). For 'linear', ``bp``
    gives breakpoints (concrete ints in ``[0, n]``): each piece between them gets its own
    line. ``overwrite_data`` is not supported (JAX arrays are immutable)."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    data = jnp.asarray(data)
    if data.ndim == 0 or not -data.ndim <= operator.index(axis) < data.ndim:
        raise IndexError(f"detrend: axis {axis} is out of range for an array of shape "
                         f"{tuple(data.shape)}; pass an axis with -ndim <= axis < ndim.")
    (data,) = promote_dtypes_inexact(data)
    axis = canonicalize_axis(axis, data.ndim)
    if type == "constant":
        return data - jnp.mean(data, axis=axis, keepdims=True)
    if np.dtype(data.dtype) in (np.dtype(np.float16), np.dtype(jnp.bfloat16)):
        raise NotImplementedError(f"detrend(type='linear') does not support {data.dtype} "
                                  "(as in JAX, whose least-squares solver lacks it); cast "
                                  "the data to float32 first.")
    n = data.shape[axis]
    if n == 0:
        return data
    bps = np.unique(np.concatenate([[0], np.ravel(np.asarray(bp)), [n]]).astype(np.int64))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    moved = jnp.moveaxis(data, axis, -1)
    pieces = [_linear_residual(moved[..., lo:hi]) for lo, hi in zip(bps[:-1], bps[1:])]
    out = pieces[0] if len(pieces) == 1 else jnp.concatenate(pieces, axis=-1)
    # JAX keeps a weakly typed input's weak type here (not for type='constant')
    out = _convert_element_type(out, out.dtype, weak_type=_weak(data))
    return jnp.moveaxis(out, -1, axis)


def _weak(x):
    return bool(getattr(x, "weak_type", False))
