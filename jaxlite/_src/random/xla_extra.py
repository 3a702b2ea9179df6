"""XLA:CPU's float32 ``rsqrt``, and the C library's ``logf`` that XLA's constant folder uses.

``rsqrt``: XLA:CPU does not compute ``1 / sqrt(x)``. On x86-64 it takes the processor's
reciprocal square root *estimate* (the SSE ``rsqrtss`` instruction, about 12 bits, and not
the same bits on every processor family) and refines it with one Newton-Raphson step,
``y = y0 + (-y0 / 2) (x y0 y0 - 1)`` with the inner and outer multiply-adds fused; zeros,
subnormals, infinities and negative inputs keep the raw estimate. The result is within a
few ulp of the true value but differs from the correctly rounded one for about one float32
in five, and the samplers' ``c = 1/3 / sqrt(d)`` is compiled this way (XLA rewrites a
division by a square root into a product with ``rsqrt``). To give XLA's bits, the estimate
here comes from the same instruction: a ten-instruction loop of machine code (below,
assembled by hand) mapped executable and called through ctypes. Where that is impossible
(another architecture or operating system, or a system that forbids executable mappings)
the correctly rounded value is used instead.

``logf``: when an operand is a compile-time constant, XLA folds ``log`` of it with the C
library's ``logf`` rather than its own polynomial; :func:`folded_log_f32` does the same.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import os
import platform
import threading

import numpy as np

from jaxlite._src.random import xla_math as X

__all__ = ["rsqrt_f32", "rsqrt_estimate_f32", "folded_log_f32", "has_hw_rsqrt"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_TINY = np.float32(np.finfo(np.float32).tiny)

# void rsqrt_estimates(const float *x, float *y, int64_t n)   (System V x86-64 ABI)
#   loop: test rdx, rdx ; jz done
#         movss xmm0, [rdi] ; rsqrtss xmm0, xmm0 ; movss [rsi], xmm0
#         add rdi, 4 ; add rsi, 4 ; dec rdx ; jmp loop
#   done: ret
_RSQRT_LOOP = bytes([
    0x48, 0x85, 0xD2,              # test rdx, rdx
    0x74, 0x19,                    # jz +25 (to ret)
    0xF3, 0x0F, 0x10, 0x07,        # movss xmm0, dword [rdi]
    0xF3, 0x0F, 0x52, 0xC0,        # rsqrtss xmm0, xmm0
    0xF3, 0x0F, 0x11, 0x06,        # movss dword [rsi], xmm0
    0x48, 0x83, 0xC7, 0x04,        # add rdi, 4
    0x48, 0x83, 0xC6, 0x04,        # add rsi, 4
    0x48, 0xFF, 0xCA,              # dec rdx
    0xEB, 0xE2,                    # jmp -30 (to test)
    0xC3,                          # ret
])

_state = {}
_lock = threading.Lock()


def _load_estimator():
    """The machine-code estimate loop as a ctypes function, or None."""
    if os.environ.get("JAXLITE_HW_RSQRT", "1") == "0":
        return None
    if os.name != "posix" or platform.machine().lower() not in ("x86_64", "amd64"):
        return None
    try:
        page = mmap.mmap(-1, mmap.PAGESIZE,
                         prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        page.write(_RSQRT_LOOP)
        addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
        fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)(addr)
        probe = np.array([4.0, 1.0], _F32)
        out = np.zeros(2, _F32)
        fn(probe.ctypes.data, out.ctypes.data, 2)
        # an estimate of 1/2 and 1 good to ~12 bits, or something is wrong: do not use it
        if not np.all(np.abs(out * np.array([2, 1], _F32) - 1) < 2.0 ** -10):
            return None
        _state["page"] = page          # keep the mapping alive
        return fn
    except (OSError, ValueError, TypeError, AttributeError):
        return None


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
    out = np.empty_like(x)
    if x.size:
        fn(x.ctypes.data, out.ctypes.data, x.size)
    return out


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


_libm = []


def _logf():
    if not _libm:
        fn = None
        try:
            path = ctypes.util.find_library("m")
            if path:
                fn = ctypes.CDLL(path).logf
                fn.restype = ctypes.c_float
                fn.argtypes = [ctypes.c_float]
        except (OSError, AttributeError):
            fn = None
        _libm.append(fn)
    return _libm[0]


def folded_log_f32(x):
    """``log`` of float32 values as XLA's constant folder computes it (the C library's
    ``logf``; the float64 logarithm rounded to float32 without a C library)."""
    x = np.asarray(x, _F32)
    fn = _logf()
    with np.errstate(all="ignore"):
        if fn is None:
            return np.log(x.astype(_F64)).astype(_F32)
        vals, where = np.unique(x.reshape(-1), return_inverse=True)
        logs = np.array([fn(float(v)) for v in vals], _F32)
        return logs[where].reshape(x.shape)
