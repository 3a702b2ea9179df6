"""XLA:CPU's float64 ``asin``, ``acos``, ``asinh``, ``acosh``, ``atanh``, ``erfc``,
``erf_inv``, ``lgamma`` and ``digamma`` in NumPy, bit for bit: the expansions XLA compiles
(CHLO decompositions, as for float32 in ``trig``/``inverse``/``erf``/``special``/
``gamma``) with float64 constants, over the float64 ``log``/``log1p``/``exp``/``sin``/
``cos``/``atan2`` of ``libm64`` and ``xla64``. Each multiply feeding an add is one fused
multiply-add where ``xla64.FUSED``. Subnormal inputs are zeros in the arithmetic (DAZ),
subnormal results of the final arithmetic are flushed (FTZ).

* ``asin(x) = 2 atan2(x, 1 + sqrt((1 - x)(1 + x)))``, ``acos(x) = atan2(sqrt((1 - x)(1 +
  x)), x)`` (the C library's ``atan2``, given ``x`` itself).
* ``asinh(x) = sign(x) log1p(|x| + x^2 / (sqrt(x^2 + 1) + 1))``, ``sign(x) (log|x| + ln
  2)`` for ``|x| >= 2^512``; ``acosh(x) = log1p(sqrt(x - 1) (sqrt(x + 1) + sqrt(x -
  1)))``, ``log(x) + ln 2`` for ``x >= 2^1023``; ``atanh(x) = (log1p(x) - log1p(-x)) /
  2`` (log1p in its fused form), NaN for ``|x| > 1``.
* ``erfc``: Cephes: for ``|x| < 1``, ``1 - x T(x^2) / U(x^2)``; else ``exp(-x^2) P(|x|) /
  Q(|x|)`` (``|x| < 8``) or ``exp(-x^2) R(|x|) / S(|x|)``, 0 where ``x^2 > MAXLOG``,
  ``2 -`` it for negative ``x``; the polynomials by Horner's rule from their leading
  coefficient.
* ``erf_inv``: Giles' double-precision approximation: ``w = -log1p(-x^2)``; a polynomial
  in ``w - 3.125`` (``w < 6.25``, degree 22), ``sqrt(w) - 3.25`` (``w < 16``, degree 18)
  or ``sqrt(w) - 5`` (degree 16), its coefficients selected element by element, times
  ``x``; ``x * inf`` at ``|x| = 1``.
* ``lgamma``, ``digamma``: Lanczos (g = 7, 9 terms) as ``gamma`` describes for float32,
  with ``c0 = 0.99999999999980993`` (the float32 code's is 1 after rounding).
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.cpu_math.libm64 import atan2_f64, cos_f64, daz, log_f64, sin_f64
from jaxlite._src.cpu_math.xla64 import LN2, TINY64, _mad, exp_f64, log1p_f64

__all__ = ["ERFC_P", "ERFC_Q", "ERFC_R", "ERFC_S", "ERFC_T", "ERFC_U", "ERFINV_16",
           "ERFINV_625", "ERFINV_BIG", "LANCZOS", "LANCZOS_C0", "acos_f64", "acosh_f64",
           "asin_f64", "asinh_f64", "atanh_f64", "digamma_f64", "erf_inv_f64", "erfc_f64",
           "lgamma_f64"]

F64 = np.dtype(np.float64)
ASINH_BIG, ACOSH_BIG = 2.0 ** 512, 2.0 ** 1023

ERFC_P = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
          4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
          9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
ERFC_Q = (1.00000000000000000000E0, 1.32281951154744992508E1, 8.67072140885989742329E1,
          3.54937778887819891062E2, 9.75708501743205489753E2, 1.82390916687909736289E3,
          2.24633760818710981792E3, 1.65666309194161350182E3, 5.57535340817727675546E2)
ERFC_R = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
          6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
ERFC_S = (1.00000000000000000000E0, 2.26052863220117276590E0, 9.39603524938001434673E0,
          1.20489539808096656605E1, 1.70814450747565897222E1, 9.60896809063285878198E0,
          3.36907645100081516050E0)
ERFC_T = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
          7.00332514112805075473E3, 5.55923013010394962768E4)
ERFC_U = (1.00000000000000000000E0, 3.35617141647503099647E1, 5.21357949780152679795E2,
          4.59432382970980127987E3, 2.26290000613890934246E4, 4.92673942608635921086E4)
ERFC_MAXLOG = 7.09782712893383996843E2

# Giles' erfinv, highest degree first: w < 6.25, w < 16, else
ERFINV_625 = (
    -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
    1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
    6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
    2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
    1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
    4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
    0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
    0.24015818242558961693, 1.6536545626831027356)
ERFINV_16 = (
    2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
    1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
    2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
    6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
    0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
    -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
    3.0838856104922207635)
ERFINV_BIG = (
    -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
    -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
    2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
    -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
    7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
    1.0103004648645343977, 4.8499064014085844221)

LANCZOS_C0 = 0.99999999999980993227684700473478
LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
           771.3234287776530788486528258894, -176.61502916214059906584551354,
           12.507343278686904814458936853, -0.13857109526572011689554707,
           9.984369578019570859563e-6, 1.50563273514931155834e-7)
LANCZOS_G = 7.0
GPH = LANCZOS_G + 0.5
INV_GPH = 1.0 / GPH
LOG_GPH = math.log(GPH)
LOG_SQRT_2PI = math.log(math.sqrt(2 * math.pi))
LOG_PI = math.log(math.pi)


def _ftz(y):
    return np.where(np.abs(y) < TINY64, y * 0.0, y)


def _poly(z, coef):
    p = np.full(z.shape, coef[0])
    for c in coef[1:]:
        p = _mad(p, z, c)
    return p


def asin_f64(x):
    """XLA:CPU's float64 ``asin`` of a float64 array."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        xf = daz(x)
        a = atan2_f64(x, 1.0 + np.sqrt((1.0 - xf) * (xf + 1.0)))
        return _ftz(a + a)


