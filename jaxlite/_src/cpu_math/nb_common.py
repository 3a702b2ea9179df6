"""numba pieces shared by the compiled float32 kernels of ``cpu_math`` and ``random``:
branch-free selects, the fused multiply-add (hardware, or emulated through float64 as
``cpu_math.fma``), flushing subnormals. Imports numba: only numba-side modules import it.

Helpers are inlined into the loops in numba's IR (``inline="always"``): LLVM would leave
most of them as calls, which also stops vectorisation. numba's defaults keep every
operation exact IEEE (no ``fastmath``: no contraction, no reassociation).
"""
from __future__ import annotations

import ctypes
import ctypes.util

import llvmlite.binding as llvm
import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

__all__ = ["_inline", "_sel", "_sel64", "_fma", "_fmaf", "_fma1", "_flush", "F32", "F64",
           "TINY", "libm_sinf", "libm_cosf", "libm_tanf", "libm_powf", "libm64", "fma64",
           "host_cpu_features",
           "_rsqrt_estimate", "_rsqrt14_estimate", "rsqrt14_estimate_kernel",
           "rsqrt_estimate_kernel"]

_inline = numba.njit(inline="always", error_model="numpy")

F32, F64 = np.float32, np.float64
TINY = F32(np.finfo(np.float32).tiny)
_ZERO = F32(0)
_LOW29, _TIE29 = np.uint64(0x1FFFFFFF), np.uint64(0x10000000)
_U64 = np.uint64
_TINY = TINY


@_inline
def _sel(c, a, b):
    """float32 ``a if c else b`` without a branch."""
    m = np.uint32(0) - np.uint32(c)
    return np.uint32((np.float32(a).view(np.uint32) & m)
                     | (np.float32(b).view(np.uint32) & ~m)).view(np.float32)


@_inline
def _sel64(c, a, b):
    """float64 ``a if c else b`` without a branch."""
    m = np.uint64(0) - np.uint64(c)
    return np.uint64((np.float64(a).view(np.uint64) & m)
                     | (np.float64(b).view(np.uint64) & ~m)).view(np.float64)


@_inline
def _fma(p, c):
    """float32(p + c) for float64 ``p`` (an exact product) and ``c``, with
    ``xla_math.fma_f32``'s tie fix: a correctly rounded fused multiply-add."""
    s = p + c
    u = np.float64(s).view(np.uint64)
    back = s - p
    err = (p - (s - back)) + (c - back)
    # a float64 sum on a float32 midpoint, inexact: step it one ulp toward the error
    fix = ((u & _LOW29) == _TIE29) & (err != 0)
    moved = u + (np.uint64((err > 0) == (s > 0)) << _U64(1)) - _U64(1)
    return F32(_sel64(fix, np.uint64(moved).view(np.float64), s))


def _fma_intrinsic(ty):
    """An intrinsic computing ``a * b + c`` of type ``ty`` rounded once: LLVM's ``fma``
    (the FMA instruction, or the C library's exact ``fma``/``fmaf`` on a CPU without
    one)."""
    @intrinsic
    def fma(typingctx, a, b, c):
        if not all(t == ty for t in (a, b, c)):
            return None

        def codegen(context, builder, signature, args):
            return builder.fma(*args)
        return ty(ty, ty, ty), codegen
    return fma


# float32: equal to ``_fma`` of the float64 product whenever the result is not subnormal
_fmaf = _fma_intrinsic(types.float32)
fma64 = _fma_intrinsic(types.float64)


def host_cpu_features():
    """The names of the LLVM target features of the host processor that are on (``avx``,
    ``fma``, ``sse4a``, ...): LLVM's host detection, the query XLA:CPU makes for its
    target (it decides XLA's ``rsqrt``, see ``random.xla_extra``) and the features glibc's
    ifuncs test (its FMA builds of ``sinf``/``cosf``)."""
    return frozenset(k for k, on in llvm.get_host_cpu_features().items() if on)


@_inline
def _fma1(p, c):
    """float32(p + c), one float64 addition rounded to float32 (``kernels``' FMA)."""
    return F32(p + c)


@_inline
def _flush(x):
    """float32 ``x`` with a subnormal replaced by a zero of its sign."""
    return _sel(abs(x) < _TINY, x * _ZERO, x)


