"""XLA:CPU's own float64 functions in NumPy, bit for bit: ``exp`` and ``tanh``, and what
XLA expands from them (as for float32, ``cpu_math.hyperbolic``): ``expm1``, ``cosh``,
``sinh``, ``logistic``.

``exp``: XLA calls its own function for it (``xla.exp.f64``,
a Cephes-style rational approximation): ``n = floor(x log2(e) + 1/2)``, ``g = x - n C1 -
n C2`` (ln 2 split in two), ``e^g = 1 + 2 P / (Q - P)`` with ``P = g ((P0 g^2 + P1) g^2 +
P2)`` and ``Q`` a cubic in ``g^2``, then ``ldexp(e^g, n)``; the input is clamped to
``[EXP_LO, EXP_HI]`` first and the result is 0 below, inf above. XLA's code is compiled
with contraction: on a processor with FMA each multiply feeding an add is one fused
multiply-add (``FUSED``), emulated here with double-double arithmetic.

``tanh``: XLA's rational approximation (Eigen's ``ptanh_double``: an odd numerator of
degree 19 over an even denominator of degree 18, in ``x^2`` by Horner's rule, the
numerator times ``x`` last), the input clamped to ``[-TANH_CLAMP, TANH_CLAMP]`` and the
result ``+-1`` where ``|x| >= 20``. Subnormal inputs are zeros (XLA:CPU's DAZ).

``expm1``: ``exp(x) - 1`` for ``|x| > 1/2``, else ``tanh(x / 2) (exp(x) + 1)``; ``x``
where ``x / 2`` flushes to zero (FTZ). ``cosh``: ``exp(x - ln 2) + exp(-ln 2 - x)``. ``sinh``: for
``|x| < 1``, ``(e + e / (e + 1)) / 2`` with ``e = expm1(x)``, else ``exp(x - ln 2) -
exp(-ln 2 - x)``. ``logistic``: ``1 / (1 + exp(-x))``. Subnormal results of ``sinh`` and
``logistic`` are flushed (FTZ).

``log1p``: XLA's own function (``xla.log1p.f64``): for ``|x| < sqrt(2) - 1`` a Cephes
rational (numerator and denominator of degree 6, each by Horner's rule from zero, every
step a multiply-add: fused where ``FUSED``), then ``x + (-x^2/2 + x^3 num/den)``; else the
C library's ``log(1 + x)`` (``libm64``). Subnormal inputs are zeros (DAZ). Fused into a
larger loop (``atanh``), LLVM contracts ``x^3 num/den - x^2/2`` too (``fused=True``).

``exp2``: ``exp(x ln 2)``, the product rounded."""
from __future__ import annotations

import os
import platform

import numpy as np

from jaxlite._src.cpu_math.fma import fma64_np, fma_f64
from jaxlite._src.cpu_math.libm64 import daz, log_f64

__all__ = ["EXP64", "FUSED", "L1P_DEN", "L1P_NUM", "L1P_SMALL", "LN2", "TANH_DEN", "TANH_NUM",
           "cosh_f64", "exp2_f64", "exp_f64", "expm1_f64", "fma64_np", "fma_f64", "log1p_f64",
           "logistic_f64", "sinh_f64", "tanh_f64"]

F64 = np.dtype(np.float64)

# (name: value) of XLA's constants, in the order the twin reads them
EXP64 = {
    "HI": 709.782712893384, "LO": -708.3964185322641, "LOG2E": 1.4426950408889634,
    "P0": 1.26177193074810590878e-4, "P1": 3.02994407707441961300e-2,
    "P2": 9.99999999999999999910e-1, "Q0": 3.00198505138664455042e-6,
    "Q1": 2.52448340349684104192e-3, "Q2": 2.27265548208155028766e-1,
    "Q3": 2.00000000000000000009e0, "C1": 0.693145751953125,
    "C2": 1.42860682030941723212e-6,
}


# tanh's numerator (x times a polynomial in x^2, highest power first) and denominator
TANH_NUM = (2.6158007860482230e-23, 7.6534862268749319e-19, 3.1309488231386680e-15,
            4.2303918148209176e-12, 2.4618379131293676e-09, 6.8644367682497074e-07,
            9.3839087674268880e-05, 5.9809711724441161e-03, 1.5184719640284322e-01, 1.0)
TANH_DEN = (6.463747022670968018e-21, 5.782506856739003571e-17, 1.293019623712687916e-13,
            1.123643448069621992e-10, 4.492975677839633985e-08, 8.785185266237658698e-06,
            8.295161192716231542e-04, 3.437448108450402717e-02, 4.851805297361760360e-01, 1.0)
TANH_CLAMP = 17.714196154005176
TANH_ONE = 20.0
TINY64 = float(np.finfo(np.float64).tiny)
LN2 = 0.6931471805599453

# log1p's rational for |x| < L1P_SMALL, highest degree first
L1P_NUM = (4.5270000862445199635215E-5, 4.9854102823193375972212E-1,
           6.5787325942061044846969E0, 2.9911919328553073277375E1,
           6.0949667980987787057556E1, 5.7112963590585538103336E1,
           2.0039553499201281259648E1)
