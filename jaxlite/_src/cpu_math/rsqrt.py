"""XLA:CPU's float32 ``rsqrt`` in NumPy, bit for bit on this processor.

XLA:CPU (jax 0.10.2; ``xla/codegen/intrinsic/rsqrt.cc``) does not compute ``1 / sqrt(x)``.
What it computes depends on the processor, through the LLVM target features of the host
CPU that it compiles for:

- x86-64 with AVX: the processor's reciprocal square root *estimate* (``rsqrtss`` /
  ``vrsqrtps``, about 12 bits, and not the same bits on every processor family) refined by
  Newton-Raphson steps ``h = (x y) y - 1; y = (-y / 2) h + y``: **two** steps, or **one**
  on AMD processors, which XLA recognises by the ``+sse4a`` feature (AMD's estimate is
  more accurate). With FMA (``+fma``) LLVM fuses both multiply-adds of a step; without it
  each operation is rounded. Zeros, subnormals, infinities and negative inputs keep the raw
  estimate.
- no AVX (an older x86-64, or another architecture): ``1 / sqrt(x)`` in float32, the
  square root and the division each rounded, with subnormal inputs read as zeros (DAZ).

AVX-512 processors too: XLA's default vectors are 256 bits wide (``prefer-vector-width``),
where it emits ``llvm.x86.sse.rsqrt.ss`` / ``vrsqrtps`` (seen in its LLVM IR on an AMD EPYC
with AVX-512); AVX-512's 14-bit ``vrsqrt14ps`` is only used for 16-wide vectors
(``--xla_cpu_prefer_vector_width=512``), which is not reproduced.

jaxlite picks the same form at run time (``rsqrt_form``): the features come from LLVM's
host CPU detection (``llvmlite``'s, the query XLA makes), the estimate from the same
instruction compiled by LLVM through numba (``nb_common``). Checked bit for bit against JAX:
two fused steps on an Intel Xeon (Cascade Lake, AVX-512), where the division
(``--xla_cpu_max_isa=SSE4_2``) and the unfused steps (``--xla_cpu_max_isa=AVX``) were also
checked; one fused step on AMD processors (AVX2, and an AVX-512 EPYC). Not checked on a
real CPU without AVX or on another architecture. Where the estimate is needed but cannot
be had (numba not installed or off, ``JAXLITE_NUMBA=0``; LLVM cannot name the host's
features) or with ``JAXLITE_HW_RSQRT=0``, the correctly rounded value is used.
"""
from __future__ import annotations

import os
import platform
import threading
from typing import NamedTuple

import numpy as np

from jaxlite._src.cpu_math import accel
from jaxlite._src.cpu_math.fma import fma_f32_np

__all__ = ["RsqrtForm", "choose", "newton_step", "rsqrt_by", "rsqrt_f32", "rsqrt_form"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_TINY = np.float32(np.finfo(np.float32).tiny)
_state = {}
_lock = threading.RLock()     # (rsqrt_nb asks for the form while it is being chosen)


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


def choose():
    """``(form, estimate loop or None)`` for this processor: the loop is numba's
    ``nb_common.rsqrt_estimate_kernel(x, out)`` where the form needs the estimate."""
    if os.environ.get("JAXLITE_HW_RSQRT", "1") == "0":
        return _exact("JAXLITE_HW_RSQRT=0")
    if platform.machine().lower() not in ("x86_64", "amd64"):
        # XLA's rsqrt needs AVX; elsewhere it emits 1 / sqrt(x)
        return RsqrtForm("divide", 0, False, "not x86-64"), None
    if not (accel._ON and accel._importable()):
        return _exact("numba is not available")
    try:
        from jaxlite._src.cpu_math import nb_common
        feats = nb_common.host_cpu_features()
    except Exception as e:  # noqa: BLE001 - LLVM could not read the host's features
        return _exact(f"host CPU features unknown ({e})")
    if "avx" not in feats:
        return RsqrtForm("divide", 0, False, "x86-64 without AVX"), None
    fn = nb_common.rsqrt_estimate_kernel
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
                form, fn = choose()
                _state["fn"] = fn
                _state["form"] = form
    return _state["form"], _state["fn"]


def rsqrt_form() -> RsqrtForm:
    """How XLA:CPU's ``rsqrt`` is reproduced on this processor (the module docstring)."""
    return _chosen()[0]


def newton_step(x, y, fused):
    """XLA's step ``h = (x y) y - 1; y = (-y / 2) h + y`` (multiply-adds fused or not)."""
    half_y = y * np.float32(-0.5)
    if fused:
        h = fma_f32_np(x * y, y, np.float32(-1))
        return fma_f32_np(half_y, h, y)
    return half_y * ((x * y) * y + np.float32(-1)) + y


def rsqrt_by(x, form, fn):
    """float32 ``rsqrt`` of the float32 array ``x`` in ``form`` (``fn``: the estimate loop
    it needs): the estimate refined by its Newton steps for positive normal inputs (other
    inputs keep the estimate), or float32 ``1 / sqrt(x)`` with subnormals flushed, or the
    correctly rounded value."""
    x = np.asarray(x, _F32)
    with np.errstate(all="ignore"):
        if form.method == "divide":
            xf = np.where(np.abs(x) < _TINY, x * np.float32(0), x)
            return np.asarray(np.float32(1) / np.sqrt(xf), _F32)
        if fn is None or form.method == "exact":
            return np.asarray(1.0 / np.sqrt(x.astype(_F64)), _F32)
        flat = np.ascontiguousarray(x).reshape(-1)
        y0 = np.empty_like(flat)
        if flat.size:
            fn(flat, y0)
        y = y0
        for _ in range(form.steps):
            y = newton_step(flat, y, form.fused)
        refine = (flat >= _TINY) & (flat < np.float32(np.inf))
        return np.where(refine, y, y0).astype(_F32).reshape(x.shape)


def rsqrt_f32(x):
    """XLA:CPU's float32 ``rsqrt`` of the float32 array ``x`` on this processor
    (``rsqrt_form``; a new array)."""
    form, fn = _chosen()
    return rsqrt_by(x, form, fn)
