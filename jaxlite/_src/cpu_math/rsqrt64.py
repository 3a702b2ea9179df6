"""XLA:CPU's float64 ``rsqrt`` in NumPy, bit for bit on this processor.

XLA:CPU (jax 0.10.2, ``xla/codegen/intrinsic/rsqrt.cc``) computes a float64 ``rsqrt`` on
an x86-64 processor with AVX-512 from the processor's 14-bit estimate (``vrsqrt14pd``),
refined by **two** Newton-Raphson steps ``h = (x y) y - 1; y = (-y / 2) h + y`` on every
processor (AMD ones too: XLA takes one step only for AMD's more accurate SSE/AVX float32
estimate), both multiply-adds fused where the processor has FMA. Zeros, subnormals (read
as zeros: DAZ), infinities, negative inputs and NaN keep the raw estimate. Checked bit for
bit against JAX on an AMD EPYC with AVX-512 (1M inputs, random bit patterns among them).

Without AVX-512 (``rsqrt_form64``): ``1 / sqrt(x)`` (the square root and the division
each correctly rounded, subnormal inputs read as zeros), the form XLA's code falls back to
when it cannot use the estimate; not checked on such a processor. Like the float32
``rsqrt`` (``cpu_math.rsqrt``), the estimate comes from the instruction itself, compiled
through numba: where it is needed but cannot be had (numba not installed or off,
``JAXLITE_NUMBA=0``; LLVM cannot name the host's features) or with
``JAXLITE_HW_RSQRT=0``, ``1 / sqrt(x)`` is used.
"""
from __future__ import annotations

import os
import platform
import threading

import numpy as np

from jaxlite._src.cpu_math import accel
from jaxlite._src.cpu_math.rsqrt import RsqrtForm
from jaxlite._src.cpu_math.xla64 import FUSED, TINY64, fma64_np

__all__ = ["choose64", "rsqrt_by64", "rsqrt_f64", "rsqrt_form64"]

F64 = np.dtype(np.float64)
_state = {}
_lock = threading.RLock()


def choose64():
    """``(form, estimate loop or None)`` of the float64 ``rsqrt`` on this processor (the
    loop: numba's ``nb_common.rsqrt14_estimate_kernel(x, out)``)."""
    if os.environ.get("JAXLITE_HW_RSQRT", "1") == "0":
        return RsqrtForm("divide", 0, False, "JAXLITE_HW_RSQRT=0"), None
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return RsqrtForm("divide", 0, False, "not x86-64"), None
    if not (accel._ON and accel._importable()):
        return RsqrtForm("divide", 0, False, "numba is not available"), None
    try:
        from jaxlite._src.cpu_math import nb_common
        feats = nb_common.host_cpu_features()
    except Exception as e:  # noqa: BLE001 - LLVM could not read the host's features
        return RsqrtForm("divide", 0, False, f"host CPU features unknown ({e})"), None
    if not {"avx512f", "avx512vl"} <= feats:
        return RsqrtForm("divide", 0, False, "x86-64 without AVX-512"), None
    fn = nb_common.rsqrt14_estimate_kernel
    probe = np.array([4.0, 1.0], F64)
    out = np.zeros(2, F64)
    fn(probe, out)
    if not np.all(np.abs(out * np.array([2.0, 1.0]) - 1) < 2.0 ** -12):
        return RsqrtForm("divide", 0, False, "the rsqrt14 estimate misbehaves"), None
    return RsqrtForm("estimate", 2, FUSED, "x86-64 with AVX-512"
                     + (", FMA" if FUSED else ", no FMA")), fn


def _chosen():
    if "form" not in _state:
        with _lock:
            if "form" not in _state:
                form, fn = choose64()
                _state["fn"] = fn
                _state["form"] = form
    return _state["form"], _state["fn"]


def rsqrt_form64() -> RsqrtForm:
    """How XLA:CPU's float64 ``rsqrt`` is reproduced on this processor."""
    return _chosen()[0]


def rsqrt_by64(x, form, fn):
    """float64 ``rsqrt`` of the float64 array ``x`` in ``form`` (``fn``: its estimate
    loop)."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        xf = np.where(np.abs(x) < TINY64, x * 0.0, x)
        if form.method != "estimate" or fn is None:
            return 1.0 / np.sqrt(xf)
        flat = np.ascontiguousarray(xf).reshape(-1)
        y0 = np.empty_like(flat)
        if flat.size:
            fn(flat, y0)
        y = y0
        for _ in range(form.steps):
            half_y = y * -0.5
            if form.fused:
                y = fma64_np(half_y, fma64_np(flat * y, y, -1.0), y)
            else:
                y = half_y * ((flat * y) * y - 1.0) + y
        refine = (flat >= TINY64) & (flat < np.inf)
        return np.where(refine, y, y0).reshape(x.shape)


def rsqrt_f64(x):
    """XLA:CPU's float64 ``rsqrt`` of the float64 array ``x`` on this processor."""
    form, fn = _chosen()
    return rsqrt_by64(x, form, fn)
