"""NumPy kernels behind the random primitives: Threefry-2x32, bits to floats, and XLA's
float32 ``log1p``/``log``/``erf_inv`` reproduced bit for bit.

Everything here works on flat chunks small enough to stay in the L2 cache (``CHUNK``
elements): every step is an in-place ufunc (``out=``) over preallocated scratch buffers, so
a 16M-element sample is ~256 chunk passes of ~100 cheap ufunc calls each, spread over one
worker thread per core (NumPy releases the GIL in its loops).

XLA's CPU backend contracts a multiply feeding an add into a fused multiply-add. The float32
FMA is emulated in float64: the product of two float32 values is exact in float64, so only
the final rounding of the sum differs (double rounding, off by one ulp with probability
~2**-29 per operation).
"""
from __future__ import annotations

import threading

import numpy as np

from jaxlite._src.cpu_math.threads import CHUNK, parallel_chunks

__all__ = ["CHUNK", "parallel_chunks", "hash_chunk", "fill_bits", "erf_inv_f32",
           "Scratch", "unit_float_from_bits"]

_tls = threading.local()
_U32 = np.dtype(np.uint32)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_SHIFTS = tuple(tuple((np.uint32(r), np.uint32(32 - r)) for r in rots) for rots in _ROTATIONS)
_PARITY = 0x1BD11BDA
_M32 = 0xFFFFFFFF


# ------------------------------------------------------------------------------ threads

class Scratch:
    """Per-thread scratch buffers of ``CHUNK`` elements, created on first use."""

    def __init__(self):
        self._bufs = {}

    def get(self, name, dtype, n):
        """Buffer ``name`` of ``dtype`` viewed at length ``n``."""
        key = (name, dtype)
        b = self._bufs.get(key)
        if b is None or b.shape[0] < n:
            b = self._bufs[key] = np.empty(max(n, CHUNK), dtype)
        return b[:n]


def scratch() -> Scratch:
    """This thread's scratch buffers."""
    s = getattr(_tls, "scratch", None)
    if s is None:
        s = _tls.scratch = Scratch()
    return s


# ----------------------------------------------------------------------------- threefry

def _key_schedule(k0, k1):
    k2 = k0 ^ k1 ^ _PARITY
    ks = (k0, k1, k2)
    return ks, [(np.uint32(ks[(i + 1) % 3]), np.uint32((ks[(i + 2) % 3] + i + 1) & _M32))
                for i in range(5)]


def _rounds(a, b, tmp, inject):
    add, shl, shr, bor, bxor = (np.add, np.left_shift, np.right_shift, np.bitwise_or,
                                np.bitwise_xor)
    for i in range(5):
        for r, rr in _SHIFTS[i % 2]:
            if i or r != 13:          # the first add was done by the caller
                add(a, b, out=a)
            shl(b, r, out=tmp)
            shr(b, rr, out=b)
            bor(b, tmp, out=b)
            bxor(b, a, out=b)
        add(a, inject[i][0], out=a)
        add(b, inject[i][1], out=b)


def hash_iota(k0, k1, start, out0, out1, tmp):
    """Threefry-2x32 of the counts ``(0, start + i)`` under the scalar key ``(k0, k1)``
    (Python ints), for ``i < len(out0)``: the partitionable layout's counters."""
    ks, inject = _key_schedule(k0, k1)
    n = out0.shape[0]
    b = out1
    b[:] = np.arange(start, start + n, dtype=_U32)
    np.add(b, np.uint32(ks[1]), out=b)
    np.add(b, np.uint32(ks[0]), out=out0)     # a = (0 + k0) + b
    _rounds(out0, b, tmp, inject)


