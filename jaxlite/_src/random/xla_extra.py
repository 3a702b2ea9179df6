"""XLA:CPU's float32 ``rsqrt``, and the C library's ``logf`` that XLA's constant folder uses.

``rsqrt``: XLA:CPU does not compute ``1 / sqrt(x)``. On x86-64 it takes the processor's
reciprocal square root *estimate* (the SSE ``rsqrtss`` instruction, about 12 bits, and not
the same bits on every processor family) and refines it with one Newton-Raphson step,
``y = y0 + (-y0 / 2) (x y0 y0 - 1)`` with the inner and outer multiply-adds fused; zeros,
subnormals, infinities and negative inputs keep the raw estimate. The result is within a
few ulp of the true value but differs from the correctly rounded one for about one float32
in five, and the samplers' ``c = 1/3 / sqrt(d)`` is compiled this way (XLA rewrites a
division by a square root into a product with ``rsqrt``). To give XLA's bits, the estimate
here comes from the same instruction, compiled by LLVM through numba (the optional
accelerator; ``xla_numba.rsqrt_estimate_kernel``) on x86-64. Where that is impossible
(numba not installed or turned off with ``JAXLITE_NUMBA=0``, another architecture, or
``JAXLITE_HW_RSQRT=0``) the correctly rounded value is used instead, and gamma-based
samples with runtime shape parameters then differ from JAX's in the last bit for a few
per cent of them.

"""
from __future__ import annotations

import os
import platform
import threading

import numpy as np

from jaxlite._src.random import xla_math as X

__all__ = ["rsqrt_f32", "rsqrt_estimate_f32", "folded_log_f32", "has_hw_rsqrt"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_TINY = np.float32(np.finfo(np.float32).tiny)

_state = {}
_lock = threading.Lock()


def _load_estimator():
    """numba's compiled estimate loop, or None where it cannot be used."""
    if os.environ.get("JAXLITE_HW_RSQRT", "1") == "0":
        return None
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    from jaxlite._src.random import accel
    mod = accel.numba_module(accel.NUMBA_MIN)     # loads numba if installed and allowed
    if mod is None:
        return None
    fn = mod.rsqrt_estimate_kernel
    probe = np.array([4.0, 1.0], _F32)
    out = np.zeros(2, _F32)
    fn(probe, out)
    # an estimate of 1/2 and 1 good to ~12 bits, or something is wrong: do not use it
    if not np.all(np.abs(out * np.array([2, 1], _F32) - 1) < 2.0 ** -10):
        return None
    return fn


def _estimator():
    if "fn" not in _state:
        with _lock:
            if "fn" not in _state:
                _state["fn"] = _load_estimator()
    return _state["fn"]


def has_hw_rsqrt() -> bool:
    """Whether the processor's reciprocal square root estimate is available here."""
    return _estimator() is not None


def rsqrt_estimate_f32(x):
    """The processor's float32 reciprocal square root estimates of ``x`` (``rsqrtss``), or
    the correctly rounded values where the instruction cannot be used."""
    x = np.ascontiguousarray(x, _F32)
    fn = _estimator()
    if fn is None:
        with np.errstate(all="ignore"):
            return (1.0 / np.sqrt(x.astype(_F64))).astype(_F32)
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    if flat.size:
        fn(flat, out)
    return out.reshape(x.shape)


def rsqrt_f32(x):
    """XLA:CPU's float32 ``rsqrt``: the estimate refined by one fused Newton-Raphson step
    for positive normal inputs (other inputs keep the estimate)."""
    x = np.asarray(x, _F32)
    y0 = rsqrt_estimate_f32(x)
    if _estimator() is None:
        return y0
    with np.errstate(all="ignore"):
        t = X.fma_f32(x * y0, y0, np.float32(-1))
        y = X.fma_f32(y0 * np.float32(-0.5), t, y0)
    refine = (x >= _TINY) & (x < np.float32(np.inf))
    return np.where(refine, y, y0).astype(_F32)


def folded_log_f32(x):
    """``log`` of float32 values as XLA's constant folder computes it (the C library's
    ``logf``; the float64 logarithm rounded to float32 without a C library)."""
    x = np.asarray(x, _F32)
    fn = X._libm("logf", 1)
    with np.errstate(all="ignore"):
        if fn is None:
            return np.log(x.astype(_F64)).astype(_F32)
        vals, where = np.unique(x.reshape(-1), return_inverse=True)
        logs = np.array([fn(float(v)) for v in vals], _F32)
        return logs[where].reshape(x.shape)
