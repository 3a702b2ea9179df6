"""XLA:CPU's float32 ``rsqrt`` as the random samplers use it, and the C library's ``logf``
that XLA's constant folder uses.

``rsqrt``: processor-dependent in XLA:CPU (an estimate instruction and Newton steps, or a
division); ``cpu_math.rsqrt`` reproduces it and documents the forms. The samplers'
``c = 1/3 / sqrt(d)`` is compiled this way (XLA rewrites a division by a square root into
a product with ``rsqrt``). This module keeps the form chosen for this process (``_state``)
so tests can substitute another one.
"""
from __future__ import annotations

import threading

import numpy as np

from jaxlite._src.cpu_math import rsqrt as CR
from jaxlite._src.cpu_math.trig import _libm

__all__ = ["RsqrtForm", "folded_log_f32", "has_hw_rsqrt", "rsqrt_estimate_f32", "rsqrt_f32",
           "rsqrt_form"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

_state = {}
_lock = threading.Lock()

RsqrtForm = CR.RsqrtForm


def _choose():
    """(the form, numba's estimate loop or None): ``cpu_math.rsqrt``'s choice."""
    return CR.choose()


def _chosen():
    if "form" not in _state:
        with _lock:
            if "form" not in _state:
                _state["form"], _state["fn"] = _choose()
    return _state["form"], _state["fn"]


def rsqrt_form() -> RsqrtForm:
    """How XLA:CPU's ``rsqrt`` is reproduced on this processor (``cpu_math.rsqrt``)."""
    return _chosen()[0]


def has_hw_rsqrt() -> bool:
    """Whether the processor's reciprocal square root estimate is used here."""
    return _chosen()[1] is not None


def rsqrt_estimate_f32(x):
    """The processor's float32 reciprocal square root estimates of ``x`` (``rsqrtss``), or
    the correctly rounded values where the instruction is not used."""
    x = np.ascontiguousarray(x, _F32)
    fn = _chosen()[1]
    if fn is None:
        with np.errstate(all="ignore"):
            return (1.0 / np.sqrt(x.astype(_F64))).astype(_F32)
    flat = x.reshape(-1)
    out = np.empty_like(flat)
    if flat.size:
        fn(flat, out)
    return out.reshape(x.shape)


def rsqrt_f32(x):
    """XLA:CPU's float32 ``rsqrt`` on this processor (``rsqrt_form``; ``cpu_math.rsqrt``)."""
    return CR.rsqrt_by(x, *_chosen())


def folded_log_f32(x):
    """``log`` of float32 values as XLA's constant folder computes it (the C library's
    ``logf``; the float64 logarithm rounded to float32 without a C library)."""
    x = np.asarray(x, _F32)
    fn = _libm("logf", 1)
    with np.errstate(all="ignore"):
        if fn is None:
            return np.log(x.astype(_F64)).astype(_F32)
        vals, where = np.unique(x.reshape(-1), return_inverse=True)
        logs = np.array([fn(float(v)) for v in vals], _F32)
        return logs[where].reshape(x.shape)
