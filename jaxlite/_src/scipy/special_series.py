"""jax.scipy.special: Bessel J_n, spherical harmonics, exponential and sine/cosine integrals,
Spence's function and Bernoulli numbers, ported from JAX's jnp/lax formulations
(Apache-2.0, The JAX Authors)."""
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


from jaxlite._src.scipy.special_more import (  # noqa: F401
    _lax_const, core, custom_derivatives, jnp_vectorize, jnp_einsum, promote_args_complex,
    gammasgn, loggamma, factorial, comb, beta)


def _bessel_jn_scan_body_fun(carry, k):
    f0, f1, bs, z = carry
    f = 2.0 * (k + 1.0) * f1 / z - f0

    def true_fn_update_bs(u):
        bs, f = u
        return bs + 2.0 * f

    def false_fn_update_bs(u):
        bs, _ = u
        return bs
    bs = lax.cond(jnp.mod(k, 2) == 0, true_fn_update_bs, false_fn_update_bs, operand=(bs, f))
    f0 = f1
    f1 = f
    return ((f0, f1, bs, z), f)


def _bessel_jn(z, *, v, n_iter=50):
    f0 = _lax_const(z, 0.0)
    f1 = _lax_const(z, 1e-16)
    f = _lax_const(z, 0.0)
    bs = _lax_const(z, 0.0)
    (_, _, bs, _), j_vals = lax.scan(f=_bessel_jn_scan_body_fun, init=(f0, f1, bs, z), xs=lax.iota(dtypes.dtype(z), n_iter + 1), reverse=True)
    f = j_vals[0]
    j_vals = j_vals[:v + 1]
    j_vals = j_vals / (bs - f)
    return j_vals


@jit(static_argnames=['v', 'n_iter'])
def bessel_jn(z, *, v, n_iter=50):
    """Bessel function of the first kind of integer order and real argument (as jax.scipy.special.bessel_jn)."""
    z = jnp.asarray(z)
    z, = promote_dtypes_inexact(z)
    z_dtype = dtypes.dtype(z)
    if dtypes.issubdtype(z_dtype, complex):
        raise ValueError('complex input not supported.')
    v = core.concrete_or_error(operator.index, v, 'Argument v of bessel_jn.')
    n_iter = core.concrete_or_error(int, n_iter, 'Argument n_iter of bessel_jn.')
    bessel_jn_fun = partial(_bessel_jn, v=v, n_iter=n_iter)
    for _ in range(z.ndim):
        bessel_jn_fun = vmap(bessel_jn_fun)
    return jnp.moveaxis(bessel_jn_fun(z), -1, 0)


def _gen_recurrence_mask(l_max, is_normalized, dtype):
    m_mat, l_mat = jnp.meshgrid(jnp.arange(l_max + 1, dtype=dtype), jnp.arange(l_max + 1, dtype=dtype), indexing='ij')
    if is_normalized:
        c0 = l_mat * l_mat
        c1 = m_mat * m_mat
        c2 = 2.0 * l_mat
        c3 = (l_mat - 1.0) * (l_mat - 1.0)
        d0 = jnp.sqrt((4.0 * c0 - 1.0) / (c0 - c1))
        d1 = jnp.sqrt((c2 + 1.0) * (c3 - c1) / ((c2 - 3.0) * (c0 - c1)))
    else:
        d0 = (2.0 * l_mat - 1.0) / (l_mat - m_mat)
        d1 = (l_mat + m_mat - 1.0) / (l_mat - m_mat)
    d0_mask_indices = jnp.triu_indices(l_max + 1, 1)
    d1_mask_indices = jnp.triu_indices(l_max + 1, 2)
    d_zeros = jnp.zeros((l_max + 1, l_max + 1), dtype=dtype)
    d0_mask = d_zeros.at[d0_mask_indices].set(d0[d0_mask_indices])
    d1_mask = d_zeros.at[d1_mask_indices].set(d1[d1_mask_indices])
    i, j, k = jnp.ogrid[:l_max + 1, :l_max + 1, :l_max + 1]
    mask = (i + j - k == 0).astype(dtype)
    d0_mask_3d = jnp_einsum.einsum('jk,ijk->ijk', d0_mask, mask)
    d1_mask_3d = jnp_einsum.einsum('jk,ijk->ijk', d1_mask, mask)
    return (d0_mask_3d, d1_mask_3d)


