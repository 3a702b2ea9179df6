"""``random_gamma``: Gamma(a) draws, one per raw key, as one primitive (the primitive JAX's
``gamma`` binds), and ``random_gamma_grad``, the implicit-reparameterisation derivative of a
draw with respect to ``a``.

The draws follow Marsaglia and Tsang, "A simple method for generating gamma variables"
(ACM TOMS 26(3), 2000): for a >= 1, with d = a - 1/3 and c = 1 / (3 sqrt d), propose
x ~ N(0, 1) until v = 1 + c x > 0, and accept d v^3 when u < 1 - 0.0331 x^4 or
log u < x^2 / 2 + d (1 - v^3 + log v^3); a < 1 runs with a + 1 and multiplies by
U^(1/a) (adds log(U) / a in log space).

Key use, per element i with key k_i (JAX's stream): k_i splits into (loop key, boost key);
each proposal round splits the loop key into (next loop key, normal key, uniform key), and
the normal key is split (next, draw) until 1 + c x > 0. Every key operation is the key's
own PRNG implementation applied to that key alone (``gamma_keys``: threefry in either
layout, rbg, unsafe_rbg), which is what JAX's per-key ``vmap`` / ``lax.map`` computes.
Instead of a loop per element, each round advances all elements that are still rejecting at
once, so a sample of n draws costs a few kernel calls per round.

Arithmetic is XLA:CPU's: float32 with its log, log1p and powf, the multiply-adds it fuses,
flushed subnormal results, and ``c = (1/3) rsqrt(d)`` with its reciprocal square root,
which depends on the processor (``xla_extra.rsqrt_form``); XLA computes float16/bfloat16
operations in float32 and rounds each result. When ``a`` is a compile-time constant in
JAX's program (``folded``), XLA folds the terms of ``a`` alone instead:
``c = (1/3) / sqrt(d)`` for a scalar, ``(1/3) (1 / sqrt(d))`` for an array, and the C
library's ``log d``.

``random_gamma_grad`` runs JAX's algorithm (``prims.special_igamma``: the incomplete gamma
series or continued fraction carrying its derivative in ``a``)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.prims.special_igamma import random_gamma_grad_np
from jaxlite._src.random import xla_extra as XE
from jaxlite._src.random import xla_math as X
from jaxlite._src.random.gamma_keys import KEY_WORDS, key_ops

__all__ = ["random_gamma_p", "random_gamma_grad_p", "random_gamma", "random_gamma_grad"]

_U32 = np.dtype(np.uint32)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


# ------------------------------------------------------------------------ arithmetic

class _Float32Ops:
    """XLA:CPU's float32 arithmetic for the sampler's formulas."""
    log = staticmethod(X.log_f32)
    log1p = staticmethod(X.log1p_f32)
    pow = staticmethod(X.pow_f32)
    fma = staticmethod(X.fma_f32)       # a * b + c, contracted as XLA does
    rsqrt = staticmethod(XE.rsqrt_f32)
    folded_log = staticmethod(XE.folded_log_f32)

    @staticmethod
    def ftz(x):
        """Subnormal results flushed to zero (XLA:CPU runs with FTZ)."""
        return X._ftz(np.asarray(x, _F32))


class _Float64Ops:
    """NumPy's float64 arithmetic."""
    log = staticmethod(np.log)
    log1p = staticmethod(np.log1p)
    pow = staticmethod(np.power)
    folded_log = staticmethod(np.log)

    @staticmethod
    def fma(a, b, c):
        return a * b + c

    @staticmethod
    def rsqrt(x):
        return 1 / np.sqrt(x)

    @staticmethod
    def ftz(x):
        return x


class _HalfOps:
    """float16/bfloat16: each operation in XLA:CPU's float32, its result rounded."""

    def __init__(self, dtype):
        self.dtype = dtype

    def _f32(self, kernel):
        return lambda *xs: np.asarray(kernel(*[np.asarray(x, _F32) for x in xs]), self.dtype)

    def __getattr__(self, name):
        if name == "fma":                # no contraction: each product is rounded
            return lambda a, b, c: a * b + c
        if name == "ftz":
            return lambda x: x
        return self._f32(getattr(_Float32Ops, name))


def _ops(dtype):
    if dtype == _F32:
        return _Float32Ops
    if dtype == _F64:
        return _Float64Ops
    return _HalfOps(dtype)


# ------------------------------------------------------------------------------ draws

def _positive_v(kops, raw, c, ops):
    """For each raw key: split (next, draw) and draw x ~ N(0, 1) until v = 1 + c x > 0;
    returns (x, v)."""
    dtype, one = c.dtype, c.dtype.type(1)
    x = np.zeros(c.shape, dtype)
    v = np.zeros(c.shape, dtype)
    chain = raw.copy()
    todo = np.arange(c.size)
    while todo.size:
        pair = kops.split(chain[todo], 2)
        chain[todo] = pair[:, 0]
        xs = kops.normal(pair[:, 1], dtype)
        x[todo] = xs
        v[todo] = ops.fma(xs, c[todo], one)
        todo = todo[v[todo] <= 0]
    return x, v


def _rejected(u, x2, v3, d, ops):
    """Marsaglia-Tsang's test failing (both the squeeze and the log bound)."""
    dt = d.dtype
    one = dt.type(1)
    # 1 - 0.0331 x^4: one multiply-add in float32
    above_squeeze = u >= ops.fma(dt.type(-0.0331), x2 * x2, one)
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = x2 * dt.type(0.5) + d * ((one - v3) + ops.log(v3))
        return above_squeeze & (ops.log(u) >= bound)