def _opaque_libm(name, nargs=1, double=False):
    """The C library's float32 function ``name`` (``double``: its float64 function) of
    ``nargs`` arguments of that type as a numba
    intrinsic LLVM cannot see into: a call of the symbol ``jaxlite_<name>`` (registered
    with LLVM's linker here, in every process that loads a kernel, so cached kernels find
    it by name). numba's ``math.sin`` becomes ``llvm.sin.f32``, which LLVM may execute
    speculatively: a rare ``if near_midpoint: math.sin(x)`` then costs a C library call
    per element in every vectorised loop (and LLVM may replace a vectorised call with
    another library's vector function). An opaque call stays on its branch and is the C
    library's own. Falls back to LLVM's intrinsic when there is no C library to link."""
    sym = f"jaxlite_{name}"
    path = ctypes.util.find_library("m")
    try:
        addr = ctypes.cast(getattr(ctypes.CDLL(path), name), ctypes.c_void_p).value \
            if path else None
    except (OSError, AttributeError):
        addr = None
    if addr:
        llvm.add_symbol(sym, addr)
    ir_ty = ir.DoubleType() if double else ir.FloatType()
    nb_ty = types.float64 if double else types.float32

    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir_ty, [ir_ty] * nargs)
        if addr:
            fn = builder.module.globals.get(sym) or ir.Function(builder.module, fnty, sym)
        else:
            fn = builder.module.declare_intrinsic(
                f"llvm.{name if double else name[:-1]}", [ir_ty])
        return builder.call(fn, args)

    if nargs == 1:
        @intrinsic
        def call(typingctx, x):
            if x != nb_ty:
                return None
            return nb_ty(nb_ty), codegen
    else:
        @intrinsic
        def call(typingctx, x, y):
            if x != nb_ty or y != nb_ty:
                return None
            return nb_ty(nb_ty, nb_ty), codegen
    return call


libm_sinf = _opaque_libm("sinf")
libm_cosf = _opaque_libm("cosf")
libm_tanf = _opaque_libm("tanf")
libm_powf = _opaque_libm("powf", 2)
# the float64 functions XLA:CPU calls in the C library (``cpu_math.libm64``)
libm64 = {n: _opaque_libm(n, 2 if n in ("pow", "atan2") else 1, double=True)
          for n in ("log", "sin", "cos", "tan", "atan", "erf", "cbrt", "pow", "atan2")}


@intrinsic
def _rsqrt_estimate(typingctx, x):
    """The x86 processor's float32 reciprocal square root estimate of ``x`` (SSE
    ``rsqrtss``, through LLVM's ``llvm.x86.sse.rsqrt.ss``; ``vrsqrtss`` on an AVX
    processor, the same instruction). About 12 bits, and its bits differ between processor
    families; the packed ``vrsqrtps`` of XLA's vectorised loops gives the same bits as the
    scalar instruction (checked on all positive float32 on an Intel Xeon). Only compiled
    on x86-64."""
    if x != types.float32:
        return None
    sig = types.float32(types.float32)

    def codegen(context, builder, signature, args):
        f32 = ir.FloatType()
        v4 = ir.VectorType(f32, 4)
        fn = builder.module.declare_intrinsic("llvm.x86.sse.rsqrt.ss",
                                              fnty=ir.FunctionType(v4, [v4]))
        lane0 = ir.Constant(ir.IntType(32), 0)
        vec = builder.insert_element(ir.Constant(v4, ir.Undefined), args[0], lane0)
        return builder.extract_element(builder.call(fn, [vec]), lane0)
    return sig, codegen


@numba.njit(nogil=True, cache=True, error_model="numpy")
def rsqrt_estimate_kernel(x, out):
    """``out[i]`` = the processor's reciprocal square root estimate of ``x[i]`` (float32,
    1-D); x86-64 only."""
    for i in range(x.shape[0]):
        out[i] = _rsqrt_estimate(x[i])


@intrinsic
def _rsqrt14_estimate(typingctx, x):
    """The x86 processor's AVX-512 float64 reciprocal square root estimate of ``x``
    (``vrsqrt14pd`` on a 2-lane vector, through ``llvm.x86.avx512.rsqrt14.pd.128``, all
    lanes unmasked: the call XLA:CPU emits for a scalar float64 ``rsqrt``): 14 bits. Only
    compiled on an x86-64 processor with AVX-512 (F and VL)."""
    if x != types.float64:
        return None
    sig = types.float64(types.float64)

    def codegen(context, builder, signature, args):
        f64 = ir.DoubleType()
        v2 = ir.VectorType(f64, 2)
        fn = builder.module.declare_intrinsic(
            "llvm.x86.avx512.rsqrt14.pd.128",
            fnty=ir.FunctionType(v2, [v2, v2, ir.IntType(8)]))
        lane0 = ir.Constant(ir.IntType(32), 0)
        vec = builder.insert_element(ir.Constant(v2, ir.Undefined), args[0], lane0)
        r = builder.call(fn, [vec, ir.Constant(v2, [0.0, 0.0]),
                              ir.Constant(ir.IntType(8), 0xFF)])
        return builder.extract_element(r, lane0)
    return sig, codegen


@numba.njit(nogil=True, cache=True, error_model="numpy")
def rsqrt14_estimate_kernel(x, out):
    """``out[i]`` = the processor's AVX-512 reciprocal square root estimate of ``x[i]``
    (float64, 1-D); x86-64 with AVX-512 only."""
    for i in range(x.shape[0]):
        out[i] = _rsqrt14_estimate(x[i])