def hash_chunk(k0, k1, x0, x1, out0, out1, tmp):
    """Threefry-2x32 of one chunk, written into ``out0``/``out1``. Keys are Python ints
    (one key for the whole chunk) or uint32 arrays of the chunk's length; counts are uint32
    arrays or scalars. By numba's loop once ``accel`` has loaded it."""
    from jaxlite._src.random import accel
    mod = accel.numba_module()
    if mod is not None:
        m = out0.shape[0]      # (a stride-0 operand would keep the loop from vectorising)
        mod.hash_pairs(*[np.full(m, v, _U32) if np.ndim(v) == 0 else
                         np.ascontiguousarray(v, _U32) for v in (k0, k1, x0, x1)],
                       out0, out1)
        return
    if isinstance(k0, int):
        ks, inject = _key_schedule(k0, k1)
        ks = tuple(np.uint32(k) for k in ks)
    else:
        k2 = k0 ^ k1 ^ np.uint32(_PARITY)
        ks = (k0, k1, k2)
        inject = [(ks[(i + 1) % 3], ks[(i + 2) % 3] + np.uint32(i + 1)) for i in range(5)]
    np.add(x0, ks[0], out=out0)
    np.add(x1, ks[1], out=out1)
    np.add(out0, out1, out=out0)
    _rounds(out0, out1, tmp, inject)


def _pack(x):
    """uint32 values as one Python int with a 64-bit lane each (32 guard bits)."""
    return int.from_bytes(np.asarray(x, np.uint64).tobytes(), "little")


def _unpack(v, n):
    return np.frombuffer(v.to_bytes(8 * n, "little"), np.uint64).astype(_U32)


SMALL_SWAR = 64   # at most this many hashes run as big-int SWAR instead of ufuncs


def hash_swar(k0, k1, x1):
    """Threefry-2x32 of the counts ``(0, x1)`` under keys ``(k0, k1)`` (uint32 arrays of
    one length n <= SMALL_SWAR), all lanes at once in Python big-int arithmetic: each
    32-bit lane sits in 64 bits so carries and shifted-out bits land in guard bits that
    the lane mask clears. ~200 big-int operations instead of ~100 ufunc calls."""
    n = len(x1)
    rep = _pack(np.ones(n, np.uint64))
    mask = _M32 * rep
    a0, b0 = _pack(k0), _pack(k1)
    kk = (a0, b0, a0 ^ b0 ^ (_PARITY * rep))
    b = (_pack(x1) + b0) & mask
    a = (a0 + b) & mask
    first = True
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            if not first:
                a = (a + b) & mask
            first = False
            b = (((b << r) | (b >> (32 - r))) & mask) ^ a
        a = (a + kk[(i + 1) % 3]) & mask
        b = (b + kk[(i + 2) % 3] + (i + 1) * rep) & mask
    return _unpack(a, n), _unpack(b, n)


# --------------------------------------------------------------------- bits and floats

def fill_bits(k0, k1, n, consume):
    """Hash the counts ``0..n-1`` under the scalar key ``(k0, k1)`` chunk by chunk (in
    parallel for large ``n``; by numba's loop when ``accel`` has it) and call
    ``consume(lo, hi, b1, b2, scratch)`` with each chunk's two uint32 words (scratch
    buffers the consumer may overwrite)."""
    from jaxlite._src.random import accel
    compiled = accel.hash_iota_kernel(n)

    def run(lo, hi):
        s = scratch()
        for c in range(lo, hi, CHUNK):
            e = min(c + CHUNK, hi)
            m = e - c
            b1, b2 = s.get("b1", _U32, m), s.get("b2", _U32, m)
            if compiled is not None:
                compiled(k0, k1, c, b1, b2)
            else:
                hash_iota(k0, k1, c, b1, b2, s.get("tmp", _U32, m))
            consume(c, e, b1, b2, s)
    if compiled is not None:
        parallel_chunks(run, n)
        return
    with accel.timer():
        parallel_chunks(run, n)


def _nmant(dtype):
    if dtype.itemsize in (4, 8) or dtype == np.float16:
        return np.finfo(dtype).nmant
    import ml_dtypes
    return ml_dtypes.finfo(dtype).nmant