def acos_f64(x):
    """XLA:CPU's float64 ``acos`` of a float64 array."""
    x = np.asarray(x, F64)
    with np.errstate(all="ignore"):
        xf = daz(x)
        return atan2_f64(np.sqrt((1.0 - xf) * (xf + 1.0)), x)


def asinh_f64(x):
    """XLA:CPU's float64 ``asinh`` of a float64 array."""
    x = daz(x)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        x2 = x * x
        small = log1p_f64(a + x2 / (np.sqrt(x2 + 1.0) + 1.0))
        r = np.where(a >= ASINH_BIG, log_f64(a) + LN2, small)
        return np.where(x == 0, x, np.sign(x)) * r


def acosh_f64(x):
    """XLA:CPU's float64 ``acosh`` of a float64 array."""
    x = daz(x)
    with np.errstate(all="ignore"):
        sm = np.sqrt(x - 1.0)
        small = log1p_f64(sm * (np.sqrt(x + 1.0) + sm))
        return np.where(x >= ACOSH_BIG, log_f64(x) + LN2, small)


def atanh_f64(x):
    """XLA:CPU's float64 ``atanh`` of a float64 array."""
    x = daz(x)
    with np.errstate(all="ignore"):
        r = (log1p_f64(x, fused=True) - log1p_f64(-x, fused=True)) * 0.5
        return np.where(np.abs(x) > 1.0, np.nan, r)


def erfc_f64(x):
    """XLA:CPU's float64 ``erfc`` of a float64 array."""
    x = daz(x)
    with np.errstate(all="ignore"):
        x2 = x * x
        z = -x2
        ez = exp_f64(z)
        ax = np.abs(x)
        mid = (ez * _poly(ax, ERFC_P)) / _poly(ax, ERFC_Q)
        far = (ez * _poly(ax, ERFC_R)) / _poly(ax, ERFC_S)
        t = np.where(z < -ERFC_MAXLOG, 0.0, np.where(ax < 8.0, mid, far))
        big = np.where(x < 0, 2.0 - t, t)
        small = 1.0 - (x * _poly(x2, ERFC_T)) / _poly(x2, ERFC_U)
        return _ftz(np.where(ax < 1.0, small, big))


def erf_inv_f64(x):
    """XLA:CPU's float64 ``erf_inv`` of a float64 array."""
    x = daz(x)
    with np.errstate(all="ignore"):
        w = -log1p_f64(x * -x)
        lt625, lt16 = w < 6.25, w < 16.0
        sw = np.sqrt(w)
        w = np.where(lt625, w - 3.125, sw - np.where(lt16, 3.25, 5.0))

        def coef(i):
            c = np.full(x.shape, ERFINV_625[i])
            if i < 19:
                c = np.where(lt625, c, ERFINV_16[i])
            if i < 17:
                c = np.where(lt16, c, ERFINV_BIG[i])
            return c
        p = coef(0)
        for i in range(1, 17):
            p = _mad(p, w, coef(i))
        for i in range(17, 19):
            p = np.where(lt16, _mad(p, w, coef(i)), p)
        for i in range(19, 23):
            p = np.where(lt625, _mad(p, w, coef(i)), p)
        return _ftz(np.where(np.abs(x) == 1.0, x * np.inf, p * x))


def _lanczos(z):
    """``log Gamma(z + 1)`` (z >= -1/2) as XLA evaluates it."""
    series = np.full(z.shape, LANCZOS_C0)
    for i, c in enumerate(LANCZOS):
        series = series + c / (z + (i + 1.0))
    t = z + GPH
    log_t = LOG_GPH + log1p_f64(z * INV_GPH)
    lead = (z + 0.5) - t / log_t
    return _mad(lead, log_t, LOG_SQRT_2PI) + log_f64(series)


def lgamma_f64(x):
    """XLA:CPU's float64 ``lgamma`` of a float64 array."""
    x = daz(x)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        f = ax - np.floor(ax)
        f = np.where(0.5 < f, 1.0 - f, f)
        ls = log_f64(sin_f64(f * np.pi))
        small = x < 0.5
        core = _lanczos(np.where(small, -x, x - 1.0))
        refl = np.where(np.isfinite(ls), (LOG_PI - ls) - core, -ls)
        r = np.where(small, refl, core)
        return np.where(ax == np.inf, np.inf, r)


def digamma_f64(x):
    """XLA:CPU's float64 ``digamma`` of a float64 array."""
    x = daz(x)
    with np.errstate(all="ignore"):
        small = x < 0.5
        z = np.where(small, -x, x - 1.0)
        num = np.zeros_like(z)
        den = np.full_like(z, LANCZOS_C0)
        for i, c in enumerate(LANCZOS):
            zi = z + (i + 1.0)
            num = num - c / (zi * zi)
            den = den + c / zi
        log_t = log1p_f64(z * INV_GPH) + LOG_GPH
        y = (log_t + num / den) - LANCZOS_G / (z + GPH)
        a = (x + np.abs(np.floor(x + 0.5))) * np.pi
        r = np.where(small, y - (cos_f64(a) * np.pi) / sin_f64(a), y)
        pole = (x <= 0) & (x == np.floor(x))
        return np.where(pole, np.nan, r)
