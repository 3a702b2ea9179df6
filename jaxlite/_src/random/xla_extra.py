"""XLA:CPU's float32 ``rsqrt``, and the C library's ``logf`` that XLA's constant folder uses.

``rsqrt``: XLA:CPU (jax 0.10.2; ``xla/codegen/intrinsic/rsqrt.cc``) does not compute
``1 / sqrt(x)``. What it computes depends on the processor, through the LLVM target
features of the host CPU that it compiles for:

- x86-64 with AVX: the processor's reciprocal square root *estimate* (``rsqrtss`` /
  ``vrsqrtps``, about 12 bits, and not the same bits on every processor family) refined by
  Newton-Raphson steps ``h = (x y) y - 1; y = (-y / 2) h + y``: **two** steps, or **one**
  on AMD processors, which XLA recognises by the ``+sse4a`` feature (AMD's estimate is
  more accurate). With FMA (``+fma``) LLVM fuses both multiply-adds of a step; without it
  each operation is rounded. Zeros, subnormals, infinities and negative inputs keep the raw
  estimate. The result is within a few ulp of the true value but is not the correctly
  rounded one for about one float32 in seven (two steps) or five (one step).
- no AVX (an older x86-64, or another architecture): ``1 / sqrt(x)`` in float32, the
  square root and the division each rounded, with subnormal inputs read as zeros (DAZ).

(One more form, not reproduced: with ``--xla_cpu_prefer_vector_width=512`` on an AVX-512
processor XLA computes 16-wide blocks with the 14-bit ``vrsqrt14ps`` and two steps; its
default vectors are 256 bits wide and use ``vrsqrtps``, whose bits equal ``rsqrtss``'s.)

The samplers' ``c = 1/3 / sqrt(d)`` is compiled this way (XLA rewrites a division by a
square root into a product with ``rsqrt``). jaxlite picks the same form at run time
(``rsqrt_form``): the features come from LLVM's host CPU detection
(``llvmlite.binding.get_host_cpu_features``, the same query XLA makes), the estimate from
the same instruction compiled by LLVM through numba (the optional accelerator;
``xla_numba.rsqrt_estimate_kernel``), the steps and the division with NumPy. Checked bit
for bit against JAX: two fused steps on an Intel Xeon (Cascade Lake, AVX-512), which is
also where the division (``--xla_cpu_max_isa=SSE4_2``) and the unfused steps
(``--xla_cpu_max_isa=AVX``) were checked; one fused step on an AMD processor with AVX2
(where the first version of this module, which always took one step, was checked). Not
checked on a real CPU without AVX or on another architecture.

Where the estimate is needed but cannot be had (numba not installed or turned off with
``JAXLITE_NUMBA=0``, or LLVM cannot name the host's features), or with
``JAXLITE_HW_RSQRT=0``, the correctly rounded value is used instead, and gamma-based samples
with runtime shape parameters then differ from JAX's in the last bit for a few per cent of
them.
"""
from __future__ import annotations

import os
import platform
import threading
from typing import NamedTuple

import numpy as np

from jaxlite._src.random import xla_math as X

__all__ = ["rsqrt_f32", "rsqrt_estimate_f32", "rsqrt_form", "RsqrtForm", "folded_log_f32",
           "has_hw_rsqrt"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_TINY = np.float32(np.finfo(np.float32).tiny)

_state = {}
_lock = threading.Lock()


class RsqrtForm(NamedTuple):
    """How ``rsqrt_f32`` computes, chosen for this processor as XLA:CPU chooses.

    ``method``: ``"estimate"`` (the processor's estimate and ``steps`` Newton steps, their
    multiply-adds ``fused`` or not), ``"divide"`` (float32 ``1 / sqrt(x)``) or ``"exact"``
    (the correctly rounded value: jaxlite cannot reproduce XLA here); ``reason`` says why.
    """
    method: str
    steps: int
    fused: bool
    reason: str


def _exact(reason):
    return RsqrtForm("exact", 0, False, reason), None


def _choose():
    """(the form, numba's estimate loop or None)."""
    if os.environ.get("JAXLITE_HW_RSQRT", "1") == "0":
        return _exact("JAXLITE_HW_RSQRT=0")
    if platform.machine().lower() not in ("x86_64", "amd64"):
        # XLA's rsqrt needs AVX; elsewhere it emits 1 / sqrt(x)
        return RsqrtForm("divide", 0, False, "not x86-64"), None
    from jaxlite._src.random import accel
    mod = accel.numba_module(accel.NUMBA_MIN)     # loads numba if installed and allowed
    if mod is None:
        return _exact("numba is not available")
    try:
        feats = mod.host_cpu_features()
    except Exception as e:                        # LLVM could not read the host's features
        return _exact(f"host CPU features unknown ({e})")
    if "avx" not in feats:
        return RsqrtForm("divide", 0, False, "x86-64 without AVX"), None
    fn = mod.rsqrt_estimate_kernel
    probe = np.array([4.0, 1.0], _F32)
    out = np.zeros(2, _F32)
    fn(probe, out)
    # an estimate of 1/2 and 1 good to ~12 bits, or something is wrong: do not use it
    if not np.all(np.abs(out * np.array([2, 1], _F32) - 1) < 2.0 ** -10):
        return _exact("the rsqrt estimate instruction misbehaves")
    # XLA's test for an AMD processor (whose estimate is more accurate): SSE4a, which
    # every AMD processor since 2007 has and no Intel one
    amd = "sse4a" in feats
    fused = "fma" in feats or "fma4" in feats     # LLVM contracts a * b + c into an FMA
    form = RsqrtForm("estimate", 1 if amd else 2, fused,
                     "x86-64 with AVX, " + ("AMD (SSE4a)" if amd else "not AMD (no SSE4a)")
                     + (", FMA" if fused else ", no FMA"))
    return form, fn


def _chosen():
    if "form" not in _state:
        with _lock:
            if "form" not in _state:
                _state["form"], _state["fn"] = _choose()
    return _state["form"], _state["fn"]


def rsqrt_form() -> RsqrtForm:
    """How XLA:CPU's ``rsqrt`` is reproduced on this processor (see the module docstring)."""
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


def _newton_step(x, y, fused):
    """XLA's step ``h = (x y) y - 1; y = (-y / 2) h + y`` (multiply-adds fused or not)."""
    half_y = y * np.float32(-0.5)
    if fused:
        h = X.fma_f32(x * y, y, np.float32(-1))
        return X.fma_f32(half_y, h, y)
    return half_y * ((x * y) * y + np.float32(-1)) + y


def rsqrt_f32(x):
    """XLA:CPU's float32 ``rsqrt`` on this processor (``rsqrt_form``): the estimate refined
    by its Newton steps for positive normal inputs (other inputs keep the estimate), or
    float32 ``1 / sqrt(x)`` of the input with subnormals flushed, or the correctly rounded
    value where XLA's cannot be reproduced."""
    x = np.asarray(x, _F32)
    form = rsqrt_form()
    with np.errstate(all="ignore"):
        if form.method == "divide":
            return np.asarray(np.float32(1) / np.sqrt(X._flush(x)), _F32)
        y0 = rsqrt_estimate_f32(x)
        if form.method == "exact":
            return y0
        y = y0
        for _ in range(form.steps):
            y = _newton_step(x, y, form.fused)
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
