"""``cpu_math``'s kernels as the lax primitives call them.

``impl(name, nargs, fallback)`` is a primitive's ``impl``: float32 operands go to the
primitive's kernel, float16/bfloat16 ones through float32 and back (XLA:CPU computes them
so), other dtypes to ``fallback`` (NumPy). A kernel is the NumPy version until numba is
loaded (``accel``'s ski-rental choice: time spent in NumPy kernels is charged, numba is
taken once it pays), then a NumPy ufunc compiled by numba from the
numba twin (cached on disk like tier 2's kernels, ``runtime.kernel_cache``): NumPy's call
cost, compiled speed, the same bits.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import threading
import time
import warnings

import numpy as np

from jaxlite._src.cpu_math import accel, table, threads
from jaxlite._src.runtime import kernel_cache

__all__ = ["Kernel", "computes", "impl", "kernel", "nb_import_line"]

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
# elements per chunk of a NumPy kernel: its ~10-40 float64 temporaries stay ~1 MB
_NP_CHUNK = 1 << 13
_lock = threading.Lock()
_kernels = {}
_fp = []


def _half_dtypes():
    out = {np.dtype(np.float16)}
    try:
        import ml_dtypes
        out.add(np.dtype(ml_dtypes.bfloat16))
    except ImportError:   # (no bfloat16 without ml_dtypes)
        pass
    return frozenset(out)


_HALF = _half_dtypes()


def computes(dtype, name=None):
    """Whether a kernel computes operands of ``dtype`` (float32, or float16/bfloat16
    through float32 unless primitive ``name`` rounds its steps to them; float64 for the
    primitives of ``table.F64``)."""
    return dtype == _F32 or (dtype in _HALF and
                             dtype.name not in table.HALF_OWN_STEPS.get(name, ())) or \
        (dtype == _F64 and name in table.F64)


def _fingerprint():
    """A hash of cpu_math's source files: part of every compiled kernel's cache key."""
    if not _fp:
        d = os.path.dirname(__file__)
        h = hashlib.sha256()
        for n in sorted(os.listdir(d)):
            if n.endswith(".py"):
                with open(os.path.join(d, n), "rb") as f:
                    h.update(n.encode() + f.read())
        _fp.append(h.hexdigest()[:16])
    return _fp[0]


def nb_import_line():
    """The line a numba kernel's source imports the twins with (``_xm.<primitive>``)."""
    return f"from jaxlite._src.cpu_math import nb_all as _xm  # cpu_math {_fingerprint()}"


class Kernel:
    """The float32 (or, ``dtype``, float64: ``table.F64``) kernel of one primitive
    (``table``): the NumPy version, replaced by a numba-compiled ufunc of the twin once
    numba is loaded."""

    def __init__(self, name, nargs, dtype=_F32):
        fam, fn = (table.F64 if dtype == _F64 else table.ALL)[name]
        self.name, self.nargs, self.dtype = name, nargs, np.dtype(dtype)
        self.numpy = getattr(importlib.import_module(f"jaxlite._src.cpu_math.{fam}"), fn)
        self.ufunc = None
        self._failed = False
        # (the float64 NumPy kernels call the C library per element from Python: slow)
        self.numba_min = accel.NUMBA_MIN_SLOW if self.dtype == _F64 else accel.NUMBA_MIN

    def __call__(self, *args, out=None):
        u = self.ufunc
        n = args[0].size if len(args) == 1 else max(np.size(a) for a in args)
        if u is None and not self._failed and accel.ready(n, self.numba_min):
            u = self._build()
        if u is not None:
            if n < threads.PARALLEL_MIN:
                return u(*args) if out is None else u(*args, out=out)
            return self._chunks(u, args, out, numba=True, dtype=self.dtype)
        t0 = time.perf_counter()
        if n <= _NP_CHUNK and out is None:
            r = self.numpy(*(np.broadcast_arrays(*args) if self.nargs > 1 else args))
        else:   # (chunks: the NumPy kernels' temporaries stay cache-sized)
            r = self._chunks(self.numpy, args, out, numba=False, dtype=self.dtype)
        accel.charge(time.perf_counter() - t0)
        return r

    @staticmethod
    def _chunks(fn, args, out, numba, dtype=_F32):
        """``fn(*args)`` over flat chunks into ``out`` (a new array if None), across the
        worker threads for large arrays: ``fn`` a compiled ufunc (``numba``: written with
        ``out=``) or a NumPy kernel (its chunk results copied)."""
        shape = np.broadcast_shapes(*(np.shape(a) for a in args))
        flat = [np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)
                if np.shape(a) else a for a in args]
        if out is None:
            out = np.empty(shape, dtype)
        # (the flat view of ``out`` the chunks are written through: a buffer that is not
        # C-contiguous, e.g. a dying Fortran-ordered operand tier 1 reuses, has none, so
        # the chunks go to a new array copied into it at the end)
        whole = out if out.flags.c_contiguous else np.empty(shape, dtype)
        o = whole.reshape(-1)

        step = threads.CHUNK if numba else _NP_CHUNK

        def run(lo, hi):
            for c in range(lo, hi, step):
                e = min(c + step, hi)
                part = [a[c:e] if np.ndim(a) else a for a in flat]
                if numba:
                    fn(*part, out=o[c:e])
                else:
                    o[c:e] = fn(*np.broadcast_arrays(*part))
        threads.parallel_chunks(run, o.size)
        if whole is not out:
            np.copyto(out, whole)
        return out

    def _build(self):
        """The twin compiled as a float32 ufunc (None if numba fails: NumPy serves)."""
        with _lock:
            if self.ufunc is None and not self._failed:
                params = ", ".join(f"x{i}" for i in range(self.nargs))
                dt = self.dtype.name
                twin = self.name + ("_f64" if self.dtype == _F64 else "")
                src = "\n".join([
                    f"# jaxlite: XLA:CPU's {dt} {self.name} as a ufunc (generated)",
                    nb_import_line(), "import numba", "",
                    f"@numba.vectorize([\"{dt}(" + ", ".join([dt] * self.nargs)
                    + ")\"], cache=True)",
                    f"def kernel({params}):", f"    return _xm.{twin}({params})", ""])
                try:
                    u = kernel_cache.load_module(src).kernel
                    self.ufunc = getattr(u, "ufunc", u)   # (a DUFunc's NumPy ufunc)
                except Exception as e:  # noqa: BLE001 - numba's failure: keep NumPy's kernel
                    self._failed = True
                    warnings.warn(f"jaxlite: compiling XLA's float32 {self.name} with numba "
                                  f"failed ({type(e).__name__}: {e}); using the NumPy "
                                  "kernel (same results, slower)", RuntimeWarning,
                                  stacklevel=3)
        return self.ufunc


