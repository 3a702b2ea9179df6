"""jax.scipy.signal spectral analysis: stft, istft, csd and welch.

The signal is cut into overlapping segments with one gather (static segment indices),
each segment is detrended and windowed, and jnp.fft transforms them; csd/welch average the
scaled cross spectra over segments (mean, or median with its bias correction), istft inverts
the segments and overlap-adds them with a scatter-add. Windows are SciPy's
(``scipy.signal.get_window``, periodic), computed once as constants; an explicit window
array may be traced. Parameter checks, warnings and output layout follow JAX (which follows
SciPy): the frequency axis replaces the analysed axis and segment times come last.
"""
from __future__ import annotations

import warnings

import numpy as np

from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.core import dtypes
from jaxlite._src.numpy.util import canonicalize_axis, promote_dtypes_inexact
from jaxlite._src.scipy.signal import detrend as _detrend

__all__ = ["csd", "istft", "stft", "welch"]

_BOUNDARIES = ["even", "odd", "constant", "zeros", None]


# ----------------------------------------------------------------------------- windows

def _named_window(window, nperseg):
    """SciPy's periodic window of length ``nperseg`` as a float64 NumPy array (SciPy's
    errors for unknown names or missing parameters pass through, as in JAX)."""
    import scipy.signal as sps
    return np.asarray(sps.get_window(window, nperseg, fftbins=True), np.float64)


def _window_array(window):
    if window is None:
        raise ValueError("None is not a valid value for jnp.array (window: pass a name "
                         "such as 'hann', a tuple such as ('tukey', 0.25), or a 1-D array)")
    win = jnp.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    return win


def _triage_segments(window, nperseg, input_length):
    """Resolve ``nperseg`` and the window: with a named window, nperseg=None means the
    whole input (as JAX does; SciPy would use 256) and a larger nperseg is capped at the
    input length with a warning; an array window fixes nperseg to its length. Returns
    (window array or None, nperseg)."""
    if isinstance(window, (str, tuple)):
        if nperseg is None:
            return None, input_length
        nperseg = int(nperseg)
        if nperseg > input_length:
            warnings.warn(f"nperseg={nperseg} is greater than input_length={input_length}, "
                          f"using nperseg={input_length}", UserWarning, stacklevel=4)
            nperseg = input_length
        return None, nperseg
    win = _window_array(window)
    if input_length < win.shape[-1]:
        raise ValueError("window is longer than input signal")
    if nperseg is None:
        nperseg = win.shape[0]
    elif int(nperseg) != win.shape[0]:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, int(nperseg)


def _window_values(window, win, nperseg, real_dtype):
    if win is None:
        return jnp.asarray(_named_window(window, nperseg).astype(real_dtype))
    return win.astype(real_dtype)


# ----------------------------------------------------------------------------- helpers

def _real_dtype(dt):
    return np.finfo(dt).dtype if np.issubdtype(dt, np.inexact) else np.dtype(dt)


def _is_complex(x):
    return np.issubdtype(x.dtype, np.complexfloating)


def _is_concrete_number(v):
    return isinstance(v, (int, float, np.number)) and not isinstance(v, bool)


def _scaled_axis(base, fs, real_dtype):
    """``base / fs`` as ``real_dtype`` (in float64 NumPy when fs is a plain number)."""
    if _is_concrete_number(fs):
        return jnp.asarray((base / float(fs)).astype(real_dtype))
    return (jnp.asarray(base.astype(real_dtype)) / fs).astype(real_dtype)