def unit_float_from_bits(b1, b2, dtype, out):
    """``out`` = floats in [0, 1) from the partitionable bits of a chunk, as JAX's uniform
    computes them: mantissa bits ``| 1.0``, bitcast, minus one. ``b1`` is clobbered."""
    dtype = np.dtype(dtype)
    nbits = dtype.itemsize * 8
    nmant = _nmant(dtype)
    if nbits == 32:
        np.bitwise_xor(b1, b2, out=b1)
        np.right_shift(b1, np.uint32(32 - nmant), out=b1)
        np.bitwise_or(b1, np.uint32(0x3F800000), out=b1)
        np.subtract(b1.view(_F32), np.float32(1), out=out)
        return
    if nbits == 64:
        u = out.view(np.uint64)
        u32 = out.view(_U32)
        u32[0::2] = b2
        u32[1::2] = b1
        np.right_shift(u, np.uint64(64 - nmant), out=u)
        np.bitwise_or(u, np.uint64(0x3FF0000000000000), out=u)
        np.subtract(out, 1.0, out=out)
        return
    udt = np.dtype(f"uint{nbits}")
    one = np.array(1, dtype).view(udt)
    np.bitwise_xor(b1, b2, out=b1)
    bits = b1.astype(udt)
    if nbits == 8:
        raise NotImplementedError
    np.right_shift(bits, udt.type(nbits - nmant), out=bits)
    np.bitwise_or(bits, one, out=bits)
    out[...] = bits.view(dtype) - dtype.type(1)


# ------------------------------------------------------------------ XLA float32 math

def _coefs64(coefs):
    """Polynomial coefficients rounded to float32, held as float64 scalars."""
    return tuple(np.float64(np.float32(c)) for c in coefs)


def _fma_horner(coefs64, x64, out32, tmp64):
    """``out32`` = the polynomial ``coefs64`` (highest first, from ``_coefs64``) at ``x`` by
    Horner's rule with a float32 FMA per step (``x64`` holds float32 values widened to
    float64). Every step is a same-dtype ufunc: the float64 product is exact, the sum is
    rounded to float32 by a cast there and back."""
    np.multiply(x64, coefs64[0], out=tmp64)
    np.add(tmp64, coefs64[1], out=tmp64)
    for c in coefs64[2:]:
        np.copyto(out32, tmp64, casting="same_kind")
        np.copyto(tmp64, out32)
        np.multiply(tmp64, x64, out=tmp64)
        np.add(tmp64, c, out=tmp64)
    np.copyto(out32, tmp64, casting="same_kind")
    return out32


# XLA's log1p for |x| < sqrt(2) - 1 (a Cephes rational); numerator, denominator
_L1P_NUM = (4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
            6.5787325942061044846969E0, 2.9911919328553073277375E1,
            6.0949667980987787057556E1, 5.7112963590585538103336E1,
            2.0039553499201281259648E1)
_L1P_DEN = (1., 1.5062909083469192043167E1, 8.3047565967967209469434E1,
            2.2176239823732856465394E2, 3.0909872225312059774938E2,
            2.1642788614495947685003E2, 6.0118660497603843919306E1)
_L1P_NUM, _L1P_DEN = _coefs64(_L1P_NUM), _coefs64(_L1P_DEN)
_L1P_SMALL = np.float32(0.41421356237309504880)
# XLA CPU's float32 log (Cephes polynomial in three interleaved parts)
_LOG_P = tuple(np.float32(c) for c in (
    7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
    -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1))
_LOG_Q1, _LOG_Q2 = np.float32(-2.12194440e-4), np.float32(0.693359375)
_SQRTHF = np.float32(0.707106781186547524)
_LOG_P64 = tuple(np.float64(c) for c in _LOG_P)
_TINY_F32 = np.float32(np.finfo(np.float32).tiny)

# erf_inv (Giles), float32 coefficients for w < 5 and w >= 5
ERFINV_F32_LT5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                  0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
ERFINV_F32_GE5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                  0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
_ERFINV_LT5, _ERFINV_GE5 = _coefs64(ERFINV_F32_LT5), _coefs64(ERFINV_F32_GE5)


