"""numba side of ``cpu_math.rsqrt``: the processor's reciprocal square root estimate, the
host's LLVM features, and the twin ``rsqrt_f32`` (``cpu_math.rsqrt.rsqrt_f32``'s bits:
the form chosen for this processor is fixed when the twin is compiled)."""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from jaxlite._src.cpu_math.nb_common import _fmaf, _inline, _sel, host_cpu_features

__all__ = ["host_cpu_features", "rsqrt_estimate_kernel", "rsqrt_f32"]

F32, F64 = np.float32, np.float64


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


def _form_constants():
    from jaxlite._src.cpu_math import rsqrt as R
    form = R.rsqrt_form()
    code = {"estimate": 0, "divide": 1, "exact": 2}[form.method]
    if code == 0 and R._chosen()[1] is None:
        code = 2
    return code, form.steps, form.fused


_METHOD, _STEPS, _FUSED = _form_constants()
_TINY = F32(np.finfo(np.float32).tiny)
_ZERO, _ONE, _MHALF, _INF = F32(0), F32(1), F32(-0.5), F32(np.inf)


@_inline
def _step(x, y):
    half_y = y * _MHALF
    if _FUSED:
        return _fmaf(half_y, _fmaf(x * y, y, F32(-1)), y)
    return half_y * ((x * y) * y + F32(-1)) + y


@_inline
def rsqrt_f32(x):
    """XLA:CPU's float32 ``rsqrt`` of one float32 on this processor
    (``cpu_math.rsqrt.rsqrt_f32``'s bits)."""
    if _METHOD == 1:
        xf = _sel(abs(x) < _TINY, x * _ZERO, x)
        return _ONE / np.sqrt(xf)
    if _METHOD == 2:
        return F32(F64(1.0) / np.sqrt(F64(x)))
    y0 = _rsqrt_estimate(x)
    y = y0
    for _ in range(_STEPS):
        y = _step(x, y)
    return _sel((x >= _TINY) & (x < _INF), y, y0)
