"""jax.scipy.special functions beyond special.py's core set (gammasgn, loggamma, factorial,
comb, beta, erfcx, dawsn, boxcox, boxcox1p, kl_div, rel_entr, wofz), ported from JAX's own
jnp/lax formulations (Apache-2.0, The JAX Authors) so that values, conventions and
derivatives follow JAX's."""
from __future__ import annotations

import operator
from functools import partial

import numpy as np

from jaxlite import lax
from jaxlite import numpy as jnp
from jaxlite._src.api.custom_derivatives import custom_jvp
from jaxlite._src.api.jit import jit
from jaxlite._src.api.vmap import vmap
from jaxlite._src.api.ad import jvp
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.numpy.util import promote_args_inexact, promote_dtypes_inexact
from jaxlite._src.numpy.ufuncs import arctan, isposinf, isneginf, sinc
from jaxlite._src.scipy.special import (gammaln, betaln, digamma, gamma, erf, erfc, xlogy,
                                        xlog1py, entr, expit, logit, ndtr, zeta, polygamma,
                                        i0e, i1e, gammainc, gammaincc, logsumexp)


def _lax_const(x, v):
    return np.asarray(v, dtype=np.result_type(x))


def _concrete_or_error(force, val, context):
    if isinstance(val, Tracer):
        from jaxlite._src.core.errors import ConcretizationTypeError
        raise ConcretizationTypeError(val, context)
    return force(val)


def promote_args_complex(fun_name, *args):
    args = promote_args_inexact(fun_name, *args)
    ct = np.result_type(np.complex64, *[a.dtype for a in args])
    return [a.astype(ct) for a in args]


class custom_derivatives:  # noqa: N801 (the name JAX's code uses)
    custom_jvp = custom_jvp


class jnp_vectorize:  # noqa: N801
    vectorize = staticmethod(jnp.vectorize)


class jnp_einsum:  # noqa: N801
    einsum = staticmethod(jnp.einsum)


class core:  # noqa: N801
    concrete_or_error = staticmethod(_concrete_or_error)


