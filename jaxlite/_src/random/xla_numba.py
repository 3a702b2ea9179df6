"""Compiled (numba) loops for the random kernels: the Threefry-2x32 hash and the float32
math of ``xla_math``/``kernels``, bit for bit the same as their NumPy versions.

This module imports numba, so nothing imports it but ``accel.numba_module()``, and only
when numba is to be used. Each loop runs the NumPy version's float32 (and float64)
operations on one element in the same order; numba's defaults keep them exact: no
``fastmath``, so no contraction of a multiply and an add into an FMA, no reassociation.
``error_model="numpy"`` gives IEEE results for a division by zero instead of an exception.
The one deliberate difference of means: ``exp``'s fused multiply-adds, all on float32
operands with normal results, use the FMA instruction (``_fmaf``), which rounds exactly as
``xla_math.fma_f32``'s float64 emulation there (compared on all 2**32 inputs).

The ``*_kernel(x, out, bad)`` loops handle the inputs that samplers meet; an input outside
that domain (NaN, a negative logarithm, a huge tangent argument, ...) is left to the NumPy
version: its index goes into ``bad`` and the count is returned, so the caller recomputes
those few elements with NumPy (elementwise, so the same bits as computing all of them).

numba caches the compiled loops on disk keyed by this file only; the constants come from
``xla_math`` and ``kernels``, so ``_CONSTANTS_CRC`` pins them: edit it (and so this file,
which invalidates the cache) whenever a coefficient there changes.
"""
from __future__ import annotations

import zlib

import numba
import numpy as np

from jaxlite._src.cpu_math.gamma_nb import lanczos_f32 as _lanczos
from jaxlite._src.cpu_math.log_nb import _log1p as _log1p_twin
from jaxlite._src.cpu_math.nb_common import _flush, _fma, _fma1, _fmaf, _inline, _sel
from jaxlite._src.cpu_math.nb_common import host_cpu_features  # noqa: F401 (moved there)
from jaxlite._src.cpu_math.trig_nb import tan_f32 as _tan  # (glibc's tanf; total)
from jaxlite._src.random import kernels as K
from jaxlite._src.random import xla_math as X

_CONSTANTS_CRC = 0xE8C95C75


def constants_crc():
    """CRC-32 of every constant these loops freeze (must equal ``_CONSTANTS_CRC``)."""
    vals = (X._EXP_POLY, X._LOG2E, X._LN2_HI, X._LN2_LO, X._TINY, X._TAN_C0, X._TAN_ODD,
            X._TAN_EVEN, X._PIO4_HI, X._PIO4_LO, X._TAN_FOLD, X._TAN_TINY, X._TAN_REDUCE,
            X._TAN_BIG, X._TWO_OVER_PI_24, X._PIO2, X._KEEP_HI,
            X._LANCZOS_C0, X._LANCZOS, X._GPH, X._INV_GPH, X._LOG_GPH, X._LOG_SQRT_2PI,
            K._L1P_NUM, K._L1P_DEN, K._L1P_SMALL, K._LOG_P, K._LOG_Q1, K._LOG_Q2,
            K._SQRTHF, K._ERFINV_LT5, K._ERFINV_GE5)
    flat = []
    for v in vals:
        flat.extend(v if isinstance(v, tuple) else (v,))
    return zlib.crc32(b"".join(np.asarray(v).tobytes() for v in flat))


_jit = numba.njit(nogil=True, cache=True, error_model="numpy")
# helpers are inlined into the loops in numba's IR (LLVM would leave most of them as calls,
# which also stops vectorisation)

F32, F64 = np.float32, np.float64
_U64 = np.uint64
_ZERO, _ONE, _HALF, _TWO = F32(0), F32(1), F32(0.5), F32(2)
_INF, _NINF = F32(np.inf), F32(-np.inf)
_TINY = X._TINY
_NAN = F32(np.nan)
_ABS32 = np.uint32(0x7FFFFFFF)
_U23, _U52 = np.uint32(23), _U64(52)
_FREXP_KEEP, _FREXP_HALF = np.uint32(0x807FFFFF), np.uint32(0x3F000000)
_FREXP_BIAS = F32(126)
_LOW29, _TIE29 = _U64(0x1FFFFFFF), _U64(0x10000000)

_E0, _E1, _E2, _E3, _E4, _E5 = X._EXP_POLY
_LOG2E, _LN2_HI, _LN2_LO = X._LOG2E, X._LN2_HI, X._LN2_LO
_EXP_FLOOR, _EXP_NMAX = F32(-104), F32(127)

