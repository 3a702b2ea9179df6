"""XLA:CPU's float32 ``exp``, ``log``, ``log1p``, ``tan``, ``pow`` and ``lgamma``, bit for bit.

JAX's samplers run as XLA-compiled programs, and XLA's CPU backend does not compute
transcendental functions the way NumPy does, so a sampler transcribed op for op into NumPy
differs from JAX's in the last bit of some samples (and, where a sample is accepted or
rejected by comparing two such values, in whole samples). The rules below were found by
running XLA on all or many float32 inputs and comparing candidate kernels bit for bit:

* ``exp`` (NumPy: ``cpu_math.exp``, chunked here): Cody-Waite reduction ``x = n ln2 + r`` with ``n = floor(x log2(e) + 1/2)`` capped
  at 127 and ``ln 2`` split in two (0.693359375 + -2.12194440e-4), the degree-5 Cephes
  polynomial for ``(e^r - 1 - r) / r^2`` by Horner's rule, then ``2^n`` exactly; every
  multiply feeding an add is one fused multiply-add. Results below FLT_MIN flush to zero.
* ``log`` and ``log1p``: ``kernels.log_f32`` / ``kernels.log1p_f32`` (Cephes as well).
* ``tan`` and ``pow``: XLA calls the C library's ``tanf``/``powf``. On glibc ``tanf`` is the
  classic single-precision fdlibm algorithm (Sun Microsystems, 1993): a degree-27 odd
  minimax polynomial on [-pi/4, pi/4], ``tan(pi/4 - y)`` identities near pi/4, and an
  extra-precise ``-1/tan`` for odd quadrants, after a double-precision reduction by pi/2.
  It is reproduced here in NumPy. ``pow`` is ``cpu_math.power``'s (glibc's ``powf``).
* ``lgamma``: the Lanczos expansion (g = 7, 9 terms) that XLA expands ``lgamma`` into, with
  XLA's rewrites: ``z / 7.5`` becomes ``z * (1 / 7.5)`` and the final
  ``c + (z + 1/2 - t / log t) log t`` is one fused multiply-add.

XLA:CPU also runs with denormals flushed to zero (inputs and results); the kernels do the
same where it changes a result. All take and return float32 arrays.

Two implementations give the same bits: the NumPy kernels here (``_*_np``: in-place ufuncs
over cache-sized chunks, one worker thread per core), and numba's compiled loops in
``xla_numba``, used once ``accel`` has loaded numba (which only large samples do).
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.cpu_math import gamma as _G
from jaxlite._src.cpu_math.dispatch import kernel as _cpu_kernel
from jaxlite._src.cpu_math.exp import exp_f32 as _cpu_exp
from jaxlite._src.cpu_math.fma import fma_f32_np as _fma_np
from jaxlite._src.random import accel
from jaxlite._src.random import kernels as K

__all__ = [
    "exp_f32",
    "fma_f32",
    "lgamma_f32",
    "log1p_f32",
    "log_f32",
    "pow_f32",
    "tan_f32",
]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_U32 = np.dtype(np.uint32)
_BOOL = np.dtype(np.bool_)
_TINY = np.float32(np.finfo(np.float32).tiny)


def _flush(x):
    """``x`` with subnormal values replaced by zeros of the same sign (DAZ)."""
    x = np.asarray(x, _F32)
    sub = (np.abs(x) < _TINY) & (x != 0)
    if sub.any():
        x = np.where(sub, np.copysign(np.float32(0), x), x)
    return x


def _ftz(y):
    """``y`` with subnormal results replaced by zeros of the same sign (FTZ)."""
    sub = (np.abs(y) < _TINY) & (y != 0)
    if sub.any():
        y[sub] = np.copysign(np.float32(0), y[sub])
    return y


def _chunked(kernel, x):
    """``kernel(xc, oc, s)`` over cache-sized chunks of the float32 array ``x`` (one
    worker thread per core for large arrays, per-thread scratch ``s``): a new array."""
    x = np.asarray(x, _F32)
    flat = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(flat.shape, _F32)

    def run(lo, hi):
        s = K.scratch()
        with np.errstate(all="ignore"):
            for c in range(lo, hi, K.CHUNK):
                e = min(c + K.CHUNK, hi)
                kernel(flat[c:e], out[c:e], s)
    K.parallel_chunks(run, flat.shape[0])
    return out.reshape(x.shape)


def _flush_into(x, xf, s):
    """``xf`` = ``x`` with subnormals replaced by zeros of their sign; returns the mask of
    |x| < FLT_MIN (subnormals and zeros) if there is any, else None."""
    n = x.shape[0]
    a = s.get("fl_a", _F32, n)
    m = s.get("fl_m", _BOOL, n)
    np.abs(x, out=a)
    np.less(a, _TINY, out=m)
    np.copyto(xf, x)
    if not m.any():
        return None
    np.multiply(x, np.float32(0), out=xf, where=m)
    return m


_LOW29, _TIE29 = np.uint64(0x1FFFFFFF), np.uint64(0x10000000)


def _fma_round(p64, c, out32, s):
    """``out32`` = float32 of ``p64 + c`` with ``_fma_np``'s tie fix (``p64`` an exact
    float64 product chunk, ``c`` a float64 chunk or scalar)."""
    n = p64.shape[0]
    t = s.get("fm_t", _F64, n)
    u = s.get("fm_u", np.dtype(np.uint64), n)
    m = s.get("fm_m", _BOOL, n)
    np.add(p64, c, out=t)
    np.bitwise_and(t.view(np.uint64), _LOW29, out=u)
    np.equal(u, _TIE29, out=m)
    if m.any():
        idx = np.flatnonzero(m)
        pt = p64[idx]
        ct = c[idx] if np.ndim(c) else np.full(idx.size, c, _F64)
        st = t[idx]
        back = st - pt
        err = (pt - (st - back)) + (ct - back)
        t[idx] = np.where(err == 0, st, np.nextafter(st, np.copysign(np.inf, err)))
    np.copyto(out32, t, casting="same_kind")


# --------------------------------------------------------------------------------- exp

_EXP_POLY = tuple(np.float32(c) for c in (1.9875691500E-4, 1.3981999507E-3,
                                          8.3334519073E-3, 4.1665795894E-2,
                                          1.6666665459E-1, 5.0000001201E-1))
_LOG2E = np.float32(1.44269504088896341)
_LN2_HI, _LN2_LO = np.float32(0.693359375), np.float32(-2.12194440e-4)


def _exp_chunk(x, y, s):
    """``y`` = XLA:CPU's float32 exp of the chunk ``x`` (``cpu_math.exp``)."""
    y[...] = _cpu_exp(x)


