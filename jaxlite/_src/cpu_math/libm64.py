"""The float64 functions XLA:CPU leaves to the C library, in NumPy: ``log``, ``sin``,
``cos``, ``tan``, ``atan``, ``erf``, ``cbrt``, ``pow``, ``atan2``.

XLA's float64 code calls glibc's ``log``, ``sin``... (LLVM's ``llvm.log.f64`` and
friends become plain calls of the C library's symbols), under the processor's
flush-to-zero and denormals-are-zero modes. Here: the C library's function itself, called
per element (Python's ``math`` functions where they are the C library's, ctypes for the
rest: correct, ~100-500 ns an element; the numba twins in ``libm64_nb`` call it from
compiled code at the C function's own speed, and serve once numba is loaded),
with the processor's modes modelled where they change a result: a subnormal operand is
read as a zero (DAZ) only by the arithmetic inside the C function, not by its tests of the
operand's bits, so each function says what that does to it:

* ``log``, ``erf``, ``cbrt``: a subnormal operand is a zero of its sign.
* ``sin``, ``cos``, ``tan``, ``atan``: glibc returns a tiny operand itself (``sin(x) = x``
  with no arithmetic), so a subnormal operand's result is the operand, unflushed.
* ``pow``: the special cases are decided from the operands' bits (a negative subnormal base
  with a non-integer exponent is NaN, a subnormal exponent is not an integer); a subnormal
  base with ``2^-65 <= |y| < 2^63`` is normalised by a multiplication by ``2^52`` that
  flushes to zero, which leaves glibc's log of the base ``-1075 ln 2``: the power of
  ``2^-1075`` with the base's sign rules. Here ``2^(-1075 y)`` in double-double
  arithmetic (``pow2_1075``: good to ~2^-95, then rounded once), which is glibc's result
  but where glibc's own rounding (its error reaches 0.52 ulp) goes the other way: about
  one such power in 2000.
* ``atan2(y, x)``: a subnormal ``x`` is a zero of its sign (``+-pi/2``, or ``0``/``pi``
  for a zero ``y``); a subnormal ``y`` over a finite nonzero ``x`` compares as zero in
  glibc's sign tests: ``-pi`` for ``x <= -ATAN2_FAR`` (glibc's branch for ``y/x`` far
  below an ulp), ``pi`` of ``y``'s sign for a negative ``x`` nearer zero, a zero of
  ``y``'s sign for a positive ``x``.

A subnormal result is a zero of its sign (FTZ), but for the tiny operands the sine,
tangent and arctangent return.

``atan``: XLA lowers it to ``atan2(x, 1)``; its vectorised loops call the C library's
``atan`` for every lane, which is what ``atan_f64`` computes. The scalar code at the end
of a loop or of one thread's part of it (the last ``n % 4`` elements) computes another
function there: seen 1 ulp off on 2 elements of 65550; not reproduced (a kernel computing
each element alone cannot know where XLA's loops end). glibc's float64 ``log``/``sin``/``atan``...
are correctly rounded in all but rare cases, but NumPy's own float64 functions (its SIMD
``log``, SVML's ``tan`` on AVX-512 processors) are not the same functions: they differ from
XLA's results on up to ~0.5% of inputs. Without a C library to call (not a glibc system),
NumPy's functions are used.
"""
from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from jaxlite._src.cpu_math.fma import fma64_np

__all__ = ["ATAN2_FAR", "FNS", "LN2_HI", "LN2_LO", "atan2_f64", "atan_f64", "call", "cbrt_f64",
           "cos_f64", "daz", "erf_f64", "log_f64", "pow2_1075", "pow_f64", "sin_f64",
           "tan_f64"]

F64 = np.dtype(np.float64)
TINY64 = float(np.finfo(np.float64).tiny)
ATAN2_FAR = 2.0 ** -966