def _log1p_small(x, out, s):
    n = x.shape[0]
    x64 = s.get("x64", _F64, n)
    t64 = s.get("t64", _F64, n)
    num = s.get("num", _F32, n)
    den = s.get("den", _F32, n)
    x64[...] = x
    _fma_horner(_L1P_NUM, x64, num, t64)
    _fma_horner(_L1P_DEN, x64, den, t64)
    np.divide(num, den, out=num)            # r
    x2 = den
    np.multiply(x, x, out=x2)
    np.multiply(x, x2, out=out)             # x³
    np.multiply(out, num, out=num)          # x³ r
    np.multiply(x2, np.float32(-0.5), out=x2)
    np.add(x2, num, out=num)                # -x²/2 + x³ r
    np.add(x, num, out=out)
    return out


def _fma32_into(a64, b64, c, out32, t64):
    """``out32`` = float32(a64 * b64 + c) (one float64 rounding, then float32)."""
    np.multiply(a64, b64, out=t64)
    np.add(t64, c, out=t64)
    np.copyto(out32, t64, casting="same_kind")


def log_pos_into(v, x, s):
    """``x`` = XLA CPU's float32 log of the positive normal float32 chunk ``v`` (the
    significand and exponent of frexp taken from the bits)."""
    n = v.shape[0]
    b = s.get("lg_b", _U32, n)
    e = s.get("lg_e", _F32, n)
    np.right_shift(v.view(_U32), np.uint32(23), out=b)
    np.copyto(e, b, casting="unsafe")
    np.subtract(e, np.float32(126), out=e)               # frexp's exponent
    np.bitwise_and(v.view(_U32), np.uint32(0x807FFFFF), out=b)
    np.bitwise_or(b, np.uint32(0x3F000000), out=b)
    return _log_core(b.view(_F32), e, x, s)              # (frexp's significand)


def _log_frexp(v, s):
    """``kernels.log_f32``'s arithmetic on any float32 chunk (NumPy's frexp: also zeros,
    negatives, subnormals and non-finite values, whose results are meaningless but
    reproduced)."""
    m, e = np.frexp(v)
    return _log_core(m, e.astype(_F32), np.empty(v.shape, _F32), s)


def _log_core(m, e, x, s):
    """``x`` = the log from frexp's significand ``m`` and exponent ``e`` (float32 chunks,
    ``e`` clobbered)."""
    n = m.shape[0]
    low = s.get("lg_low", np.dtype(np.bool_), n)
    np.less(m, _SQRTHF, out=low)
    np.subtract(e, low, out=e)
    np.subtract(m, np.float32(1), out=x)
    np.add(x, m, out=x, where=low)
    x2 = s.get("lg_x2", _F32, n)
    x3 = s.get("lg_x3", _F32, n)
    np.multiply(x, x, out=x2)
    np.multiply(x2, x, out=x3)
    x64 = s.get("lg_x64", _F64, n)
    x364 = s.get("lg_x364", _F64, n)
    t64 = s.get("lg_t64", _F64, n)
    u64 = s.get("lg_u64", _F64, n)
    np.copyto(x64, x)
    np.copyto(x364, x3)
    y = s.get("lg_y", _F32, n)
    y1 = s.get("lg_y1", _F32, n)
    y2 = s.get("lg_y2", _F32, n)
    p = _LOG_P64
    _fma32_into(x64, p[0], p[1], y, t64)
    _fma32_into(x64, p[3], p[4], y1, t64)
    _fma32_into(x64, p[6], p[7], y2, t64)
    for acc, c in ((y, p[2]), (y1, p[5]), (y2, p[8])):
        np.copyto(u64, acc)
        _fma32_into(u64, x64, c, acc, t64)
    for c in (y1, y2):
        np.copyto(u64, y)
        _fma32_into(u64, x364, c, y, t64)
    np.multiply(e, _LOG_Q1, out=y1)                      # q1·e, rounded to float32
    np.copyto(u64, y)
    _fma32_into(u64, x364, y1, y, t64)                   # y·x³ + q1·e (contracted)
    np.multiply(x2, np.float32(0.5), out=x2)
    np.subtract(x, x2, out=x)
    np.add(x, y, out=x)
    np.multiply(e, _LOG_Q2, out=e)
    np.add(x, e, out=x)
    return x