def _exp_np(x):
    """XLA:CPU's float32 ``exp`` in NumPy."""
    return _chunked(_exp_chunk, x)


# --------------------------------------------------------------------------- log, log1p

from jaxlite._src.cpu_math.log import log1p_f32 as _log1p_f32
from jaxlite._src.cpu_math.log import log_f32 as _log_f32


def _log_np(x):
    """XLA:CPU's float32 ``log`` in NumPy (``cpu_math.log``; zero and subnormals give
    -inf, negatives NaN)."""
    return _log_f32(x)


def _log1p_np(x):
    """XLA:CPU's float32 ``log1p`` in NumPy (``cpu_math.log``)."""
    return _log1p_f32(x)


# --------------------------------------------------------------------------------- tan
# (the kernel lives in cpu_math.trig; its constants are re-exported for xla_numba)
from jaxlite._src.cpu_math.trig import (  # noqa: F401
    _KEEP_HI,
    _PIO2,
    _PIO4_HI,
    _PIO4_LO,
    _TAN_BIG,
    _TAN_C0,
    _TAN_EVEN,
    _TAN_FOLD,
    _TAN_ODD,
    _TAN_REDUCE,
    _TAN_TINY,
    _TWO_OVER_PI_24,
)
from jaxlite._src.cpu_math.trig import tan_f32 as _tan_flat


def _tan_np(x):
    """XLA:CPU's float32 ``tan`` (glibc's ``tanf``) in NumPy."""
    return _chunked(_tan_chunk, x)


def _tan_chunk(x, out, s):
    out[...] = _tan_flat(x)


# ------------------------------------------------------------------------------ lgamma