_LP = tuple(F64(c) for c in K._LOG_P)
_LP0, _LP1, _LP2, _LP3, _LP4, _LP5, _LP6, _LP7, _LP8 = _LP
_LOG_Q1, _LOG_Q2, _SQRTHF = K._LOG_Q1, K._LOG_Q2, K._SQRTHF
_N0, _N1, _N2, _N3, _N4, _N5, _N6 = K._L1P_NUM
_D0, _D1, _D2, _D3, _D4, _D5, _D6 = K._L1P_DEN
_L1P_SMALL, _MINUS_HALF = K._L1P_SMALL, F32(-0.5)
_A0, _A1, _A2, _A3, _A4, _A5, _A6, _A7, _A8 = K._ERFINV_LT5
_B0, _B1, _B2, _B3, _B4, _B5, _B6, _B7, _B8 = K._ERFINV_GE5
_W_SHIFT, _W_FAR, _THREE = F32(2.5), F32(5), F32(3)




# ------------------------------------------------------------------------ scalar helpers
# Written without branches and calls so that LLVM vectorises the loops: every candidate
# result is computed and the one the NumPy version keeps is picked by ``_sel`` (a bitwise
# select; numba's ``a if c else b`` becomes control flow that, nested, LLVM leaves scalar).

@_inline
def _log_pos(v):
    """``kernels.log_f32`` of one positive normal float32 (frexp from the bits)."""
    b = np.float32(v).view(np.uint32)
    m = np.uint32((b & _FREXP_KEEP) | _FREXP_HALF).view(np.float32)
    low = m < _SQRTHF
    ef = F32(b >> _U23) - (_FREXP_BIAS + _sel(low, _ONE, _ZERO))
    x = (m - _ONE) + _sel(low, m, _ZERO)
    x2 = x * x
    x3 = x2 * x
    x64 = F64(x)
    x364 = F64(x3)
    y = _fma1(x64 * _LP0, _LP1)
    y1 = _fma1(x64 * _LP3, _LP4)
    y2 = _fma1(x64 * _LP6, _LP7)
    y = _fma1(F64(y) * x64, _LP2)
    y1 = _fma1(F64(y1) * x64, _LP5)
    y2 = _fma1(F64(y2) * x64, _LP8)
    y = _fma1(F64(y) * x364, F64(y1))
    y = _fma1(F64(y) * x364, F64(y2))
    y = _fma1(F64(y) * x364, F64(_LOG_Q1 * ef))
    x = x - x2 * _HALF
    x = x + y
    return x + _LOG_Q2 * ef


@_inline
def _log1p_in(x):
    """``kernels.log1p_f32`` of one float32 (finite, > -1): ``cpu_math``'s twin."""
    return _log1p_twin(x, False)


@_inline
def _log(x):
    """``xla_math.log_f32`` of one float32; NaN marks an input left to NumPy."""
    x = _flush(x)
    r = _log_pos(x)
    edge = _sel(x == _ZERO, _NINF, _sel(x == _INF, _INF, _NAN))
    return _sel((x >= _TINY) & (x < _INF), r, edge)


@_inline
def _log1p(x):
    """``xla_math.log1p_f32`` of one float32; NaN marks an input left to NumPy."""
    x = _flush(x)
    ok = (x > -_ONE) & (x < _INF)
    r = _log1p_in(_sel(ok, x, _ZERO))
    edge = _sel(x == -_ONE, _NINF, _sel(x == _INF, _INF, _NAN))
    return _sel(ok, r, edge)


@_inline
def _exp(x):
    """``xla_math.exp_f32`` of one float32; NaN marks an input left to NumPy."""
    xc = _flush(x)
    xc = _sel(xc >= _EXP_FLOOR, xc, _EXP_FLOOR)
    xc = _sel(xc < _INF, xc, _ZERO)            # (inf's result is set below)
    # every FMA here has float32 operands and a normal (or zero) result, so the hardware
    # FMA gives xla_math's emulated one (checked over all float32 inputs)
    nf = np.floor(_fmaf(xc, _LOG2E, _HALF))
    nf = _sel(nf < _EXP_NMAX, nf, _EXP_NMAX)
    neg_n = -nf
    r = _fmaf(neg_n, _LN2_HI, xc)
    r = _fmaf(neg_n, _LN2_LO, r)
    p = _fmaf(_E0, r, _E1)
    p = _fmaf(p, r, _E2)
    p = _fmaf(p, r, _E3)
    p = _fmaf(p, r, _E4)
    p = _fmaf(p, r, _E5)
    p = _fmaf(p, r * r, r)
    p = p + _ONE
    scale = np.uint64(_U64(np.int64(nf) + 1023) << _U52).view(np.float64)   # 2**n
    y = _flush(F32(F64(p) * scale))
    return _sel(x == _INF, _INF, _sel(x == x, y, _NAN))


