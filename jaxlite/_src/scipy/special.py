"""jax.scipy.special: logsumexp and the special functions (on lax's special primitives).

``logsumexp``, ``softmax`` and ``log_softmax`` are jax.nn's (``nn/functions.py``), as in JAX
where both namespaces share one implementation."""
from __future__ import annotations

import fractions
import math

import numpy as np

from jaxlite._src.api.custom_derivatives import custom_jvp
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as ls
from jaxlite._src.nn.functions import log_softmax as _nn_log_softmax
from jaxlite._src.nn.functions import logsumexp  # noqa: F401  (re-exported)
from jaxlite._src.nn.functions import softmax as _nn_softmax
from jaxlite._src.numpy.util import promote_args_inexact
from jaxlite._src.scipy.special_basic import (  # noqa: F401  (re-exported)
    digamma, erf, erfc, erfinv, expit, gammaln, i0e, i1e)
from jaxlite._src.scipy.special_normal import log_ndtr, ndtr, ndtri  # noqa: F401
from jaxlite._src.scipy.special_xlogy import (  # noqa: F401  (re-exported)
    _xlogx, betaln, entr, logit, xlog1py, xlogy)

__all__ = ["logsumexp", "erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma",
           "xlogy", "xlog1py", "expit", "logit", "betaln", "multigammaln", "gamma",
           "gammainc", "gammaincc", "i0e", "i1e", "i0", "i1", "zeta", "betainc", "log_ndtr",
           "ndtr", "ndtri", "entr", "softmax", "log_softmax", "sinc"]

from jaxlite._src.scipy import special_error_family as _sef  # noqa: E402
from jaxlite._src.scipy import special_gamma_family as _sgf  # noqa: E402
from jaxlite._src.scipy.special_error_family import *  # noqa: E402,F401,F403
from jaxlite._src.scipy.special_gamma_family import *  # noqa: E402,F401,F403
from jaxlite._src.scipy import special_integrals as _sin  # noqa: E402
from jaxlite._src.scipy.special_integrals import *  # noqa: E402,F401,F403
from jaxlite._src.scipy.special_owens import owens_t  # noqa: E402,F401
from jaxlite._src.scipy.special_bessel import bessel_jn  # noqa: E402,F401
from jaxlite._src.scipy.special_kummer import hyp1f1  # noqa: E402,F401
from jaxlite._src.scipy.special_sph_harm import sph_harm_y  # noqa: E402,F401
from jaxlite._src.scipy.special_faddeeva import wofz  # noqa: E402,F401
from jaxlite._src.scipy.special_gauss_hyp import hyp2f1  # noqa: E402,F401

__all__ += _sef.__all__ + _sgf.__all__ + _sin.__all__ + ["owens_t", "bessel_jn", "hyp1f1",
                                                         "sph_harm_y", "wofz", "hyp2f1"]


def gamma(x):
    """The gamma function: ``gammasgn(x) * exp(gammaln(x))`` (as JAX; NaN at the poles and
    -inf, ``+-inf`` at ``+-0``)."""
    (x,) = promote_args_inexact("gamma", x)
    if np.issubdtype(x.dtype, np.complexfloating):
        raise NotImplementedError("jax.scipy.special.gamma of complex inputs is not "
                                  "implemented in jaxlite; use real inputs")
    return lax.mul(_sgf.gammasgn(x), lax.exp(ls.lgamma(x)))


def i0(x):
    """Modified Bessel function of order 0."""
    (x,) = promote_args_inexact("i0", x)
    return lax.mul(lax.exp(lax.abs(x)), ls.bessel_i0e(x))