def kernel(name, nargs, dtype=_F32):
    """The shared ``Kernel`` of primitive ``name`` (for float32, or ``dtype`` float64)."""
    key = (name, np.dtype(dtype))
    k = _kernels.get(key)
    if k is None:
        with _lock:
            k = _kernels.setdefault(key, Kernel(name, nargs, dtype))
    return k


def _into(r, out):
    if out is None:
        return r
    np.copyto(out, r)
    return out


def _other(fallback):
    """``fallback`` taking ``out=`` (written in place by a ufunc, else copied in)."""
    if isinstance(fallback, np.ufunc):
        return lambda *a, out=None: fallback(*a) if out is None else fallback(*a, out=out)
    return lambda *a, out=None: _into(fallback(*a), out)


def impl(name, nargs, fallback):
    """The ``impl`` of primitive ``name``: its kernel for float32 (and half floats through
    float32), ``fallback`` for other dtypes; ``out=`` (tier 1's buffer reuse) gets the
    result written in (elementwise: an operand's own buffer may be it)."""
    k = kernel(name, nargs)
    other = _other(fallback)
    f32 = _F32
    half = frozenset(d for d in _HALF if d.name not in table.HALF_OWN_STEPS.get(name, ()))
    k64 = kernel(name, nargs, _F64) if name in table.F64 else None
    if nargs == 1:
        def run(x, out=None):
            dt = x.dtype
            if dt == f32:
                return k(x, out=out)
            if dt == _F64 and k64 is not None:
                return k64(x, out=out)
            if dt in half:
                return _into(np.asarray(k(np.asarray(x, f32)), dt), out)
            return other(x, out=out)
    elif nargs == 2:
        def run(x, y, out=None):
            dt = x.dtype
            if dt == f32:     # (pow's integer exponent: converted first, as XLA's code)
                return k(x, y if y.dtype == f32 else np.asarray(y, f32), out=out)
            if dt == _F64 and k64 is not None and y.dtype == _F64:
                return k64(x, y, out=out)
            if dt in half:
                return _into(np.asarray(k(np.asarray(x, f32), np.asarray(y, dt).astype(f32)),
                                        dt), out)
            return other(x, y, out=out)
    else:
        def run(*args, out=None):
            dt = args[0].dtype
            if dt == f32:
                return k(*args, out=out)
            if dt == _F64 and k64 is not None:
                return k64(*args, out=out)
            if dt in half:
                return _into(np.asarray(k(*[np.asarray(a, f32) for a in args]), dt), out)
            return other(*args, out=out)
    run.__name__ = run.__qualname__ = f"xla_{name}"
    run.__doc__ = f"lax.{name}: XLA:CPU's float32 kernel (cpu_math), else NumPy."
    return run