def _accepted_v3(kops, loop_keys, d, c, ops):
    """v^3 of each element's first accepted proposal (loop_keys advance in place)."""
    v3 = np.ones(d.shape, d.dtype)
    pending = np.arange(d.size)
    while pending.size:
        three = kops.split(loop_keys[pending], 3)
        loop_keys[pending] = three[:, 0]
        x, v = _positive_v(kops, three[:, 1].copy(), c[pending], ops)
        x2, cube = x * x, v * v * v
        u = kops.unit(three[:, 2], d.dtype)
        v3[pending] = cube
        pending = pending[_rejected(u, x2, cube, d[pending], ops)]
    return v3


def gamma_impl(keys, alpha, log_space, impl="fry", partitionable=True, folded=""):
    """Gamma(alpha) draws (their logarithms if ``log_space``), one per raw key of the PRNG
    implementation tagged ``impl``; ``folded``: "scalar" or "array" when ``alpha`` is a
    compile-time constant of that kind, else ""."""
    dtype, shape = alpha.dtype, alpha.shape
    a = alpha.reshape(-1)
    if a.size == 0:
        return np.empty(shape, dtype)
    ops = _ops(dtype)
    kops = key_ops(impl, partitionable)
    if folded == "array" and dtype == np.float16:
        folded = ""                              # (XLA leaves float16 arrays unfolded)
    one, third = dtype.type(1), dtype.type(1.0 / 3.0)
    with np.errstate(all="ignore"):
        small = ~(a >= one)                    # a < 1 (and NaN) run with a + 1
        d = np.where(small, a + one, a) - third
        # XLA folds a scalar's division exactly and an array's as a product with the
        # reciprocal; it keeps the division for bfloat16, each step rounded
        if folded == "scalar" or dtype.name == "bfloat16":
            c = third / np.sqrt(d)
        elif folded == "array":
            c = third * (one / np.sqrt(d))
        else:
            c = third * ops.rsqrt(d)
        first = kops.split(keys.reshape(-1, KEY_WORDS[impl]), 2)
        loop_keys, boost_keys = first[:, 0].copy(), first[:, 1]
        v3 = _accepted_v3(kops, loop_keys, d, c, ops)
        # the boost U^(1/a) (log U / a) only where a < 1
        boosted = np.flatnonzero(small)
        inv_a = one / a[boosted]
        u = kops.unit(boost_keys[boosted], dtype) if boosted.size else np.zeros(0, dtype)
        if log_space:
            log_u = ops.log1p(-u)                               # log(1 - U) = -Exp(1)
            log_boost = np.zeros(a.shape, dtype)
            log_boost[boosted] = np.where(log_u != 0, log_u * inv_a, dtype.type(0))
            log_d = ops.folded_log(d) if folded else ops.log(d)
            out = (log_d + ops.log(v3)) + log_boost
        else:
            boost = np.ones(a.shape, dtype)
            boost[boosted] = ops.pow(one - u, inv_a)
            out = ops.ftz(ops.ftz(d * v3) * boost)
    return np.asarray(out, dtype).reshape(shape)


class RandomGamma(Primitive):
    """``random_gamma[log_space](keys, a)``: one Gamma(a) sample per raw key (``keys``
    uint32[*a.shape, words]), or its logarithm when ``log_space``. Hidden parameters: the
    keys' PRNG implementation (``impl``: "fry", "rbg" or "urbg"), the threefry layout
    (``partitionable``) and whether ``a`` is a compile-time constant (``folded``: "scalar",
    "array" or "")."""
    name = "random_gamma"
    weak_rule = "never"
    hidden_params = ("impl", "partitionable", "folded")

    def impl(self, keys, a, *, log_space, impl="fry", partitionable=True, folded=""):
        return gamma_impl(np.asarray(keys), np.asarray(a), log_space, impl, partitionable,
                          folded)

    def abstract_eval(self, keys, a, *, log_space, impl="fry", partitionable=True,
                      folded=""):
        words = KEY_WORDS.get(impl)
        if keys.dtype != _U32 or tuple(keys.shape) != tuple(a.shape) + (words,):
            raise TypeError(f"random_gamma takes uint32[*a.shape, {words}] keys, got "
                            f"{keys.str_short()} for a of shape {a.shape}")
        if not dtypes.issubdtype(a.dtype, np.floating):
            raise TypeError(f"random_gamma takes a float a, got {a.str_short()}")
        return ShapedArray(a.shape, a.dtype)

    def jvp(self, primals, tangents, *, log_space, **hidden):
        from jaxlite._src.lax import elementwise as lax
        from jaxlite._src.lax.shape import full_like
        from jaxlite._src.prims import ad_util as u
        keys, a = primals
        out = self.bind(keys, a, log_space=log_space, **hidden)
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


# ------------------------------------------------------------------------- derivative

class RandomGammaGrad(Primitive):
    """``random_gamma_grad(a, x)``: the derivative of a Gamma(a) sample ``x`` with respect
    to ``a`` at fixed uniform noise (implicit reparameterisation)."""
    name = "random_gamma_grad"
    jvp = NOT_DIFFERENTIABLE

    def impl(self, a, x):
        return random_gamma_grad_np(a, x)

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


def random_gamma(keys, a, log_space=False, impl="fry", partitionable=True, folded=""):
    """Bind ``random_gamma`` (``keys`` raw uint32[*a.shape, words] of the PRNG
    implementation tagged ``impl``; ``folded``: "scalar"/"array" for an ``a`` that is a
    compile-time constant broadcast from a scalar / given whole)."""
    return random_gamma_p.bind(keys, a, log_space=bool(log_space), impl=impl,
                               partitionable=bool(partitionable), folded=str(folded))


def random_gamma_grad(a, x):
    """The implicit-reparameterisation derivative of Gamma(a) samples ``x`` w.r.t. ``a``."""
    return random_gamma_grad_p.bind(a, x)
