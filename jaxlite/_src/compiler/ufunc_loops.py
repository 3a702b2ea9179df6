"""NumPy's own inner loops, called from numba code: the way tier 2's compiled loop bodies
compute what tier 1 computes with a NumPy ufunc (``np.sin``, ``np.maximum``, ``np.matmul``
...) with NumPy's bits, whatever the processor (NumPy picks its SIMD code at run time; so
does the loop it hands out here).

NumPy gives the strided loop of a ufunc for given dtypes through
``ufunc._resolve_dtypes_and_context`` and ``ufunc._get_strided_loop`` (an API NumPy made
for numba and others to experiment with): a C function
``loop(context, data, dimensions, strides, auxdata)``. ``strided_loop`` returns its
addresses after checking, on probe values, that a call through them gives what the ufunc
gives (else None: the body keeps its Python loop). The addresses belong to this process:
kernels take them as arguments (a table ``P``) so their code can be cached on disk.
``call_loop`` is the numba intrinsic calling such an address.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np

__all__ = ["strided_loop", "call_loop", "CAPSULE"]

CAPSULE = b"numpy_1.24_ufunc_call_info"
_get = ctypes.pythonapi.PyCapsule_GetPointer
_get.restype = ctypes.c_void_p
_get.argtypes = [ctypes.py_object, ctypes.c_char_p]
_LOOP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.c_void_p, ctypes.c_void_p)

_loops = {}     # (ufunc name, dtypes) -> (loop, context, auxdata) addresses, or None
_keep = []      # the capsules owning those contexts: alive for the process
_lock = threading.Lock()


def strided_loop(ufunc, in_dtypes):
    """``(loop, context, auxdata)`` addresses of NumPy's inner loop of ``ufunc`` for operands
    of ``in_dtypes`` (the loop NumPy itself runs for contiguous operands of those dtypes), or
    None when NumPy does not hand it out, it needs the Python API, or a call through it does
    not reproduce the ufunc on probe values."""
    key = (ufunc.__name__, tuple(np.dtype(d) for d in in_dtypes))
    got = _loops.get(key, False)
    if got is not False:
        return got
    with _lock:
        got = _loops.get(key, False)
        if got is False:
            try:
                got = _make(ufunc, key[1])
            except Exception:   # (another NumPy, a dtype without such a loop)
                got = None
            _loops[key] = got
    return got


def _make(ufunc, dts):
    if (ufunc.signature is not None and ufunc is not np.matmul) or ufunc.nout != 1 or \
            len(dts) != ufunc.nin:
        return None
    out_dts, info = ufunc._resolve_dtypes_and_context(dts + (None,))
    if tuple(out_dts[:-1]) != dts:
        return None         # (NumPy would cast an operand first)
    ufunc._get_strided_loop(info)
    p = _get(info, CAPSULE)
    words = (ctypes.c_void_p * 3).from_address(p)
    requires_pyapi = ctypes.c_bool.from_address(p + 3 * ctypes.sizeof(ctypes.c_void_p))
    if requires_pyapi.value or not words[0]:
        return None
    loop = (words[0], words[1] or 0, words[2] or 0)
    probe = _probe_matmul if ufunc is np.matmul else _probe
    if not probe(ufunc, dts, np.dtype(out_dts[-1]), loop):
        return None
    _keep.append(info)
    return loop


def _probe_values(dt, n):
    rng = np.random.default_rng(0)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(dt)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(max(info.min, -1000), min(info.max, 1000), n).astype(dt)
    v = rng.standard_normal(n) * 3
    v[:4] = [0.0, -0.0, 1.0, -1.0] if n >= 4 else v[:4]
    return v.astype(dt)


def _probe(ufunc, dts, out_dt, loop):
    """A call through ``loop`` gives the ufunc's bits on 37 values (a SIMD body and tail)."""
    n = 37
    xs = [_probe_values(d, n) for d in dts]
    with np.errstate(all="ignore"):
        want = ufunc(*xs)
    out = np.empty(n, out_dt)
    arrays = xs + [out]
    data = (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])
    dims = (ctypes.c_ssize_t * 1)(n)
    strides = (ctypes.c_ssize_t * len(arrays))(*[a.itemsize for a in arrays])
    with np.errstate(all="ignore"):
        _LOOP(loop[0])(loop[1], data, dims, strides, loop[2])
    return want.dtype == out_dt and want.tobytes() == out.tobytes()


def _probe_matmul(ufunc, dts, out_dt, loop):
    """A (3, 37) @ (37, 5) product through ``loop`` (core dimensions n, k, m after the
    outer count; strides of the outer loop, then of each operand's core dimensions) gives
    ``np.matmul``'s bits."""
    a = _probe_values(dts[0], 3 * 37).reshape(3, 37)
    b = _probe_values(dts[1], 37 * 5).reshape(37, 5)
    want = np.matmul(a, b)
    out = np.empty((3, 5), out_dt)
    data = (ctypes.c_void_p * 3)(a.ctypes.data, b.ctypes.data, out.ctypes.data)
    dims = (ctypes.c_ssize_t * 4)(1, 3, 37, 5)
    strides = (ctypes.c_ssize_t * 9)(0, 0, 0, *a.strides, *b.strides, *out.strides)
    _LOOP(loop[0])(loop[1], data, dims, strides, loop[2])
    return want.dtype == out_dt and want.tobytes() == out.tobytes()


def _intrinsic():
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    @intrinsic
    def call_loop(typingctx, fn, context, data, dims, strides, aux):
        """``fn(context, data, dims, strides, aux)``: a NumPy strided loop by address (all
        arguments are addresses, as integers)."""
        sig = types.int32(types.intp, types.intp, types.intp, types.intp, types.intp,
                          types.intp)

        def codegen(cgctx, builder, signature, args):
            i8p = ir.IntType(8).as_pointer()
            fnty = ir.FunctionType(ir.IntType(32), [i8p] * 5)
            f = builder.inttoptr(args[0], fnty.as_pointer())
            return builder.call(f, [builder.inttoptr(a, i8p) for a in args[1:]])
        return sig, codegen
    return call_loop


_intrinsic_fn = []


def __getattr__(name):
    """``call_loop``, made on first use (importing numba costs ~0.2 s)."""
    if name == "call_loop":
        with _lock:
            if not _intrinsic_fn:
                _intrinsic_fn.append(_intrinsic())
        return _intrinsic_fn[0]
    raise AttributeError(name)