@_inline
def _lgamma(x):
    """``xla_math.lgamma_f32`` of one float32; NaN marks x < 1/2 (or NaN), left to NumPy."""
    x = _flush(x)
    ok = x >= _HALF
    r = _lanczos(_sel(x < _INF, x, _ONE) - _ONE)    # (cpu_math's lgamma twin's sum)
    return _sel(ok, _sel(x < _INF, r, _INF), _NAN)


@_inline
def _erf_inv(x):
    """``kernels.erf_inv_f32`` of one float32; NaN marks |x| > 1 (or NaN), left to
    NumPy."""
    ok = abs(x) < _ONE
    w = -_log1p_in(_sel(ok, -(x * x), _ZERO))
    t = F64(w - _W_SHIFT)
    p = _fma1(t * _A0, _A1)
    p = _fma1(F64(p) * t, _A2)
    p = _fma1(F64(p) * t, _A3)
    p = _fma1(F64(p) * t, _A4)
    p = _fma1(F64(p) * t, _A5)
    p = _fma1(F64(p) * t, _A6)
    p = _fma1(F64(p) * t, _A7)
    p = _fma1(F64(p) * t, _A8)
    t = F64(np.sqrt(w) - _THREE)
    q = _fma1(t * _B0, _B1)
    q = _fma1(F64(q) * t, _B2)
    q = _fma1(F64(q) * t, _B3)
    q = _fma1(F64(q) * t, _B4)
    q = _fma1(F64(q) * t, _B5)
    q = _fma1(F64(q) * t, _B6)
    q = _fma1(F64(q) * t, _B7)
    q = _fma1(F64(q) * t, _B8)
    r = _sel(w >= _W_FAR, q, p) * x
    return _sel(ok, r, _sel(abs(x) == _ONE, x * _INF, _NAN))


# ---------------------------------------------------------------------------- the loops

@_jit
def _collect_nan(out, bad):
    """Index the NaNs of ``out`` in ``bad``; their count."""
    nb = 0
    for i in range(out.shape[0]):
        if out[i] != out[i]:
            bad[nb] = i
            nb += 1
    return nb


# One loop per function (not a factory: numba's disk cache cannot key a closure over a
# compiled function). Each writes NaN for an input it leaves to NumPy; if there are any,
# their indices go into ``bad`` and their count is returned.

@_jit
def exp_kernel(x, out, bad):
    """``out`` = exp of the float32 ``x`` (NaN inputs indexed in ``bad``)."""
    nan = 0
    for i in range(x.shape[0]):
        r = _exp(x[i])
        out[i] = r
        nan += r != r
    return _collect_nan(out, bad) if nan else 0


@_jit
def log_kernel(x, out, bad):
    """``out`` = log of the float32 ``x`` (negative and NaN inputs indexed in ``bad``)."""
    nan = 0
    for i in range(x.shape[0]):
        r = _log(x[i])
        out[i] = r
        nan += r != r
    return _collect_nan(out, bad) if nan else 0


@_jit
def log1p_kernel(x, out, bad):
    """``out`` = log1p of the float32 ``x`` (below -1 and NaN inputs indexed in ``bad``)."""
    nan = 0
    for i in range(x.shape[0]):
        r = _log1p(x[i])
        out[i] = r
        nan += r != r
    return _collect_nan(out, bad) if nan else 0


@_jit
def tan_kernel(x, out, bad):
    """``out`` = tan of the float32 ``x`` (|x| >= 120, inf, NaN inputs indexed in ``bad``)."""
    nan = 0
    for i in range(x.shape[0]):
        r = _tan(x[i])
        out[i] = r
        nan += r != r
    return _collect_nan(out, bad) if nan else 0