# (cpu_math.gamma holds XLA's lgamma; its constants are also read by xla_numba's loop)
_LANCZOS_G = _G.LANCZOS_G
_LANCZOS_C0 = _G.LANCZOS_C0
_LANCZOS = _G.LANCZOS
_GPH, _INV_GPH, _LOG_GPH, _LOG_SQRT_2PI = _G.GPH, _G.INV_GPH, _G.LOG_GPH, _G.LOG_SQRT_2PI


def _lgamma_np(x):
    """XLA:CPU's float32 ``lgamma`` in NumPy (``cpu_math.gamma``)."""
    return _chunked(_lgamma_chunk, x)


def _lgamma_chunk(x, out, s):
    out[...] = _G.lgamma_f32(x)


# ------------------------------------------------------------------- public dispatch
# numba's compiled loops (``xla_numba``, through ``accel``) when loaded, else NumPy. A
# loop leaves the inputs outside its domain to the NumPy version (see ``xla_numba``).

def _run_unary(kernel, ref, x):
    """``ref(x)`` for a float32 array ``x``, computed by the compiled ``kernel`` (in
    parallel for large arrays) with the elements it leaves out recomputed by ``ref``."""
    flat = np.ascontiguousarray(x).reshape(-1)
    n = flat.shape[0]
    out = np.empty(n, _F32)
    bad = np.empty(n, np.int64)
    left = []

    def run(lo, hi):
        nb = kernel(flat[lo:hi], out[lo:hi], bad[lo:hi])
        if nb:
            left.append(bad[lo:lo + nb] + lo)
    K.parallel_chunks(run, n)
    for idx in left:
        out[idx] = ref(flat[idx])
    return out.reshape(x.shape)


def _unary(name, ref, x):
    x = np.asarray(x, _F32)
    mod = accel.numba_module(x.size)
    if mod is None:
        with accel.timer():
            return ref(x)
    return _run_unary(getattr(mod, name), ref, x)


def _operand(v, shape, n, dtype):
    """``v`` as a flat ``dtype`` operand of ``n`` elements for a compiled loop: a stride-0
    view when it is one value, else contiguous (so that few loop variants get compiled)."""
    v = np.asarray(v, dtype)
    if v.size == 1:
        return np.broadcast_to(v.reshape(1), (n,))
    return np.ascontiguousarray(np.broadcast_to(v, shape)).reshape(-1)


def fma_f32(a, b, c):
    """``a * b + c`` rounded once to float32 (XLA's contracted multiply-add). The float64
    product of two float32 values is exact; the float64 sum is rounded, and where that
    rounding lands exactly on a float32 rounding midpoint the sum's rounding error
    (two-sum) breaks the tie, so the result is the correctly rounded fused multiply-add."""
    shape = np.broadcast_shapes(np.shape(a), np.shape(b), np.shape(c))
    n = math.prod(shape)
    mod = accel.numba_module(n)
    if mod is None:
        with accel.timer():
            return _fma_np(a, b, c)
    a, b, c = (_operand(v, shape, n, _F64) for v in (a, b, c))
    out = np.empty(n, _F32)
    K.parallel_chunks(lambda lo, hi: mod.fma_kernel(a[lo:hi], b[lo:hi], c[lo:hi],
                                                    out[lo:hi]), n)
    return out.reshape(shape)


def exp_f32(x):
    """XLA:CPU's float32 ``exp``."""
    return _unary("exp_kernel", _exp_np, x)


def log_f32(x):
    """XLA:CPU's float32 ``log`` (zero and subnormals give -inf, negatives NaN)."""
    return _unary("log_kernel", _log_np, x)


def log1p_f32(x):
    """XLA:CPU's float32 ``log1p``."""
    return _unary("log1p_kernel", _log1p_np, x)


def tan_f32(x):
    """XLA:CPU's float32 ``tan`` (glibc's ``tanf``)."""
    return _unary("tan_kernel", _tan_np, x)


def lgamma_f32(x):
    """XLA:CPU's float32 ``lgamma`` (exact for x >= 1/2; the reflection for x < 1/2 is
    evaluated in float64)."""
    return _unary("lgamma_kernel", _lgamma_np, x)


def pow_f32(x, y):
    """XLA:CPU's float32 ``pow`` (glibc's ``powf``): ``cpu_math.power``'s kernel."""
    return _cpu_kernel("pow", 2)(np.asarray(x, _F32), np.asarray(y, _F32))
