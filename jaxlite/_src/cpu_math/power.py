"""XLA:CPU's float32 ``pow`` in NumPy: XLA calls the C library's ``powf`` (glibc's: the
power computed in double precision and rounded once, correctly rounded but for results
near a rounding midpoint) under the flush-to-zero and denormals-are-zero modes. Here: the
float64 power rounded to float32, and the C library itself for the results within 1/64
ulp of a midpoint. ``powf``'s own error before rounding reaches 0.32 ulp, so about one
result in a million further from a midpoint is rounded the other way by ``powf``: there
this kernel is an ulp off (the numba twin, which calls ``powf``, is not). NumPy's float32
``power`` differs: on AVX-512 processors it is a vectorised approximation (about one result
in five differs from ``powf``)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.cpu_math.emu import F32, F64, TINY, ftz
from jaxlite._src.cpu_math.trig import _libm, _libm_map

__all__ = ["MIDPOINT", "SUBNORMAL_BASE", "pow_f32"]

# how near (in ulps of the float32 result) to a rounding midpoint the float64 power must be
# for the C library to decide the rounding
MIDPOINT = 1.0 / 64
# the base ``powf`` computes with for a subnormal one under DAZ (its log2 is -150 up to the
# rounding of glibc's table sum, which is not modelled: about one result in 4000 of such
# bases is an ulp off JAX's)
SUBNORMAL_BASE = 2.0 ** -150
# at most this many elements are computed by calling powf for each
SMALL = 16


def pow_f32(x, y):
    """XLA:CPU's float32 ``x ** y`` (glibc's ``powf`` under FTZ/DAZ) of float32 arrays.
    The operands are not flushed: ``powf`` decides zero, infinite, NaN and negative bases
    and integer exponents from their bits. A subnormal base (``SUBNORMAL_BASE``) is
    ``powf``'s DAZ quirk: its normalising product flushes to 0, and the power is then
    that of ``2**-150`` (sign and integer tests as for the base itself)."""
    x, y = np.broadcast_arrays(np.asarray(x, F32), np.asarray(y, F32))
    shape = x.shape
    x, y = x.reshape(-1), y.reshape(-1)
    sub = (np.abs(x) < TINY) & (x != 0)
    if x.size <= SMALL and not sub.any() and _libm("powf", 2) is not None:
        # (a few elements: the C library's powf itself costs less than the float64 path)
        with np.errstate(all="ignore"):
            return ftz(_libm_map("powf", np.power, x, y)).reshape(shape)
    with np.errstate(all="ignore"):
        xd = x.astype(F64)
        if sub.any():
            xd[sub] = np.copysign(SUBNORMAL_BASE, xd[sub])
        v = np.power(xd, y.astype(F64))
        out = v.astype(F32)
        err = np.abs(v - out.astype(F64))
        # the float32 neighbour of out on the side of v, and the distance to it
        toward = np.where(v > out, np.float32(np.inf), np.float32(-np.inf))
        step = np.abs(np.nextafter(out, toward).astype(F64) - out.astype(F64))
        near = np.abs(err / step - 0.5) < MIDPOINT
    near &= np.isfinite(out) & (out != 0) & (err != 0) & ~sub
    idx = np.flatnonzero(near)
    if idx.size:
        out[idx] = _libm_map("powf", np.power, x[idx], y[idx])
    # (x86 flushes a result tiny before rounding)
    np.copyto(out, np.copysign(np.float32(0), out), where=(np.abs(v) < TINY) & ~near)
    return ftz(out).reshape(shape)