def i1(x):
    """Modified Bessel function of order 1."""
    (x,) = promote_args_inexact("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), ls.bessel_i1e(x))


def polygamma(n, x):
    """The ``n``-th derivative of digamma."""
    n, x = promote_args_inexact("polygamma", n, x)
    return ls.polygamma(n, x)


def gammainc(a, x):
    """Regularized lower incomplete gamma function."""
    a, x = promote_args_inexact("gammainc", a, x)
    return ls.igamma(a, x)


def gammaincc(a, x):
    """Regularized upper incomplete gamma function."""
    a, x = promote_args_inexact("gammaincc", a, x)
    return ls.igammac(a, x)


def zeta(x, q=None):
    """Hurwitz zeta function ``sum_n (n + q)^-x`` (Riemann zeta when ``q`` is None). Its
    derivatives, in ``x`` and ``q``, are those of an Euler-Maclaurin expansion, as JAX's."""
    if q is None:
        q = 1.0
    x, q = promote_args_inexact("zeta", x, q)
    return _zeta(x, q)


@custom_jvp
def _zeta(x, q):
    return ls.zeta(x, q)


def _bernoulli_ratios(count):
    """``(2j)! / B_2j`` for j = 1..count (exact Bernoulli numbers by the Akiyama-Tanigawa
    recurrence, then one rounding to float)."""
    n = 2 * count
    row, bern = [], []
    for m in range(n + 1):
        row.append(fractions.Fraction(1, m + 1))
        for j in range(m, 0, -1):
            row[j - 1] = j * (row[j - 1] - row[j])
        bern.append(row[0])
    return np.array([float(math.factorial(2 * j) / bern[2 * j]) for j in range(1, count + 1)])


def _zeta_expansion(x, q):
    """Euler-Maclaurin form of zeta(x, q): N direct terms, the integral of the tail and M
    correction terms (N = M = 8 in float32, 16 otherwise), written as JAX writes it so its
    derivatives are JAX's."""
    from jaxlite._src.numpy import namespace as jnp
    dt = np.dtype(x.dtype)
    n = m = 8 if dt == np.float32 else 16
    one, n_ = np.array(1, dt), np.array(n, dt)
    xs, qs = jnp.expand_dims(x, -1), jnp.expand_dims(q, -1)
    k = np.arange(n, dtype=dt).reshape((1,) * q.ndim + (n,))
    head = jnp.sum((qs + k) ** -xs, -1)
    tail_integral = lax.div((q + n_) ** (one - x), x - one)
    first = (q + n_) ** -x
    j = np.arange(2 * m, dtype=dt).reshape((1,) * x.ndim + (2 * m,))
    ratios = jnp.cumprod((xs + j) / (qs + n_), -1)[..., ::2]
    ratios = jnp.clip(ratios, max=np.finfo(dt).max)
    coefs = _bernoulli_ratios(ratios.shape[-1]).astype(dt).reshape(
        (1,) * q.ndim + (ratios.shape[-1],))
    corrections = first * (np.array(0.5, dt) + (ratios / coefs).sum(-1))
    return head + tail_integral + corrections


@_zeta.defjvp
def _zeta_jvp(primals, tangents):
    from jaxlite._src.api.ad import jvp
    return jvp(_zeta_expansion, primals, tangents)


def betainc(a, b, x):
    """Regularized incomplete beta function."""
    a, b, x = promote_args_inexact("betainc", a, b, x)
    return ls.betainc(a, b, x)


def multigammaln(a, d):
    """Log of the multivariate gamma function of dimension ``d``: ``sum_j gammaln(a - j/2) +
    d (d - 1) log(pi) / 4`` (the constant computed in ``a``'s dtype, as JAX)."""
    from jaxlite._src.numpy import reductions as R
    from jaxlite._src.numpy.creation import arange
    from jaxlite._src.numpy.extra_creation import concrete
    from jaxlite._src.numpy.shape_ops import expand_dims
    d = concrete(int, d, "d argument of multigammaln")
    a, d_ = promote_args_inexact("multigammaln", a, d)
    c = np.asarray
    constant = lax.mul(lax.mul(lax.mul(c(0.25, a.dtype), d_), lax.sub(d_, c(1, a.dtype))),
                       lax.log(c(np.pi, a.dtype)))
    b = lax.div(arange(d, dtype=d_.dtype), c(2, a.dtype))
    res = R.sum(gammaln(expand_dims(a, -1) - expand_dims(b, tuple(range(a.ndim)))), axis=-1)
    return res + constant


def sinc(x):
    """``sin(pi x) / (pi x)``."""
    from jaxlite._src.numpy.ufuncs import sinc as _sinc
    return _sinc(x)


def softmax(x, /, *, axis=None):
    """Softmax along ``axis`` (all axes when None), as jax.nn.softmax."""
    return _nn_softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """Log-softmax along ``axis`` (all axes when None), as jax.nn.log_softmax."""
    return _nn_log_softmax(x, axis=axis)