@jit
def gammasgn(x):
    """Sign of the gamma function (as jax.scipy.special.gammasgn)."""
    x, = promote_args_inexact('gammasgn', x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError('gammasgn does not support complex-valued inputs.')
    typ = x.dtype.type
    floor_x = lax.floor(x)
    x_negative = x < 0
    return jnp.select([x_negative & (x == floor_x) | jnp.isnan(x), x_negative & (floor_x % 2 != 0) | (x == 0) & jnp.signbit(x)], [typ(np.nan), typ(-1.0)], typ(1.0))


_LANCZOS_G = 7.0


_LANCZOS_COEFFS = np.array([0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531, -176.6150291621406, 12.507343278686905, -0.13857109526572012, 9.984369578019572e-06, 1.5056327351493116e-07])


def _complex_loggamma(z):
    assert dtypes.issubdtype(z.dtype, np.complexfloating)
    needs_reflection = jnp.real(z) < 0.5
    z_lanczos = jnp.where(needs_reflection, 1.0 - z, z)
    zz = z_lanczos - 1.0
    coeffs = jnp.asarray(_LANCZOS_COEFFS, dtype=z.dtype)
    ks = lax.expand_dims(jnp.arange(1, 9, dtype=z.dtype), tuple(range(zz.ndim)))
    ag = coeffs[0] + jnp.sum(lax.expand_dims(coeffs[1:], tuple(range(zz.ndim))) / (lax.expand_dims(zz, (zz.ndim,)) + ks), axis=-1)
    t = zz + _LANCZOS_G + 0.5
    half_log2pi = jnp.asarray(0.5 * np.log(2.0 * np.pi), dtype=z.dtype)
    log_gamma_lanczos = half_log2pi + (zz + 0.5) * jnp.log(t) - t + jnp.log(ag)
    z_safe = jnp.where(needs_reflection, z, jnp.full_like(z, 0.5))
    reflected = jnp.log(jnp.asarray(np.pi, dtype=z.dtype)) - jnp.log(jnp.sin(np.pi * z_safe)) - log_gamma_lanczos
    return jnp.where(needs_reflection, reflected, log_gamma_lanczos)


@jit
def _complex_loggamma_scipy(z):
    is_nan = jnp.isnan(z)
    is_pole = (jnp.imag(z) == 0) & (jnp.real(z) == jnp.floor(jnp.real(z))) & (jnp.real(z) <= 0)
    nan_val = jnp.array(complex(jnp.nan, jnp.nan), dtype=z.dtype)
    safe = is_pole | is_nan
    z_safe = jnp.where(safe, jnp.ones_like(z), z)
    n = jnp.maximum(0, jnp.ceil(0.5 - jnp.real(z_safe)).astype(int))

    def cond_fun(state):
        k, _ = state
        return jnp.any(k < n)

    def body_fun(state):
        k, sum_log = state
        mask = k < n
        zk = jnp.where(mask, z_safe + k, jnp.ones_like(z_safe))
        return (k + 1, sum_log + jnp.where(mask, jnp.log(zk), jnp.zeros_like(sum_log)))
    _, sum_log = lax.while_loop(cond_fun, body_fun, (0, jnp.zeros_like(z_safe)))
    res = _complex_loggamma(z_safe + n) - sum_log
    return jnp.where(safe, nan_val, res)


def loggamma(x):
    """Principal branch of the logarithm of the gamma function (as jax.scipy.special.loggamma)."""
    x, = promote_args_inexact('loggamma', x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        return _complex_loggamma_scipy(x)
    res = lax.lgamma(x)
    return jnp.where(x > 0, res, jnp.nan)


def factorial(n, exact=False):
    """Factorial function (as jax.scipy.special.factorial)."""
    if exact:
        raise NotImplementedError('factorial with exact=True')
    n, = promote_args_inexact('factorial', n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


def comb(N, k, *, repetition=False):
    """The number of combinations of N things taken k at a time ("N choose k") (as jax.scipy.special.comb)."""
    N, k = promote_args_inexact('comb', N, k)
    if repetition:
        cond = (k == 0) & (N >= 0)
        result = comb(N + k - 1, k, repetition=False)
        return jnp.where(cond, 1.0, result)
    cond = (k <= N) & (N >= 0) & (k >= 0)
    safe_N = jnp.where(cond, N, 0.0)
    safe_k = jnp.where(cond, k, 0.0)
    result = lax.exp(gammaln(safe_N + 1) - gammaln(safe_k + 1) - gammaln(safe_N + 1 - safe_k))
    return jnp.where(cond, result, 0.0)


def beta(a, b):
    """The beta function (as jax.scipy.special.beta)."""
    a, b = promote_args_inexact('beta', a, b)
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError('beta does not support complex-valued inputs.')
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


_WOFZ_L = 4.756828460010884


_WOFZ_C = np.array([-1.3034426067909105e-12, 3.741183837373847e-12, 8.030427700497756e-12, -2.154359355749088e-11, -5.544244996323793e-11, 1.165824698850374e-10, 4.1537441121999766e-10, -5.231020211492061e-10, -3.2080151339721323e-09, 8.124886421653591e-10, 2.3797556530014025e-08, 2.2930438438915445e-08, -1.4813078929137642e-07, -4.1840763750512053e-07, 4.2558331397138446e-07, 4.401531731283225e-06, 6.821031944357515e-06, -2.1409619201999998e-05, -0.0001307544925457942, -0.00024532980270038237, 0.00039259136070109705, 0.004519541105349309, 0.0190061557848455, 0.05730440352983728, 0.14060716226893755, 0.2954445107150874, 0.5460139720639338, 0.9019254893648001, 1.345544169234545, 1.8256696296324815, 2.2635372999002676, 2.5722534081245696])


def _wofz_upper(z):
    re = lax.real(z)
    L = lax.complex(_lax_const(re, _WOFZ_L), _lax_const(re, 0.0))
    iz = lax.complex(lax.neg(lax.imag(z)), re)
    denom = L - iz
    Z = (L + iz) / denom
    p = jnp.polyval(jnp.asarray(_WOFZ_C, dtype=Z.dtype), Z)
    one_over_sqrtpi = lax.complex(_lax_const(re, 1.0 / np.sqrt(np.pi)), _lax_const(re, 0.0))
    return 2 * p / (denom * denom) + one_over_sqrtpi / denom


@custom_derivatives.custom_jvp
def _wofz(z):
    sign = lax.ge(lax.imag(z), _lax_const(lax.real(z), 0.0))
    z_upper = lax.select(sign, z, lax.neg(z))
    w_upper = _wofz_upper(z_upper)
    correction = 2 * lax.exp(lax.neg(z * z)) - w_upper
    return lax.select(sign, w_upper, correction)


_wofz.defjvps(lambda g, ans, z: g * (lax.neg(2 * z * ans) + lax.complex(_lax_const(lax.real(z), 0.0), _lax_const(lax.real(z), 2.0 / np.sqrt(np.pi)))))


def erfcx(x):
    """Scaled complementary error function (as jax.scipy.special.erfcx)."""
    x, = promote_args_inexact('erfcx', x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        iz = lax.complex(lax.neg(lax.imag(x)), lax.real(x))
        return _wofz(iz)
    return _erfcx(x)


@custom_derivatives.custom_jvp
def _erfcx(x):
    if x.dtype == np.float64:
        return _erfcx_impl(x, nterms=9)
    elif x.dtype == np.float32:
        return _erfcx_impl(x, nterms=5)
    else:
        return _erfcx_impl(x.astype(np.float32), nterms=5).astype(x.dtype)


_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - _lax_const(x, 2.0 / np.sqrt(np.pi))))


def _erfcx_asymptotic(x, nterms):
    _coeffs = [7918.06640625, -1055.7421875, 162.421875, -29.53125, 6.5625, -1.875, 0.75, -0.5, 1.0]
    t = _lax_const(x, 1.0) / lax.square(x)
    p = jnp.polyval(np.array(_coeffs[-nterms:], dtype=x.dtype), t)
    return p / (x * _lax_const(x, np.sqrt(np.pi)))


def _erfcx_impl(x, nterms):
    threshold = np.sqrt(np.log(dtypes.finfo(x.dtype).max))
    large = x > _lax_const(x, threshold)
    safe_x = lax.select(large, lax.full_like(x, 1.0), x)
    direct = lax.exp(lax.square(safe_x)) * lax.erfc(safe_x)
    asymp = _erfcx_asymptotic(x, nterms)
    return lax.select(large, asymp, direct)


_DAWSN_AN = np.array([1.1368149897175597e-11, 8.492622676674738e-10, 1.9443420417555306e-08, 9.531517412544844e-07, 3.078283098749132e-06, 0.00035251336852028877, -0.0008501498467244109, 0.04226182230055466, -0.09174803717734524, 1.0])


_DAWSN_AD = np.array([2.403720730667626e-11, 1.488646813684934e-09, 5.212652810105416e-08, 1.2725847827318697e-06, 2.324902498207895e-05, 0.00032552474182605793, 0.003488058146571626, 0.027944853119882897, 0.15887424196012057, 0.5749186294893204, 1.0])


_DAWSN_BN = np.array([0.5089551564179009, -0.24475441814269785, 0.09415123353035344, -0.021871125514203903, 0.003662076123295692, -0.0004232091144603888, 3.5964130479389666e-05, -2.1464035171996896e-06, 9.100107800763914e-08, -2.4027452082825098e-09, 3.592333854409284e-11])


_DAWSN_BD = np.array([1.0, -0.6318398698733682, 0.2367067882282487, -0.053180636700322324, 0.008480417185862954, -0.0009479967684866654, 7.810255929445524e-05, -4.558751532524426e-06, 1.8910035811142186e-07, -4.913246913319206e-09, 7.184664032357345e-11])


_DAWSN_CN = np.array([-0.5905928605347732, 0.6292352427243688, -0.17285897538038814, 0.016483704782518965, -0.0004868276130204627])


_DAWSN_CD = np.array([1.0, -2.698200571975449, 1.7327079904594784, -0.3937085822819395, 0.03442789240412334, -0.0009736552260409412])


def dawsn(x):
    """Dawson's integral (as jax.scipy.special.dawsn)."""
    x, = promote_args_inexact('dawsn', x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError('dawsn does not support complex-valued inputs.')
    return _dawsn(x)


@custom_derivatives.custom_jvp
def _dawsn(x):
    if x.dtype in [np.float32, np.float64]:
        return _dawsn_impl(x)
    else:
        return _dawsn_impl(x.astype(np.float32)).astype(x.dtype)


_dawsn.defjvps(lambda g, ans, x: g * (_lax_const(x, 1.0) - _lax_const(x, 2.0) * x * ans))


def _dawsn_impl(x):
    sign = jnp.sign(x)
    ax = lax.abs(x)
    AN = np.array(_DAWSN_AN, dtype=x.dtype)
    AD = np.array(_DAWSN_AD, dtype=x.dtype)
    BN = np.array(_DAWSN_BN, dtype=x.dtype)
    BD = np.array(_DAWSN_BD, dtype=x.dtype)
    CN = np.array(_DAWSN_CN, dtype=x.dtype)
    CD = np.array(_DAWSN_CD, dtype=x.dtype)
    ax2 = lax.square(ax)
    t = _lax_const(x, 1.0) / ax2
    safe_ax_r1 = lax.select(ax < _lax_const(x, 3.25), ax, lax.full_like(ax, 1.0))
    safe_ax2_r1 = lax.square(safe_ax_r1)
    val_r1 = safe_ax_r1 * jnp.polyval(AN, safe_ax2_r1) / jnp.polyval(AD, safe_ax2_r1)
    safe_t_r2 = lax.select((ax >= _lax_const(x, 3.25)) & (ax < _lax_const(x, 6.25)), t, lax.full_like(t, 1.0))
    safe_ax_r2 = lax.select((ax >= _lax_const(x, 3.25)) & (ax < _lax_const(x, 6.25)), ax, lax.full_like(ax, 1.0))
    val_r2 = _lax_const(x, 0.5) / safe_ax_r2 * (_lax_const(x, 1.0) + safe_t_r2 * jnp.polyval(BN, safe_t_r2) / jnp.polyval(BD, safe_t_r2))
    safe_t_r3 = lax.select(ax >= _lax_const(x, 6.25), t, lax.full_like(t, 1.0))
    safe_ax_r3 = lax.select(ax >= _lax_const(x, 6.25), ax, lax.full_like(ax, 1.0))
    val_r3 = _lax_const(x, 0.5) / safe_ax_r3 * (_lax_const(x, 1.0) + safe_t_r3 * jnp.polyval(CN, safe_t_r3) / jnp.polyval(CD, safe_t_r3))
    result = lax.select(ax < _lax_const(x, 3.25), val_r1, lax.select(ax < _lax_const(x, 6.25), val_r2, val_r3))
    return sign * result


@custom_derivatives.custom_jvp
def _xlogx(x):
    return xlogy(x, x)


def _xlogx_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return (_xlogx(x), x_dot * (lax.log(x) + 1))


_xlogx.defjvp(_xlogx_jvp)


def boxcox(x, lmbda):
    """Box-Cox power transformation (as jax.scipy.special.boxcox)."""
    x, lmbda = promote_args_inexact('boxcox', x, lmbda)
    lmbda_is_zero = lmbda == 0
    safe_lmbda = jnp.where(lmbda_is_zero, jnp.ones_like(lmbda), lmbda)
    log_x = jnp.log(x)
    power_branch = jnp.expm1(safe_lmbda * log_x) / safe_lmbda
    return jnp.where(lmbda_is_zero, log_x, power_branch)


def boxcox1p(x, lmbda):
    """Box-Cox transformation of ``1 + x`` (as jax.scipy.special.boxcox1p)."""
    x, lmbda = promote_args_inexact('boxcox1p', x, lmbda)
    lmbda_is_zero = lmbda == 0
    safe_lmbda = jnp.where(lmbda_is_zero, jnp.ones_like(lmbda), lmbda)
    log1p_x = jnp.log1p(x)
    power_branch = jnp.expm1(safe_lmbda * log1p_x) / safe_lmbda
    return jnp.where(lmbda_is_zero, log1p_x, power_branch)


def kl_div(p, q):
    """The Kullback-Leibler divergence (as jax.scipy.special.kl_div)."""
    p, q = promote_args_inexact('kl_div', p, q)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError('kl_div does not support complex-valued inputs.')
    return rel_entr(p, q) - p + q


def rel_entr(p, q):
    """The relative entropy function (as jax.scipy.special.rel_entr)."""
    p, q = promote_args_inexact('rel_entr', p, q)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError('rel_entr does not support complex-valued inputs.')
    zero = _lax_const(p, 0.0)
    both_gt_zero_mask = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
    one_zero_mask = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
    safe_p = jnp.where(both_gt_zero_mask, p, 1)
    safe_q = jnp.where(both_gt_zero_mask, q, 1)
    log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    result = jnp.where(both_gt_zero_mask, log_val, jnp.where(one_zero_mask, zero, np.inf))
    return result


def wofz(z):
    """Faddeeva function (as jax.scipy.special.wofz)."""
    z, = promote_args_complex('wofz', z)
    return _wofz(z)