def _extend(x, n, kind):
    """Extend the last axis of ``x`` by ``n`` samples at both ends (SciPy's even, odd,
    constant or zero extension)."""
    if n == 0:
        return x
    if kind == "zeros":
        pad = [(0, 0)] * (x.ndim - 1) + [(n, n)]
        return jnp.pad(x, pad)
    if kind == "constant":
        left = jnp.repeat(x[..., :1], n, axis=-1)
        right = jnp.repeat(x[..., -1:], n, axis=-1)
        return jnp.concatenate([left, x, right], axis=-1)
    length = x.shape[-1]
    if n > length - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1 ({length - 1}).")
    left = jnp.flip(x[..., 1:n + 1], axis=-1)
    right = jnp.flip(x[..., length - n - 1:length - 1], axis=-1)
    if kind == "odd":
        left = 2 * x[..., :1] - left
        right = 2 * x[..., -1:] - right
    return jnp.concatenate([left, x, right], axis=-1)


def _detrend_fn(detrend):
    """The per-segment detrending: a custom function gets all segments at once, shaped
    (..., nseg, nperseg) with the samples last (as SciPy hands it each segment)."""
    if not detrend and not isinstance(detrend, str):
        return lambda d: d
    if isinstance(detrend, str):
        return lambda d: _detrend(d, type=detrend, axis=-1)
    if callable(detrend):
        return detrend
    raise ValueError(f"Unsupported detrend type: {detrend}")


def _segment_spectra(x, win, nperseg, nstep, nfft, detrend_fn, onesided):
    """FFT of the detrended, windowed segments of the last axis: (..., nseg, nfreq)."""
    nseg = (x.shape[-1] - nperseg) // nstep + 1
    idx = np.arange(nseg)[:, None] * nstep + np.arange(nperseg)[None, :]
    segs = detrend_fn(x[..., idx]) * win
    if onesided:
        return jnp.fft.rfft(segs, n=nfft, axis=-1)
    return jnp.fft.fft(segs, n=nfft, axis=-1)


def _check_counts(nperseg, noverlap, nfft):
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft = nperseg
    elif nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    else:
        nfft = int(nfft)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    return nfft, noverlap


def _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
              axis, mode, boundary=None, padded=False):
    """The shared STFT / cross-spectral-density computation. ``mode`` is 'psd' (conj(X) Y
    per segment, scaled as ``scaling``) or 'stft' (X scaled by 1/sum(win)). Returns
    (freqs, times, result) with the frequency axis at ``axis`` and segments last."""
    if scaling not in ("density", "spectrum"):
        raise ValueError(f"Unknown scaling: {scaling}")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{_BOUNDARIES}")
    same = y is None
    if same:
        (x,) = promote_dtypes_inexact(jnp.asarray(x))
    else:
        x, y = promote_dtypes_inexact(jnp.asarray(x), jnp.asarray(y))
    axis = canonicalize_axis(axis, x.ndim)
    real_dt = _real_dtype(x.dtype)
    if same and mode == "psd":
        out_dt = real_dt
    else:
        out_dt = dtypes.canonicalize_dtype(dtypes.to_complex_dtype(x.dtype))
    win, nperseg = _triage_segments(window, nperseg, x.shape[axis])

    def empty(shape):
        return (jnp.zeros(shape, real_dt), jnp.zeros(shape, real_dt),
                jnp.zeros(shape, out_dt))
    if not same and y.size == 0:
        return empty(y.shape)
    if x.size == 0:
        return empty(x.shape)
    nfft, noverlap = _check_counts(nperseg, noverlap, nfft)
    nstep = nperseg - noverlap
    onesided = bool(return_onesided)
    if onesided and (_is_complex(x) or (not same and _is_complex(y))):
        warnings.warn("Input data is complex, switching to return_onesided=False",
                      UserWarning, stacklevel=3)
        onesided = False

    x = jnp.moveaxis(x, axis, -1)
    if not same:
        if y.ndim != x.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs "
                             f"{y.ndim}).")
        y = jnp.moveaxis(y, axis, -1)
        try:
            outer = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
        except ValueError:
            raise ValueError("x and y cannot be broadcast together.") from None
        n = max(x.shape[-1], y.shape[-1])
        x = jnp.broadcast_to(x, outer + (x.shape[-1],))
        y = jnp.broadcast_to(y, outer + (y.shape[-1],))
        pad = [(0, 0)] * len(outer)
        x = jnp.pad(x, pad + [(0, n - x.shape[-1])])
        y = jnp.pad(y, pad + [(0, n - y.shape[-1])])

    if boundary is not None:
        x = _extend(x, nperseg // 2, boundary)
        if not same:
            y = _extend(y, nperseg // 2, boundary)
    if padded:
        nadd = (-(x.shape[-1] - nperseg) % nstep) % nperseg
        if nadd:
            x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, nadd)])
            if not same:
                y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, nadd)])

    win = _window_values(window, win, nperseg, real_dt)
    # (frequencies first, as JAX computes them: an fs that does not broadcast with them
    # fails there, with lax's TypeError)
    freqs = _freqs(nfft, onesided, fs, real_dt)
    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    else:
        scale = 1.0 / jnp.sum(win) ** 2
    detrend_fn = _detrend_fn(detrend)
    fx = _segment_spectra(x, win, nperseg, nstep, nfft, detrend_fn, onesided)
    if mode == "stft":
        result = fx * jnp.sqrt(scale)
    else:
        fy = fx if same else _segment_spectra(y, win, nperseg, nstep, nfft, detrend_fn,
                                              onesided)
        result = jnp.conjugate(fx) * fy * scale
        if onesided:
            last = -1 if nfft % 2 == 0 else None
            result = result.at[..., 1:last].multiply(2)
        if same:
            result = jnp.real(result)
    result = result.astype(out_dt)
    start = nperseg / 2
    times = np.arange(start, x.shape[-1] - start + 1, nstep, dtype=np.float64)
    if boundary is not None:
        times = times - start
    times = _scaled_axis(times, fs, real_dt)
    result = jnp.moveaxis(jnp.swapaxes(result, -1, -2), -2, axis)
    return freqs, times, result


