"""``random_gamma``: Gamma(a) draws, one per threefry key, as one primitive (the primitive
JAX's ``gamma`` binds), and ``random_gamma_grad``, the implicit-reparameterisation
derivative of a draw with respect to ``a``.

The draws follow Marsaglia and Tsang, "A simple method for generating gamma variables"
(ACM TOMS 26(3), 2000): for a >= 1, with d = a - 1/3 and c = 1 / (3 sqrt d), propose
x ~ N(0, 1) until v = 1 + c x > 0, and accept d v^3 when u < 1 - 0.0331 x^4 or
log u < x^2 / 2 + d (1 - v^3 + log v^3); a < 1 runs with a + 1 and multiplies by
U^(1/a) (adds log(U) / a in log space).

Key use, per element i with key k_i (JAX's stream): k_i splits into (loop key, boost key);
each proposal round splits the loop key into (next loop key, normal key, uniform key), and
the normal key is split (next, draw) until 1 + c x > 0. Instead of a loop per element, each
round advances all elements that are still rejecting at once, so a sample of n draws costs
a few kernel calls per round. float32 arithmetic is XLA:CPU's (its log, log1p and powf, and
the multiply-adds it fuses), so the draws are JAX's bit for bit.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.random import special
from jaxlite._src.random import xla_math as X
from jaxlite._src.random.fused import sample_impl

__all__ = ["random_gamma_p", "random_gamma_grad_p", "random_gamma", "random_gamma_grad",
           "GAMMA_DTYPES"]

_U32 = np.dtype(np.uint32)
_F32 = np.dtype(np.float32)
GAMMA_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# ------------------------------------------------------------------- draws from raw keys

def _subkeys(raw, n):
    """(len(raw), n, 2) keys split from raw keys (len(raw), 2)."""
    return sample_impl(raw, "keys", (n,), _U32)


def _unit(raw, dtype):
    """One uniform in [0, 1) per raw key."""
    return sample_impl(raw, "uniform", (), dtype)


def _std_normal(raw, dtype):
    """One standard normal per raw key (float32 from the fused kernel; otherwise
    sqrt(2) erfinv of a uniform in (-1, 1))."""
    if dtype == _F32:
        return sample_impl(raw, "normal", (), dtype)
    floor = np.nextafter(dtype.type(-1), dtype.type(0))
    u = np.maximum(floor, _unit(raw, dtype) * (dtype.type(1) - floor) + floor)
    return dtype.type(np.sqrt(2)) * special.erf_inv_impl(u)


class _Float32Ops:
    """XLA:CPU's float32 arithmetic for the sampler's formulas."""
    log = staticmethod(X.log_f32)
    log1p = staticmethod(X.log1p_f32)
    pow = staticmethod(X.pow_f32)
    fma = staticmethod(X.fma_f32)       # a * b + c, contracted as XLA does


class _Float64Ops:
    """NumPy's float64 arithmetic."""
    log = staticmethod(np.log)
    log1p = staticmethod(np.log1p)
    pow = staticmethod(np.power)

    @staticmethod
    def fma(a, b, c):
        return a * b + c


def _ops(dtype):
    return _Float32Ops if dtype == _F32 else _Float64Ops


def _positive_v(raw, c, ops):
    """For each raw key: split (next, draw) and draw x ~ N(0, 1) until v = 1 + c x > 0;
    returns (x, v)."""
    dtype, one = c.dtype, c.dtype.type(1)
    x = np.zeros(c.shape, dtype)
    v = np.zeros(c.shape, dtype)
    chain = raw.copy()
    todo = np.arange(c.size)
    while todo.size:
        pair = _subkeys(chain[todo], 2)
        chain[todo] = pair[:, 0]
        xs = _std_normal(pair[:, 1], dtype)
        x[todo] = xs
        v[todo] = ops.fma(xs, c[todo], one)
        todo = todo[v[todo] <= 0]
    return x, v


def _rejected(u, x2, v3, d, ops):
    """Marsaglia-Tsang's test failing (both the squeeze and the log bound)."""
    dt = d.dtype
    one = dt.type(1)
    # 1 - 0.0331 x^4: one multiply-add in float32
    above_squeeze = u >= ops.fma(dt.type(-0.0331), x2 * x2, one) if dt == _F32 else \
        u >= one - dt.type(0.0331) * (x2 * x2)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = x2 * dt.type(0.5) + d * ((one - v3) + ops.log(v3))
        return above_squeeze & (ops.log(u) >= bound)