# the C library's name: (the number of operands, NumPy's function where there is no C library)
FNS = {"log": (1, np.log), "sin": (1, np.sin), "cos": (1, np.cos), "tan": (1, np.tan),
       "atan": (1, np.arctan), "cbrt": (1, np.cbrt), "pow": (2, np.power),
       "atan2": (2, np.arctan2), "erf": (1, None)}
_fns = {}


def _c_function(name):
    """The C library's float64 function ``name`` as a NumPy object ufunc, or None."""
    if name not in _fns:
        u = None
        try:
            path = ctypes.util.find_library("m")
            if path:
                fn = getattr(ctypes.CDLL(path), name)
                fn.restype = ctypes.c_double
                fn.argtypes = [ctypes.c_double] * FNS[name][0]
                u = np.frompyfunc(fn, FNS[name][0], 1)
        except (OSError, AttributeError):
            u = None
        _fns[name] = u
    return _fns[name]


def _erf_fallback(x):
    import math
    return np.frompyfunc(math.erf, 1, 1)(x)


def daz(x):
    """``x`` (float64) with subnormals replaced by zeros of their sign."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        return np.where(np.abs(x) < TINY64, x * 0.0, x)


def _subnormal(x):
    return (np.abs(x) < TINY64) & (x != 0)


def _math_safe(name, args):
    """Where Python's ``math.<name>`` returns the C library's result without raising (it
    calls the same function, ~3x faster than ctypes; its own special cases and errors are
    outside these elements)."""
    with np.errstate(all="ignore"):
        if name == "log":
            return np.isfinite(args[0]) & (args[0] > 0)
        if name == "pow":
            x, y = args
            return np.isfinite(x) & (x > 0) & np.isfinite(y) & (np.abs(y * np.log2(x)) < 1000)
        if name == "atan2":
            y, x = args
            return np.isfinite(y) & np.isfinite(x) & (x != 0)
        return np.isfinite(args[0])


def _per_element(name, args):
    """The C library's ``name`` of broadcast float64 ``args``, element by element from
    Python: ``math.<name>`` where it is the C function (``_math_safe``), ctypes elsewhere."""
    import math
    import sys
    # (math.erf calls the C library's erf from Python 3.11 on: checked bit for bit there)
    mf = getattr(math, name, None) if name != "erf" or sys.version_info >= (3, 11) else None
    u = _c_function(name)
    if mf is None:
        return np.asarray(u(*args), F64)
    mu = np.frompyfunc(mf, len(args), 1)
    safe = _math_safe(name, args)
    if safe.all():
        return np.asarray(mu(*args), F64)
    y = np.empty(args[0].shape, F64)
    y[safe] = np.asarray(mu(*(a[safe] for a in args)), F64)
    rest = ~safe
    y[rest] = np.asarray(u(*(a[rest] for a in args)), F64)
    return y


def call(name, *args, flush=True):
    """The C library's float64 ``name`` of float64 arrays (broadcast), per element;
    ``flush``: subnormal operands read as zeros (DAZ) and a subnormal result flushed
    (FTZ)."""
    args = np.broadcast_arrays(*(daz(a) if flush else np.asarray(a, F64) for a in args))
    u = _c_function(name)
    with np.errstate(all="ignore"):
        if u is not None:
            y = _per_element(name, args) if args[0].size else np.empty(args[0].shape, F64)
        else:
            y = np.asarray((FNS[name][1] or _erf_fallback)(*args), F64)
        return np.where(np.abs(y) < TINY64, y * 0.0, y) if flush else y


def log_f64(x):
    """XLA:CPU's float64 ``log`` (the C library's) of a float64 array."""
    return call("log", x)


def sin_f64(x):
    """XLA:CPU's float64 ``sin`` (the C library's) of a float64 array."""
    return call("sin", x, flush=False)


def cos_f64(x):
    """XLA:CPU's float64 ``cos`` (the C library's) of a float64 array."""
    return call("cos", x, flush=False)


def tan_f64(x):
    """XLA:CPU's float64 ``tan`` (the C library's) of a float64 array."""
    return call("tan", x, flush=False)


def atan_f64(x):
    """XLA:CPU's float64 ``atan`` (the C library's) of a float64 array."""
    return call("atan", x, flush=False)


def erf_f64(x):
    """XLA:CPU's float64 ``erf`` (the C library's) of a float64 array."""
    return call("erf", x)


def cbrt_f64(x):
    """XLA:CPU's float64 ``cbrt`` (the C library's) of a float64 array."""
    return call("cbrt", x)


def pow_f64(x, y):
    """XLA:CPU's float64 ``x ** y`` (the C library's ``pow``) of float64 arrays."""
    x, y = np.broadcast_arrays(np.asarray(x, F64), np.asarray(y, F64))
    with np.errstate(all="ignore"):
        quirk = _subnormal(x) & (np.abs(y) >= 2.0 ** -65) & (np.abs(y) < 2.0 ** 63)
        out = call("pow", x, y, flush=False)
        if quirk.any():
            xq, yq = x[quirk], y[quirk]
            # (the sign rules from glibc's own tests: NaN, -1 or 1)
            out[quirk] = call("pow", np.copysign(1.0, xq), yq, flush=False) * \
                pow2_1075(yq)
        return np.where(np.abs(out) < TINY64, out * 0.0, out)


LN2_HI, LN2_LO = 0.6931471805599453, 2.3190468138462996e-17


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _dd_mul(ah, al, bh, bl):
    p = ah * bh
    return _two_sum(p, fma64_np(ah, bh, -p) + (ah * bl + al * bh))


def pow2_1075(y):
    """``2^(-1075 y)`` of a float64 array, in double-double arithmetic rounded once (0 or
    inf where ``|1075 y| > 1200``): ``1075 y = n + f`` exactly, ``v = -f ln 2``, ``e^(v /
    256) - 1`` by its Taylor series, squared eight times as ``2e + e^2``, times
    ``2^-n``."""
    y = np.asarray(y, F64)
    with np.errstate(all="ignore"):
        t = 1075.0 * y
        t_lo = fma64_np(np.full(t.shape, 1075.0), y, -t)
        far = ~(np.abs(t) <= 1200.0)
        t, t_lo = np.where(far, 0.0, t), np.where(far, 0.0, t_lo)
        n = np.round(t)
        uh, ul = _two_sum(n - t, -t_lo)
        vh, vl = _dd_mul(uh, ul, LN2_HI, LN2_LO)
        wh, wl = vh * 2.0 ** -8, vl * 2.0 ** -8
        w2h, w2l = _dd_mul(wh, wl, wh, wl)
        c = 0.5 + wh * (1 / 6 + wh * (1 / 24 + wh * (1 / 120 + wh / 720)))
        th, tl = _dd_mul(w2h, w2l, c, np.zeros_like(c))
        eh, el = _two_sum(wh, th)
        eh, el = _two_sum(eh, el + (wl + tl))
        for _ in range(8):
            sh, sl = _dd_mul(eh, el, eh, el)
            a, b = _two_sum(2.0 * eh, sh)
            eh, el = _two_sum(a, b + (2.0 * el + sl))
        rh, rl = _two_sum(np.ones_like(eh), eh)
        out = np.ldexp(rh + (rl + el), (-n).astype(np.int64))
        return np.where(far, np.where(y > 0, 0.0, np.where(y < 0, np.inf, np.nan)), out)


def atan2_f64(y, x):
    """XLA:CPU's float64 ``atan2(y, x)`` (the C library's) of float64 arrays."""
    y, x = np.broadcast_arrays(np.asarray(y, F64), np.asarray(x, F64))
    with np.errstate(all="ignore"):
        x = np.where(_subnormal(x), x * 0.0, x)
        out = call("atan2", y, x, flush=False)
        ysub = _subnormal(y) & np.isfinite(x) & (x != 0)
        neg = np.where(x <= -ATAN2_FAR, -np.pi, np.copysign(np.pi, y))
        out = np.where(ysub, np.where(x < 0, neg, y * 0.0), out)
        return np.where(np.abs(out) < TINY64, out * 0.0, out)