@jit(static_argnums=(0, 2))
def _gen_associated_legendre(l_max, x, is_normalized):
    p = jnp.zeros((l_max + 1, l_max + 1, x.shape[0]), dtype=x.dtype)
    a_idx = jnp.arange(1, l_max + 1, dtype=x.dtype)
    b_idx = jnp.arange(l_max, dtype=x.dtype)
    if is_normalized:
        initial_value: ArrayLike = 0.5 / jnp.sqrt(np.pi)
        f_a = jnp.cumprod(-1 * jnp.sqrt(1.0 + 0.5 / a_idx))
        f_b = jnp.sqrt(2.0 * b_idx + 3.0)
    else:
        initial_value = 1.0
        f_a = jnp.cumprod(1.0 - 2.0 * a_idx)
        f_b = 2.0 * b_idx + 1.0
    p = p.at[0, 0].set(initial_value)
    y = jnp.cumprod(jnp.broadcast_to(jnp.sqrt(1.0 - x * x), (l_max, x.shape[0])), axis=0)
    p_diag = initial_value * jnp_einsum.einsum('i,ij->ij', f_a, y)
    diag_indices = jnp.diag_indices(l_max + 1)
    p = p.at[diag_indices[0][1:], diag_indices[1][1:]].set(p_diag)
    p_offdiag = jnp_einsum.einsum('ij,ij->ij', jnp_einsum.einsum('i,j->ij', f_b, x), p[jnp.diag_indices(l_max)])
    offdiag_indices = (diag_indices[0][:l_max], diag_indices[1][:l_max] + 1)
    p = p.at[offdiag_indices].set(p_offdiag)
    d0_mask_3d, d1_mask_3d = _gen_recurrence_mask(l_max, is_normalized=is_normalized, dtype=x.dtype)

    def body_fun(i, p_val):
        coeff_0 = d0_mask_3d[i]
        coeff_1 = d1_mask_3d[i]
        h = jnp_einsum.einsum('ij,ijk->ijk', coeff_0, jnp_einsum.einsum('ijk,k->ijk', jnp.roll(p_val, shift=1, axis=1), x)) - jnp_einsum.einsum('ij,ijk->ijk', coeff_1, jnp.roll(p_val, shift=2, axis=1))
        p_val = p_val + h
        return p_val
    p = p.astype(dtypes.result_type(p, x, d0_mask_3d))
    if l_max > 1:
        p = lax.fori_loop(lower=2, upper=l_max + 1, body_fun=body_fun, init_val=p)
    return p