def _accepted_v3(loop_keys, d, c, ops):
    """v^3 of each element's first accepted proposal (loop_keys advance in place)."""
    v3 = np.ones(d.shape, d.dtype)
    pending = np.arange(d.size)
    while pending.size:
        three = _subkeys(loop_keys[pending], 3)
        loop_keys[pending] = three[:, 0]
        x, v = _positive_v(three[:, 1].copy(), c[pending], ops)
        x2, cube = x * x, v * v * v
        u = _unit(three[:, 2], d.dtype)
        v3[pending] = cube
        pending = pending[_rejected(u, x2, cube, d[pending], ops)]
    return v3


def gamma_impl(keys, alpha, log_space):
    """Gamma(alpha) draws (their logarithms if ``log_space``), one per raw key."""
    dtype, shape = alpha.dtype, alpha.shape
    a = alpha.reshape(-1)
    if a.size == 0:
        return np.empty(shape, dtype)
    ops = _ops(dtype)
    one = dtype.type(1)
    with np.errstate(all="ignore"):
        small = ~(a >= one)                    # a < 1 (and NaN) run with a + 1
        d = np.where(small, a + one, a) - dtype.type(1.0 / 3.0)
        c = dtype.type(1.0 / 3.0) / np.sqrt(d)
        first = _subkeys(keys.reshape(-1, 2), 2)
        loop_keys, boost_keys = first[:, 0].copy(), first[:, 1]
        v3 = _accepted_v3(loop_keys, d, c, ops)
        inv_a = one / a
        if log_space:
            log_u = ops.log1p(-_unit(boost_keys, dtype))      # log(1 - U) = -Exp(1)
            log_boost = np.where(small & (log_u != 0), log_u * inv_a, dtype.type(0))
            out = (ops.log(d) + ops.log(v3)) + log_boost
        else:
            boost = np.where(small, ops.pow(one - _unit(boost_keys, dtype), inv_a), one)
            out = (d * v3) * boost
    return np.asarray(out, dtype).reshape(shape)


# ------------------------------------------------------------------------- derivative

def _gamma_grad_a(a, x):
    """d x / d a for a draw x ~ Gamma(a) at fixed noise: -(dP/da) / (dP/dx) for P the
    regularised lower incomplete gamma function (dP/da by a central difference in
    float64)."""
    import scipy.special as sc
    a64 = np.asarray(a, np.float64)
    x64 = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        h = 1e-5 * np.maximum(a64, 1e-3)
        dp_da = (sc.gammainc(a64 + h, x64) - sc.gammainc(a64 - h, x64)) / (2 * h)
        log_density = (a64 - 1) * np.log(x64) - x64 - sc.gammaln(a64)
        return -dp_da / np.exp(log_density)


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
        if not log_space:
            return out, lax.mul(ta, random_gamma_grad(a, out))
        draw = lax.exp(out)
        tiny = full_like(draw, np.finfo(draw.dtype).tiny)
        draw = lax.select(lax.eq(draw, full_like(draw, 0)), tiny, draw)
        return out, lax.mul(ta, lax.div(random_gamma_grad(a, draw), draw))

    def batch(self, size, args, dims, **params):
        from jaxlite._src.interpreters.batching import moveaxis
        from jaxlite._src.lax import shape as lax_shape

        def leading(v, d):
            if d is not None:
                return moveaxis(v, d, 0)
            return lax_shape.broadcast_in_dim(v, (size,) + tuple(v.shape),
                                              tuple(range(1, v.ndim + 1)))
        return self.bind(*(leading(v, d) for v, d in zip(args, dims)), **params), 0


random_gamma_p = RandomGamma()


class RandomGammaGrad(Primitive):
    """``random_gamma_grad(a, x)``: the derivative of a Gamma(a) sample ``x`` with respect
    to ``a`` at fixed uniform noise (implicit reparameterisation)."""
    name = "random_gamma_grad"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, a, x):
        a, x = np.asarray(a), np.asarray(x)
        return np.asarray(_gamma_grad_a(a, x), np.result_type(a, x))

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