def _freqs(nfft, onesided, fs, real_dt):
    """FFT sample frequencies of ``nfft`` points at sampling rate ``fs`` (computed in
    float64 NumPy when ``fs`` is a plain number, else as ``k / nfft * fs``)."""
    freq_fn = np.fft.rfftfreq if onesided else np.fft.fftfreq
    if _is_concrete_number(fs):
        return jnp.asarray(freq_fn(nfft, 1.0 / float(fs)).astype(real_dt))
    return (jnp.asarray(freq_fn(nfft, 1.0).astype(real_dt)) * fs).astype(real_dt)


def _median_bias(n):
    """Ratio of the median to the mean of ``n`` exponentially distributed periodogram
    values, ``1 - 1/2 + 1/3 - ... + 1/(2m + 1)`` with ``m = (n - 1) // 2``."""
    k = np.arange(1, (n - 1) // 2 + 1, dtype=np.float64)
    return 1.0 + np.sum(1.0 / (2 * k + 1) - 1.0 / (2 * k))


# ----------------------------------------------------------------------------- public

def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """Short-time Fourier transform (``scipy.signal.stft``).

    Returns ``(f, t, Zxx)``: sample frequencies, segment times and the STFT, whose frequency
    axis replaces ``axis`` of ``x`` and whose segment axis is last. ``boundary`` ('zeros',
    'even', 'odd', 'constant' or None) extends the signal by ``nperseg // 2`` at both ends,
    ``padded`` zero-pads it to a whole number of segments. Complex input switches to a
    two-sided spectrum (with a warning)."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     "spectrum", axis, "stft", boundary=boundary, padded=padded)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
    """Cross power spectral density of ``x`` and ``y`` by Welch's method
    (``scipy.signal.csd``): the scaled ``conj(X) * Y`` of windowed, overlapping segments,
    averaged with ``average`` ('mean', or 'median' with its bias correction). ``y=None``
    gives the power spectral density of ``x``. Returns ``(f, Pxy)``; a shorter input is
    zero-padded and the other dimensions broadcast."""
    if average not in ("mean", "median"):
        raise ValueError(f'average must be "median" or "mean", got {average}')
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, "psd")
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1])
                if _is_complex(pxy):
                    pxy = (jnp.median(jnp.real(pxy), axis=-1)
                           + 1j * jnp.median(jnp.imag(pxy), axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = (pxy / bias).astype(pxy.dtype)
            else:
                pxy = jnp.mean(pxy, axis=-1)
        else:
            pxy = pxy.reshape(pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """Power spectral density of ``x`` by Welch's method (``scipy.signal.welch``): the
    average periodogram of windowed, overlapping, detrended segments. ``scaling`` 'density'
    gives V**2/Hz, 'spectrum' V**2. Returns ``(f, Pxx)`` with ``Pxx`` real."""
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, jnp.real(pxx)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """Inverse short-time Fourier transform (``scipy.signal.istft``): inverse FFT of every
    segment, windowed overlap-add, and division by the overlap-added squared window.

    ``Zxx`` has its frequencies along ``freq_axis`` and segments along ``time_axis``; the
    output signal replaces them (at the time axis's place). ``boundary=True`` removes the
    ``nperseg // 2`` samples that stft's boundary extension added. Returns ``(t, x)``;
    ``x`` is real for a one-sided input, complex otherwise."""
    Zxx = jnp.asarray(Zxx)
    cdt = dtypes.canonicalize_dtype(dtypes.to_complex_dtype(Zxx.dtype))
    Zxx = Zxx.astype(cdt)
    real_dt = _real_dtype(cdt)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, Zxx.ndim)
    time_axis = canonicalize_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    nseg = Zxx.shape[time_axis]
    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg = n_default if nperseg is None else int(nperseg)
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        # an odd nperseg one longer than the default takes no FFT padding (as SciPy)
        nfft = nperseg if (input_onesided and nperseg == n_default + 1) else n_default
    nfft = int(nfft)
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg - noverlap
    if isinstance(window, (str, tuple)):
        win = jnp.asarray(_named_window(window, nperseg).astype(real_dt))
    else:
        win = _window_array(window)
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
        win = win.astype(real_dt)
    if nseg < 1:
        raise TypeError(f"istft: the STFT has no segments along time_axis (shape "
                        f"{tuple(Zxx.shape)}); it needs at least one.")

    outer = [a for a in range(Zxx.ndim) if a not in (freq_axis, time_axis)]
    z = jnp.transpose(Zxx, outer + [time_axis, freq_axis])       # (..., nseg, nfreq)
    if input_onesided:
        frames = jnp.fft.irfft(z, n=nfft, axis=-1)
    else:
        frames = jnp.fft.ifft(z, n=nfft, axis=-1)
    frames = frames[..., :nperseg] * (jnp.sum(win) * win)         # undo stft's 1/sum(win)
    length = (nseg - 1) * nstep + nperseg
    idx = (np.arange(nseg)[:, None] * nstep + np.arange(nperseg)[None, :]).reshape(-1)
    flat = frames.reshape(frames.shape[:-2] + (nseg * nperseg,))
    x = jnp.zeros(flat.shape[:-1] + (length,), flat.dtype).at[..., idx].add(flat)
    wsq = jnp.broadcast_to(win * win, (nseg, nperseg)).reshape(-1)
    norm = jnp.zeros((length,), real_dt).at[idx].add(wsq)
    if boundary:
        half = nperseg // 2
        x = x[..., half:length - half]
        norm = norm[half:length - half]
    x = x / jnp.where(norm > 1e-10, norm, 1.0).astype(real_dt)
    if input_onesided:
        x = jnp.real(x)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        dest = time_axis - 1 if freq_axis < time_axis else time_axis
        x = jnp.moveaxis(x, -1, dest)
    nsamples = x.shape[0]                 # as JAX and SciPy: the length of the first axis
    times = _scaled_axis(np.arange(nsamples, dtype=np.float64), fs, real_dt)
    return times, x