@jit(static_argnums=(4,))
def _sph_harm(n, m, theta, phi, n_max):
    cos_colatitude = jnp.cos(theta)
    legendre = _gen_associated_legendre(n_max, cos_colatitude, True)
    legendre_val = legendre.at[abs(m), n, jnp.arange(len(n))].get(mode='clip')
    angle = abs(m) * phi
    vandermonde = lax.complex(jnp.cos(angle), jnp.sin(angle))
    harmonics = lax.complex(legendre_val * jnp.real(vandermonde), legendre_val * jnp.imag(vandermonde))
    harmonics = jnp.where(m < 0, (-1.0) ** abs(m) * jnp.conjugate(harmonics), harmonics)
    return harmonics


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """Computes the spherical harmonics (as jax.scipy.special.sph_harm_y)."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if jnp.isscalar(theta):
        theta = jnp.array([theta])
    if n_max is None:
        n_max = np.max(n)
    n_max = core.concrete_or_error(int, n_max, 'The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically specified to use `sph_harm` within JAX transformations.')
    return _sph_harm(n, m, theta, phi, n_max)


def _expint1(x):
    A = np.array([-5.350447357812543, 218.50491688166133, -4176.572384826693, 55411.76756393557, -331338.13311781443, 1592627.1633849454], dtype=x.dtype)
    B = np.array([1.0, -52.505479591128626, 1259.6161867867906, -17565.495819735348, 149306.2117002726, -729494.9239640528, 1592627.1633849454], dtype=x.dtype)
    f = jnp.polyval(A, x) / jnp.polyval(B, x)
    return x * f + np.euler_gamma + jnp.log(x)


def _eval_expint_k(A, B, x):
    one = _lax_const(x, 1.0)
    w = one / x
    f = jnp.polyval(A, w) / jnp.polyval(B, w)
    f = w * f + one
    return jnp.exp(x) * w * f


def _expint2(x):
    A = np.array([0.019818085032596897, -1.2716456259849176, -2.0881603356812284, 2.7555445091879367, -0.44095070487016, 0.046656238059358916, -0.0015450426796734852, 7.059980605299618e-05], dtype=x.dtype)
    B = np.array([1.0, 1.4764986709149215, 0.5629177174822436, 0.16990178978793072, 0.02291647179034212, 0.0044501504397287525, 0.00017274396122065214, 3.953167195549672e-05], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint3(x):
    A = np.array([-1.3732153758712087, -0.7084559133740839, 1.580806855547941, -0.2601500427425623, 0.029946746941137137, -0.001038086040188744, 4.371064420753005e-05, 2.141783679522603e-06], dtype=x.dtype)
    B = np.array([1.0, 0.8585231423622028, 0.4483285822873995, 0.07687932158124476, 0.024498682410218877, 0.0008832165941927797, 0.00045909522995113536, -4.729848351866523e-06, 2.66519553739071e-06], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint4(x):
    A = np.array([-2.1069346016919166, 1.7327338696646881, -0.2423619178935842, 0.02322724180937566, 0.00023728804404931798, -8.343219561192553e-05, 1.3634087956052505e-05, -3.655412321999254e-07, 1.4649417339759612e-08, 6.17640786371036e-10], dtype=x.dtype)
    B = np.array([1.0, -0.2298062239901678, 0.11050770414740378, -0.015665429666307924, 0.002761106850817353, -0.00020891480122840484, 1.7085289388076754e-05, -4.4593117963566865e-07, 1.3946349303538475e-08, 6.150865933977338e-10], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint5(x):
    A = np.array([-0.24581193676740204, -0.14833822533220778, 0.07248291795735552, -0.013483156873809405, 0.001342775069788637, -7.942465637159712e-05, 2.644179518984236e-06, -4.239473659313765e-08], dtype=x.dtype)
    B = np.array([1.0, -0.10442259084438711, -0.26764531281014026, 0.09695000254621984, -0.01601745692712991, 0.001496414899205908, -8.462452563778485e-05, 2.7289384034767266e-06, -4.239462431819542e-08], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint6(x):
    A = np.array([0.12125611181054567, -0.5823133179043894, 0.2348887314557017, -0.030400343181132484, 0.0015100821468651906, -2.5231370954995714e-05], dtype=x.dtype)
    B = np.array([1.0, -1.002252150365854, 0.2928709694872224, -0.03337004338674008, 0.0015605448811273888, -2.5231370936032347e-05], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expint7(x):
    A = np.array([-0.7657847078286127, 0.6886192415566705, -0.2132598113545206, 0.033461075523841935, -0.003076541477344756, 0.00017471193164549074, -6.1037116822741705e-06, 1.218032765428652e-07, -1.0860761027932903e-09], dtype=x.dtype)
    B = np.array([1.0, -1.8888028686623086, 1.066691687211409, -0.27519159823063805, 0.039308526882338234, -0.003414684558602365, 0.00018668443707035555, -6.345146083130515e-06, 1.239754287483207e-07, -1.0860761027931265e-09], dtype=x.dtype)
    return _eval_expint_k(A, B, x)


def _expi_pos(x):
    _c = _lax_const
    conds = [(_c(x, 0) < x) & (x <= _c(x, 2))] + [(_c(x, 2 ** i) < x) & (x <= _c(x, 2 ** (i + 1))) for i in range(1, 6)]
    return jnp.piecewise(x, conds, [_expint1, _expint2, _expint3, _expint4, _expint5, _expint6, _expint7])


def _expi_neg(x):
    return -exp1(-x)


@custom_derivatives.custom_jvp
@jit
def expi(x):
    """Exponential integral function (as jax.scipy.special.expi)."""
    x_arr, = promote_args_inexact('expi', x)
    if dtypes.issubdtype(x_arr.dtype, np.complexfloating):
        raise ValueError('expi does not support complex-valued inputs.')
    return jnp.piecewise(x_arr, [x_arr < 0], [_expi_neg, _expi_pos])


@expi.defjvp
@jit
def _expi_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    return (expi(x), jnp.exp(x) / x * x_dot)


@custom_derivatives.custom_jvp
@jit
def sici(x):
    """Sine and cosine integrals (as jax.scipy.special.sici)."""
    x, = promote_args_inexact('sici', x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError(f'Argument `x` to sici must be real-valued. Got dtype {x.dtype}.')
    x_abs = jnp.abs(x)
    si_series, ci_series = _sici_series(x_abs)
    si_asymp, ci_asymp = _sici_asympt(x_abs)
    si_approx, ci_approx = _sici_approx(x_abs)
    cond1 = x_abs <= 4
    cond2 = (x_abs > 4) & (x_abs <= 1000000000.0)
    si = jnp.select([cond1, cond2], [si_series, si_asymp], si_approx)
    ci = jnp.select([cond1, cond2], [ci_series, ci_asymp], ci_approx)
    si = jnp.sign(x) * si
    ci = jnp.where(isneginf(x), np.nan, ci)
    return (si, ci)


def _sici_approx(x):
    si = np.pi / 2 - jnp.cos(x) / x
    ci = jnp.sin(x) / x
    si = jnp.where(isposinf(x), np.pi / 2, si)
    ci = jnp.where(isposinf(x), 0.0, ci)
    return (si, ci)


def _sici_series(x):

    def si_series(x):
        SN = np.array([-8.391678279103039e-11, 4.625917144270128e-08, -9.757593038436328e-06, 0.0009769454381704354, -0.04134703162294066, 1.0], dtype=x.dtype)
        SD = np.array([2.0326926619595193e-12, 1.279978911799433e-09, 4.418278428012189e-07, 9.964121220438756e-05, 0.01420852393261499, 1.0], dtype=x.dtype)
        t = x * x
        return x * jnp.polyval(SN, t) / jnp.polyval(SD, t)

    def ci_series(x):
        CN = np.array([2.0252400238910228e-11, -1.3524950491579076e-08, 3.593250514199931e-06, -0.0004740072068734079, 0.028915965260755523, -1.0], dtype=x.dtype)
        CD = np.array([4.077460400618806e-12, 3.067809975818878e-09, 1.2321035568588342e-06, 0.00031744202477503275, 0.051002805623644606, 4.0], dtype=x.dtype)
        t = x * x
        return np.euler_gamma + jnp.log(x) + t * jnp.polyval(CN, t) / jnp.polyval(CD, t)
    si = jnp.where(x == 0, 0.0, si_series(x))
    ci = jnp.where(x == 0, -np.inf, ci_series(x))
    return (si, ci)


def _sici_asympt(x):
    s = jnp.sin(x)
    c = jnp.cos(x)
    z = 1.0 / (x * x)
    FN4 = np.array([4.236128628922166, 5.4593771716181285, 1.6208328770153833, 0.16700661183132304, 0.006810201324725182, 0.00010893658065032867, 5.489002234213736e-07], dtype=x.dtype)
    FD4 = np.array([1, 8.16496634205391, 7.308288225055645, 1.867922579501842, 0.1787920529631499, 0.007017106683227897, 0.00011003435715391573, 5.489002527562557e-07], dtype=x.dtype)
    GN4 = np.array([0.08710016989731142, 0.6113791099522193, 0.3971802963923375, 0.07485277376284691, 0.005388686814621773, 0.00016199979459893403, 1.9796387414096365e-06, 7.825790407440903e-09], dtype=x.dtype)
    GD4 = np.array([1, 1.6440220241335535, 0.666296701268988, 0.09887717612776888, 0.006223963454417684, 0.0001732210814741771, 2.0265918208634397e-06, 7.825792189335346e-09], dtype=x.dtype)
    FN8 = np.array([0.4558808734704653, 0.7137152741001467, 0.16030015822231947, 0.01160642294081244, 0.00034955644244785906, 4.8621543082645475e-06, 3.200927900910049e-08, 9.41779576128513e-11, 9.70507110881952e-14], dtype=x.dtype)
    FD8 = np.array([1.0, 0.9174636118736841, 0.17868554533207454, 0.012225359477197129, 0.00035869648188185157, 4.924350643178815e-06, 3.21956939101046e-08, 9.437205903502767e-11, 9.70507110881952e-14], dtype=x.dtype)
    GN8 = np.array([0.6973599534432762, 0.33041097930563207, 0.03848787676499743, 0.001717182390523479, 3.4894116550227946e-05, 3.471311670841167e-07, 1.7040445278204452e-09, 3.859459254302766e-12, 3.1404009894636335e-15], dtype=x.dtype)
    GD8 = np.array([1.0, 1.6854889881101165, 0.48785225869530496, 0.04679131942596258, 0.0019028442667439953, 3.684755044425611e-05, 3.5704322344374083e-07, 1.7269374896631615e-09, 3.878301660239547e-12, 3.1404009894636335e-15], dtype=x.dtype)
    f4 = jnp.polyval(FN4, z) / (x * jnp.polyval(FD4, z))
    g4 = z * jnp.polyval(GN4, z) / jnp.polyval(GD4, z)
    f8 = jnp.polyval(FN8, z) / (x * jnp.polyval(FD8, z))
    g8 = z * jnp.polyval(GN8, z) / jnp.polyval(GD8, z)
    mask = x < 8.0
    f = jnp.where(mask, f4, f8)
    g = jnp.where(mask, g4, g8)
    si = np.pi / 2 - f * c - g * s
    ci = f * s - g * c
    return (si, ci)


@sici.defjvp
@jit
def _sici_jvp(primals, tangents):
    (p,), (t,) = (primals, tangents)
    primal_out = sici(p)
    sin_term = sinc(p / np.pi)
    cos_term = jnp.cos(p) / p
    tangent_out = (sin_term * t, cos_term * t)
    return (primal_out, tangent_out)


def _expn1(x, n):
    _c = _lax_const
    MACHEP = dtypes.finfo(x.dtype).eps
    zero = _c(x, 0.0)
    one = _c(x, 1.0)
    psi = -np.euler_gamma - jnp.log(x)
    psi = lax.fori_loop(_c(n, 1), n, lambda i, psi: psi + one / i, psi)
    n1 = jnp.where(n == _c(n, 1), one + one, n)
    init = dict(x=x, z=-x, xk=zero, yk=one, pk=one - n, ans=jnp.where(n == _c(n, 1), zero, one / (one - n1)), t=np.inf)

    def body(d):
        d['xk'] += one
        d['yk'] *= d['z'] / d['xk']
        d['pk'] += one
        d['ans'] += jnp.where(d['pk'] != zero, d['yk'] / d['pk'], zero)
        d['t'] = jnp.where(d['ans'] != zero, abs(d['yk'] / d['ans']), one)
        return d

    def cond(d):
        return (d['x'] > _c(d['x'], 0.0)) & (d['t'] > MACHEP)
    d = lax.while_loop(cond, body, init)
    t = n
    r = n - _c(n, 1)
    return d['z'] ** r * psi / jnp.exp(gammaln(t)) - d['ans']


def _expn2(x, n):
    _c = _lax_const
    BIG = _c(x, 1.4411518807585587e+17)
    MACHEP = dtypes.finfo(x.dtype).eps
    zero = _c(x, 0.0)
    one = _c(x, 1.0)
    init = dict(k=_c(n, 1), pkm2=one, qkm2=x, pkm1=one, qkm1=x + n, ans=one / (x + n), t=_c(x, np.inf), r=zero, x=x)

    def body(d):
        x = d['x']
        d['k'] += _c(d['k'], 1)
        k = d['k']
        odd = k % _c(k, 2) == _c(k, 1)
        yk = jnp.where(odd, one, x)
        xk = jnp.where(odd, n + (k - _c(k, 1)) / _c(k, 2), k / _c(k, 2))
        pk = d['pkm1'] * yk + d['pkm2'] * xk
        qk = d['qkm1'] * yk + d['qkm2'] * xk
        nz = qk != zero
        d['r'] = r = jnp.where(nz, pk / qk, d['r'])
        d['t'] = jnp.where(nz, abs((d['ans'] - r) / r), one)
        d['ans'] = jnp.where(nz, r, d['ans'])
        d['pkm2'] = d['pkm1']
        d['pkm1'] = pk
        d['qkm2'] = d['qkm1']
        d['qkm1'] = qk
        is_big = abs(pk) > BIG
        for s in 'pq':
            for i in '12':
                key = s + 'km' + i
                d[key] = jnp.where(is_big, d[key] / BIG, d[key])
        return d

    def cond(d):
        return (d['x'] > _c(d['k'], 0)) & (d['t'] > MACHEP)
    d = lax.while_loop(cond, body, init)
    return d['ans'] * jnp.exp(-x)


def _expn3(x, n):
    _c = _lax_const
    one = _c(x, 1.0)
    xk = x + n
    yk = one / (xk * xk)
    t = n
    ans = yk * t * (_c(x, 6) * x * x - _c(x, 8) * t * x + t * t)
    ans = yk * (ans + t * (t - _c(x, 2) * x))
    ans = yk * (ans + t)
    return (ans + one) * jnp.exp(-x) / xk


@partial(custom_derivatives.custom_jvp, nondiff_argnums=(0,))
@jnp_vectorize.vectorize
@jit
def expn(n, x):
    """Generalized exponential integral function (as jax.scipy.special.expn)."""
    n, x = promote_args_inexact('expn', n, x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError('expn does not support complex-valued inputs.')
    _c = _lax_const
    zero = _c(x, 0)
    one = _c(x, 1)
    conds = [(n < _c(n, 0)) | (x < zero), (x == zero) & (n < _c(n, 2)), (x == zero) & (n >= _c(n, 2)), (n == _c(n, 0)) & (x >= zero), n >= _c(n, 5000), x > one]
    n1 = jnp.where(n == _c(n, 1), n + n, n)
    vals = [np.nan, np.inf, one / n1, jnp.exp(-x) / x, _expn3, _expn2, _expn1]
    ret = jnp.piecewise(x, conds, vals, n=n)
    return ret


@expn.defjvp
@jit
def _expn_jvp(n, primals, tangents):
    (x,), (x_dot,) = (primals, tangents)
    return (expn(n, x), lax.mul(lax.neg(x_dot), expn(lax.sub(n, _lax_const(n, 1)), x)))


def exp1(x):
    """Exponential integral function (as jax.scipy.special.exp1)."""
    x, = promote_args_inexact('exp1', x)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise ValueError('exp1 does not support complex-valued inputs.')
    return expn(1, x)


def _spence_poly(w):
    A = jnp.array([4.6512858607399003e-05, 0.007315890452380947, 0.13384763957830903, 0.8796913117545303, 2.7114985119655346, 4.256971560081218, 3.297713409852251, 1.0], dtype=w.dtype)
    B = jnp.array([0.0006909904889125533, 0.02540437639325444, 0.2829748606025681, 1.4117259775183106, 3.6380053334513707, 5.03278880143317, 3.547713409852251, 1.0], dtype=w.dtype)
    return -w * jnp.polyval(A, w) / jnp.polyval(B, w)


def _spence_calc(x):
    x2_bool = x > 2.0
    x = jnp.piecewise(x, [x2_bool], [lambda x: 1.0 / x, lambda x: x])
    x1_5_bool = x > 1.5
    x_5_bool = x < 0.5
    x2_bool = x2_bool | x1_5_bool
    w = jnp.piecewise(x, [x1_5_bool, x_5_bool], [lambda x: 1.0 / x - 1.0, lambda x: -x, lambda x: x - 1.0])
    y = _spence_poly(w)
    y_flag_one = np.pi ** 2 / 6.0 - jnp.log(x) * jnp.log(1.0 - x) - y
    y = jnp.where(x_5_bool, y_flag_one, y)
    y_flag_two = -0.5 * jnp.log(x) ** 2 - y
    return jnp.where(x2_bool, y_flag_two, y)


def _spence(x):
    return jnp.piecewise(x, [x < 0.0, x == 1.0, x == 0.0], [np.nan, 0, np.pi ** 2 / 6, _spence_calc])


def spence(x):
    """Spence's function, also known as the dilogarithm for real values (as jax.scipy.special.spence)."""
    x = jnp.asarray(x)
    dtype = dtypes.dtype(x)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f'x.dtype={dtype} is not supported, see docstring for supported types.')
    return _spence(x)


def bernoulli(n):
    """Generate the first N Bernoulli numbers (as jax.scipy.special.bernoulli)."""
    n = core.concrete_or_error(operator.index, n, 'Argument n of bernoulli')
    if n < 0:
        raise ValueError('n must be a non-negative integer.')
    b3 = jnp.array([1, -1 / 2, 1 / 6])
    if n < 3:
        return b3[:n + 1]
    bn = jnp.zeros(n + 1).at[:3].set(b3)
    m = jnp.arange(4, n + 1, 2, dtype=bn.dtype)
    q1 = 1.0 / np.pi ** 2 * jnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
    k = jnp.arange(2, 50, dtype=bn.dtype)
    q2 = jnp.sum(k[:, None] ** (-m[None, :]), axis=0)
    return bn.at[4::2].set(q1 * (1 + q2))