L1P_DEN = (1., 1.5062909083469192043167E1, 8.3047565967967209469434E1,
           2.2176239823732856465394E2, 3.0909872225312059774938E2,
           2.1642788614495947685003E2, 6.0118660497603843919306E1)
L1P_SMALL = 0.41421356237309504880


def _host_has_fma():
    """Whether this x86-64 processor has FMA (LLVM then contracts XLA's multiply-adds);
    read from /proc/cpuinfo (no numba needed). ``JAXLITE_FMA=0/1`` overrides."""
    env = os.environ.get("JAXLITE_FMA")
    if env in ("0", "1"):
        return env == "1"
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    return "fma" in flags or "fma4" in flags
    except OSError:
        pass
    return False


FUSED = _host_has_fma()


def _mad(a, b, c):
    return fma64_np(a, b, c) if FUSED else a * b + c


def exp_f64(x):
    """XLA:CPU's float64 ``exp`` of a float64 array."""
    k = EXP64
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        xc = np.maximum(np.minimum(x, k["HI"]), k["LO"])      # (NaN stays NaN)
        n = np.floor(_mad(xc, k["LOG2E"], 0.5))
        g = _mad(-n, k["C1"], xc)
        g = _mad(-n, k["C2"], g)
        g2 = g * g
        p = _mad(_mad(k["P0"], g2, k["P1"]), g2, k["P2"]) * g
        q = _mad(_mad(_mad(k["Q0"], g2, k["Q1"]), g2, k["Q2"]), g2, k["Q3"])
        e = _mad(p / (q - p), 2.0, 1.0)
        out = np.ldexp(e, np.nan_to_num(n).astype(np.int64))
        out = np.where(x < k["LO"], 0.0, out)
        out = np.where(x > k["HI"], np.inf, out)
    return out


def tanh_f64(x):
    """XLA:CPU's float64 ``tanh`` of a float64 array."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        x = np.where(np.abs(x) < TINY64, x * 0.0, x)         # (DAZ)
        xc = np.where(np.isnan(x), x, np.minimum(np.maximum(x, -TANH_CLAMP), TANH_CLAMP))
        x2 = xc * xc
        p = np.full(x.shape, TANH_NUM[0])
        for a in TANH_NUM[1:]:
            p = _mad(x2, p, a)
        q = np.full(x.shape, TANH_DEN[0])
        for b in TANH_DEN[1:]:
            q = _mad(x2, q, b)
        out = (xc * p) / q
        return np.where(np.abs(x) >= TANH_ONE, np.copysign(1.0, x), out)


def expm1_f64(x):
    """XLA:CPU's float64 ``expm1`` of a float64 array."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        e = exp_f64(x)
        h = x * 0.5
        y = np.where(np.abs(x) > 0.5, e - 1.0, tanh_f64(h) * (e + 1.0))
        return np.where(np.abs(h) < TINY64, x, y)      # (h flushed to zero: FTZ)


def cosh_f64(x):
    """XLA:CPU's float64 ``cosh`` of a float64 array."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        return exp_f64(x - LN2) + exp_f64(-LN2 - x)


def sinh_f64(x):
    """XLA:CPU's float64 ``sinh`` of a float64 array."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        big = exp_f64(x - LN2) - exp_f64(-LN2 - x)
        e = expm1_f64(x)
        y = np.where(np.abs(x) < 1.0, (e + e / (e + 1.0)) * 0.5, big)
        return np.where(np.abs(y) < TINY64, y * 0.0, y)    # (FTZ)


def logistic_f64(x):
    """XLA:CPU's float64 ``logistic`` of a float64 array."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        y = 1.0 / (1.0 + exp_f64(-x))
        return np.where(np.abs(y) < TINY64, y * 0.0, y)


def log1p_f64(x, fused=False):
    """XLA:CPU's float64 ``log1p`` of a float64 array (``fused``: the form inside a
    larger fused loop, ``x^3 num/den - x^2/2`` contracted too where ``FUSED``)."""
    x = daz(x)
    with np.errstate(all="ignore"):
        num = np.full(x.shape, L1P_NUM[0])
        den = np.full(x.shape, L1P_DEN[0])
        for a, b in zip(L1P_NUM[1:], L1P_DEN[1:]):
            num = _mad(num, x, a)
            den = _mad(den, x, b)
        x2 = x * x
        if fused:
            small = x + _mad(x * x2, num / den, -0.5 * x2)
        else:
            small = x + (-0.5 * x2 + (x * x2) * (num / den))
        big = np.abs(x) >= L1P_SMALL
        out = np.array(small, F64)
        if big.any():
            out[big] = log_f64(x[big] + 1.0)
        return out


def exp2_f64(x):
    """XLA:CPU's float64 ``exp2`` (``exp(x ln 2)``) of a float64 array."""
    with np.errstate(all="ignore"):
        return exp_f64(np.asarray(x, F64) * LN2)