def log_f32(v):
    """XLA CPU's float32 log of positive normal ``v`` (a new array)."""
    v = np.ascontiguousarray(v, _F32)
    out = np.empty(v.shape, _F32)
    log_pos_into(v.reshape(-1), out.reshape(-1), scratch())
    return out


def _log_big(v, out, where, s):
    """``out[where]`` = log(``v``) for the chunk ``v`` = 1 + x of log1p's large |x|
    (positive normal unless x was outside log1p's domain, e.g. within erf_inv of |x| > 1:
    those few take NumPy's frexp, as before)."""
    n = v.shape[0]
    lv = s.get("l1_lv", _F32, n)
    with np.errstate(all="ignore"):
        log_pos_into(v, lv, s)
        np.copyto(out, lv, where=where)
        lo, hi = np.min(v), np.max(v)
        if not (lo >= _TINY_F32 and hi < np.float32(np.inf)):
            odd = np.flatnonzero(where & ~((v >= _TINY_F32) & (v < np.float32(np.inf))))
            if odd.size:
                out[odd] = _log_frexp(v[odd], s)


def log1p_f32(x, out, s):
    """XLA's float32 log1p of ``x`` (float32 chunk, finite, > -1) into ``out``."""
    _log1p_small(x, out, s)
    n = x.shape[0]
    big = s.get("l1_big", np.dtype(np.bool_), n)
    np.abs(x, out=s.get("l1_a", _F32, n))
    np.greater_equal(s.get("l1_a", _F32, n), _L1P_SMALL, out=big)
    nbig = np.count_nonzero(big)
    if nbig * 5 > n * 4:        # nearly all: the log of all 1 + x, then pick
        v = s.get("l1_v", _F32, n)
        np.add(x, np.float32(1), out=v)
        _log_big(v, out, big, s)
    elif nbig:
        idx = np.flatnonzero(big)
        part = np.empty(idx.size, _F32)
        _log_big(np.float32(1) + x[idx], part, np.ones(idx.size, bool), s)
        out[idx] = part
    return out


def erf_inv_f32(x, out, s):
    """XLA's float32 erf_inv (Giles' approximation: ``w = -log1p(-x²)``, a polynomial in
    ``w - 2.5`` or ``sqrt(w) - 3``, FMA Horner steps) of the chunk ``x`` into ``out``: by
    the compiled loop of ``accel`` once numba is loaded, else in NumPy."""
    from jaxlite._src.random import accel
    mod = accel.numba_module()
    if mod is None:
        with accel.timer():
            return _erf_inv_np(x, out, s)
    bad = s.get("bad", np.dtype(np.int64), x.shape[0])
    nb = mod.erf_inv_kernel(x, out, bad)
    if nb:                      # |x| > 1 or NaN: NumPy's garbage, bit for bit
        idx = bad[:nb].copy()
        out[idx] = _erf_inv_np(x[idx], np.empty(nb, _F32), s)
    return out


def _erf_inv_np(x, out, s):
    n = x.shape[0]
    t = s.get("t", _F32, n)
    w = s.get("w", _F32, n)
    np.multiply(x, x, out=t)
    np.negative(t, out=t)
    log1p_f32(t, w, s)
    np.negative(w, out=w)
    w64 = s.get("w64", _F64, n)
    np.subtract(w, np.float32(2.5), out=t)
    w64[...] = t
    _fma_horner(_ERFINV_LT5, w64, out, s.get("t64", _F64, n))
    far = np.flatnonzero(w >= np.float32(5))
    if far.size:
        wf = (np.sqrt(w[far]) - np.float32(3)).astype(_F64)
        pf = np.empty(far.size, _F32)
        out[far] = _fma_horner(_ERFINV_GE5, wf, pf, np.empty(far.size, _F64))
    np.multiply(out, x, out=out)
    edge = np.flatnonzero(np.abs(x) == np.float32(1))
    if edge.size:
        out[edge] = x[edge] * np.float32(np.inf)
    return out
