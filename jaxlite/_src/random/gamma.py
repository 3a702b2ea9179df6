"""``random_gamma``: JAX's Marsaglia-Tsang gamma sampler as one primitive, run as a masked
NumPy loop over all elements at once, and ``random_gamma_grad`` for its implicit
reparameterisation gradient (as JAX's ``random_gamma_p`` and ``lax.random_gamma_grad``).

Every element follows JAX's key stream: element ``i`` gets key ``keys[i]``, splits it into
(loop key, final subkey); each rejection round splits the loop key into 3 (next key, normal
key, uniform key) and the inner loop re-draws normals from the normal key until
``1 + c x > 0``. Instead of one while_loop per element, each round advances only the
elements still rejecting, so the cost is a few kernel calls per round over all elements.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.random import kernels as K
from jaxlite._src.random.fused import sample_impl
from jaxlite._src.random import special

__all__ = ["random_gamma_p", "random_gamma_grad_p", "random_gamma", "random_gamma_grad",
           "GAMMA_DTYPES"]

_U32 = np.dtype(np.uint32)
GAMMA_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _split(keys, num):
    """(len(keys), num, 2) subkeys of raw keys (len(keys), 2)."""
    return sample_impl(keys, "keys", (num,), _U32)


def _uniform(keys, dtype):
    return sample_impl(keys, "uniform", (), dtype)


def _normal(keys, dtype):
    if dtype == np.float32:
        return sample_impl(keys, "normal", (), dtype)
    lo = np.nextafter(dtype.type(-1), dtype.type(0))
    u = _uniform(keys, dtype)
    u = np.maximum(lo, u * (dtype.type(1) - lo) + lo)
    return dtype.type(np.sqrt(2)) * special.erf_inv_impl(u)


def _fma(a, b, c):
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b + np.float64(c)).astype(np.float32)
    return a * b + c


def _log(x):
    if x.dtype == np.float32:
        return K.log_f32(x)
    return np.log(x)


def _log1p(x):
    if x.dtype == np.float32:
        return K.log1p_f32(np.ascontiguousarray(x), np.empty_like(x), K.scratch())
    return np.log1p(x)


def gamma_impl(keys, alpha, log_space):
    """Gamma(alpha) samples (log-samples if ``log_space``), one per raw key."""
    dtype = alpha.dtype
    shape = alpha.shape
    alpha = alpha.reshape(-1)
    keys = keys.reshape(-1, 2)
    n = alpha.shape[0]
    if n == 0:
        return np.empty(shape, dtype)
    one = dtype.type(1)
    with np.errstate(all="ignore"):
        boost_mask = alpha >= one
        alpha_b = np.where(boost_mask, alpha, alpha + one)
        d = alpha_b - dtype.type(1.0 / 3.0)
        c = dtype.type(1.0 / 3.0) / np.sqrt(d)
        ks = _split(keys, 2)
        key, subkey = ks[:, 0].copy(), ks[:, 1]
        X = np.zeros(n, dtype)
        V = np.ones(n, dtype)
        active = np.flatnonzero(np.ones(n, bool))
        while active.size:
            k3 = _split(key[active], 3)
            key[active] = k3[:, 0]
            ca = c[active]
            x = np.zeros(active.size, dtype)
            v = np.full(active.size, -one, dtype)
            kin = k3[:, 1].copy()
            inner = np.arange(active.size)
            while inner.size:
                k2 = _split(kin[inner], 2)
                kin[inner] = k2[:, 0]
                xn = _normal(k2[:, 1], dtype)
                x[inner] = xn
                v[inner] = _fma(xn, ca[inner], one)   # XLA contracts 1 + x * c
                inner = inner[v[inner] <= 0]
            Xa = x * x
            Va = v * v * v
            U = _uniform(k3[:, 2], dtype)
            X[active], V[active] = Xa, Va
            da = d[active]
            reject = (U >= one - dtype.type(0.0331) * (Xa * Xa)) & (
                np.log(U) >= Xa * dtype.type(0.5) + da * ((one - Va) + np.log(Va)))
            active = active[reject]
        if log_space:
            u = _uniform(subkey, dtype)
            log_samples = -(-_log1p(-u))
            log_boost = np.where(boost_mask | (log_samples == 0), dtype.type(0),
                                 log_samples * (one / alpha))
            out = (_log(d) + _log(V)) + log_boost
        else:
            samples = one - _uniform(subkey, dtype)
            boost = np.where(boost_mask, one, np.power(samples, one / alpha))
            out = (d * V) * boost
    return out.astype(dtype).reshape(shape)


def _gamma_grad_a(a, x):
    """d sample / d a for sample x ~ Gamma(a): -(dP/da) / (dP/dx), P the regularised
    lower incomplete gamma function (dP/da by a central difference in float64)."""
    import scipy.special as sc
    a64 = np.asarray(a, np.float64)
    x64 = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        h = 1e-5 * np.maximum(a64, 1e-3)
        dpda = (sc.gammainc(a64 + h, x64) - sc.gammainc(a64 - h, x64)) / (2 * h)
        log_dpdx = (a64 - 1) * np.log(x64) - x64 - sc.gammaln(a64)
        g = -dpda / np.exp(log_dpdx)
    return g


class RandomGamma(Primitive):
    """``random_gamma[log_space](keys, a)``: one Gamma(a) sample per raw threefry key
    (``keys`` uint32[*a.shape, 2]), or its logarithm when ``log_space``."""
    name = "random_gamma"
    weak_rule = "never"

    def impl(self, keys, a, *, log_space):
        return gamma_impl(np.asarray(keys), np.asarray(a), log_space)

    def abstract_eval(self, keys, a, *, log_space):
        if keys.dtype != _U32 or tuple(keys.shape) != tuple(a.shape) + (2,):
            raise TypeError("random_gamma takes uint32[*a.shape, 2] keys, got "
                            f"{keys.str_short()} for a of shape {a.shape}")
        return ShapedArray(a.shape, a.dtype)

    def jvp(self, primals, tangents, *, log_space):
        from jaxlite._src.lax import elementwise as lax
        from jaxlite._src.lax.shape import full_like
        from jaxlite._src.prims import ad_util as u
        keys, a = primals
        out = self.bind(keys, a, log_space=log_space)
        ta = tangents[1]
        if u.is_zero(ta):
            return out, u.zeros(u.aval(out))
        if log_space:
            s = lax.exp(out)
            tiny = full_like(s, np.finfo(s.dtype).tiny)
            s = lax.select(lax.eq(s, full_like(s, 0)), tiny, s)
            g = lax.div(random_gamma_grad(a, s), s)
        else:
            g = random_gamma_grad(a, out)
        return out, lax.mul(ta, g)

    def batch(self, size, args, dims, **params):
        from jaxlite._src.interpreters.batching import moveaxis
        from jaxlite._src.lax import shape as lax_shape
        keys, a = args
        dk, da = dims
        if dk is None:
            keys = lax_shape.broadcast_in_dim(keys, (size,) + tuple(keys.shape),
                                              tuple(range(1, keys.ndim + 1)))
        else:
            keys = moveaxis(keys, dk, 0)
        if da is None:
            a = lax_shape.broadcast_in_dim(a, (size,) + tuple(a.shape),
                                           tuple(range(1, a.ndim + 1)))
        else:
            a = moveaxis(a, da, 0)
        return self.bind(keys, a, **params), 0


random_gamma_p = RandomGamma()


class RandomGammaGrad(Primitive):
    """``random_gamma_grad(a, x)``: the derivative of a Gamma(a) sample ``x`` with respect
    to ``a`` at fixed uniform noise (implicit reparameterisation)."""
    name = "random_gamma_grad"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, a, x):
        a, x = np.asarray(a), np.asarray(x)
        dt = np.result_type(a, x)
        return np.asarray(_gamma_grad_a(a, x), dt)

    def abstract_eval(self, a, x):
        from jaxlite._src.prims.base import broadcast_shapes_or_scalar
        if a.dtype != x.dtype:
            raise TypeError("random_gamma_grad requires arguments to have the same dtypes, "
                            f"got {a.dtype} and {x.dtype}")
        shape = broadcast_shapes_or_scalar("random_gamma_grad", [a.shape, x.shape])
        return ShapedArray(shape, a.dtype)

    def batch(self, size, args, dims, **params):
        from jaxlite._src.prims.base import broadcast_batcher
        return broadcast_batcher(self, size, args, dims, params)


random_gamma_grad_p = RandomGammaGrad()


def random_gamma(keys, a, log_space=False):
    """Bind ``random_gamma`` (``keys`` raw uint32[*a.shape, 2])."""
    return random_gamma_p.bind(keys, a, log_space=bool(log_space))


def random_gamma_grad(a, x):
    """The implicit-reparameterisation derivative of Gamma(a) samples ``x`` w.r.t. ``a``."""
    return random_gamma_grad_p.bind(a, x)