@_jit
def lgamma_kernel(x, out, bad):
    """``out`` = lgamma of the float32 ``x`` (below 1/2 and NaN inputs indexed in ``bad``)."""
    nan = 0
    for i in range(x.shape[0]):
        r = _lgamma(x[i])
        out[i] = r
        nan += r != r
    return _collect_nan(out, bad) if nan else 0


@_jit
def erf_inv_kernel(x, out, bad):
    """``out`` = erf_inv of the float32 ``x`` (|x| > 1 and NaN inputs indexed in ``bad``)."""
    nan = 0
    for i in range(x.shape[0]):
        r = _erf_inv(x[i])
        out[i] = r
        nan += r != r
    return _collect_nan(out, bad) if nan else 0


@_jit
def fma_kernel(a, b, c, out):
    """``out`` = float32 fused ``a * b + c`` (1-D float64 operands, each possibly a
    stride-0 broadcast), rounded as ``xla_math.fma_f32``."""
    for i in range(out.shape[0]):
        out[i] = _fma(a[i] * b[i], c[i])


# ------------------------------------------------------------------------- threefry

_M32 = _U64(0xFFFFFFFF)


@_inline
def _mix(a, b, r):
    # a += b; b = rotl32(b, r) ^ a
    a = (a + b) & _M32
    b = (((b << _U64(r)) | (b >> _U64(32 - r))) & _M32) ^ a
    return a, b


@_jit
def hash_iota(k0, k1, start, out0, out1):
    """Threefry-2x32 of the counts (0, start + j) under the key (k0, k1) into out0[j],
    out1[j] (uint32 arithmetic emulated in uint64 with explicit masks)."""
    a0, a1 = _U64(k0), _U64(k1)
    a2 = (a0 ^ a1 ^ _U64(0x1BD11BDA)) & _M32
    ks = (a0, a1, a2)
    for j in range(out0.shape[0]):
        b = (_U64(start + j) + a1) & _M32
        a = (a0 + b) & _M32
        b = (((b << _U64(13)) | (b >> _U64(19))) & _M32) ^ a   # round 1 (add done above)
        a, b = _mix(a, b, 15)
        a, b = _mix(a, b, 26)
        a, b = _mix(a, b, 6)
        a = (a + a1) & _M32
        b = (b + a2 + _U64(1)) & _M32
        for g in range(1, 5):
            if g % 2:
                a, b = _mix(a, b, 17)
                a, b = _mix(a, b, 29)
                a, b = _mix(a, b, 16)
                a, b = _mix(a, b, 24)
            else:
                a, b = _mix(a, b, 13)
                a, b = _mix(a, b, 15)
                a, b = _mix(a, b, 26)
                a, b = _mix(a, b, 6)
            a = (a + ks[(g + 1) % 3]) & _M32
            b = (b + ks[(g + 2) % 3] + _U64(g + 1)) & _M32
        out0[j] = a
        out1[j] = b


@_inline
def _group(a, b, r0, r1, r2, r3):
    a, b = _mix(a, b, r0)
    a, b = _mix(a, b, r1)
    a, b = _mix(a, b, r2)
    return _mix(a, b, r3)


@_jit
def hash_pairs(k0, k1, x0, x1, out0, out1):
    """Threefry-2x32 of the counts (x0[j], x1[j]) under the keys (k0[j], k1[j]) into
    out0[j], out1[j] (1-D uint32 operands, any of them possibly a stride-0 broadcast)."""
    for j in range(out0.shape[0]):
        a0, a1 = _U64(k0[j]), _U64(k1[j])
        a2 = (a0 ^ a1 ^ _U64(0x1BD11BDA)) & _M32
        a = (_U64(x0[j]) + a0) & _M32
        b = (_U64(x1[j]) + a1) & _M32
        a, b = _group(a, b, 13, 15, 26, 6)
        a, b = (a + a1) & _M32, (b + a2 + _U64(1)) & _M32
        a, b = _group(a, b, 17, 29, 16, 24)
        a, b = (a + a2) & _M32, (b + a0 + _U64(2)) & _M32
        a, b = _group(a, b, 13, 15, 26, 6)
        a, b = (a + a0) & _M32, (b + a1 + _U64(3)) & _M32
        a, b = _group(a, b, 17, 29, 16, 24)
        a, b = (a + a1) & _M32, (b + a2 + _U64(4)) & _M32
        a, b = _group(a, b, 13, 15, 26, 6)
        out0[j] = (a + a2) & _M32
        out1[j] = (b + a0 + _U64(5)) & _M32
