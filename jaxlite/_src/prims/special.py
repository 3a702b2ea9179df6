"""Special-function primitives (lax.erf, erfc, erf_inv, lgamma, digamma, polygamma, igamma,
igammac, bessel_i0e, bessel_i1e, zeta, regularized_incomplete_beta) computed with SciPy,
except the incomplete gamma and beta family, which follows JAX's own algorithms
(special_igamma.py, special_betainc.py).

SciPy is imported the first time one of them runs (``import scipy.special`` takes a few
tenths of a second), not when jaxlite is imported."""
from __future__ import annotations

import numpy as np

from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.base import BinaryElementwise, Elementwise, UnaryElementwise
from jaxlite._src.prims.xla_kernels import xla_class

__all__ = ["bessel_i0e_p", "bessel_i1e_p", "digamma_p", "erf_inv_p", "erf_p", "erfc_p",
           "igamma_grad_a_p", "igamma_p", "igammac_p", "lgamma_p", "polygamma_p",
           "regularized_incomplete_beta_p", "zeta_p"]


def _keep(name, adapt=None):
    """``scipy.special.<name>`` (through ``adapt(fn)`` if given) applied keeping the input
    dtype (SciPy may upcast float16/bfloat16); SciPy is loaded on the first call."""
    fn = None

    def f(*xs):
        nonlocal fn
        if fn is None:
            import scipy.special
            fn = getattr(scipy.special, name)
            fn = fn if adapt is None else adapt(fn)
        dt = np.asarray(xs[0]).dtype
        with np.errstate(all="ignore"):
            r = fn(*[np.asarray(x, np.float32) if x.dtype.itemsize < 4 else x for x in xs])
        return np.asarray(r, dt)
    return f


def _c(x, v):
    return u.const(x, v)


class _Unary(UnaryElementwise):
    kind = "float"

    def lower_py(self, ctx, ins):
        return None


class Erf(_Unary):
    name, np_fn = "erf", _keep("erf")
    tangent = staticmethod(lambda g, x, y: u.mul(g, u.mul(
        _c(x, 2 / np.sqrt(np.pi)), exp_neg_sq(x))))


class Erfc(_Unary):
    name, np_fn = "erfc", _keep("erfc")
    tangent = staticmethod(lambda g, x, y: u.mul(g, u.mul(
        _c(x, -2 / np.sqrt(np.pi)), exp_neg_sq(x))))


class ErfInv(_Unary):
    name, np_fn = "erf_inv", _keep("erfinv")
    tangent = staticmethod(lambda g, x, y: u.mul(g, u.mul(
        _c(x, np.sqrt(np.pi) / 2), _exp(u.mul(y, y)))))


class Lgamma(_Unary):
    name, np_fn = "lgamma", _keep("gammaln")
    tangent = staticmethod(lambda g, x, y: u.mul(g, digamma_p.bind(x)))


def _digamma_poles_nan(fn):
    """SciPy's digamma with XLA's value at the poles (0 and the negative integers): NaN,
    where SciPy gives infinities."""
    def f(x):
        x = np.asarray(x)
        return np.where((x <= 0) & (x == np.floor(x)), np.nan, fn(x))
    return f


class Digamma(_Unary):
    name, np_fn = "digamma", _keep("digamma", _digamma_poles_nan)
    tangent = staticmethod(lambda g, x, y: u.mul(g, polygamma_p.bind(u.ones(x), x)))


class BesselI0e(_Unary):
    name, np_fn = "bessel_i0e", _keep("i0e")
    tangent = staticmethod(lambda g, x, y: u.mul(g, u.sub(
        bessel_i1e_p.bind(x), u.mul(_sign(x), y))))


class BesselI1e(_Unary):
    name, np_fn = "bessel_i1e", _keep("i1e")

    @staticmethod
    def tangent(g, x, y):
        # i1e' = i0e - sign(x) i1e - i1e / x  (the limit at 0 is 1/2)
        zero = u.eq(x, _c(x, 0))
        safe = u.select(zero, u.ones(x), x)
        d = u.sub(u.sub(bessel_i0e_p.bind(x), u.mul(_sign(x), y)), u.div(y, safe))
        return u.mul(g, u.select(zero, u.bcast(_c(x, 0.5), u.aval(x).shape), d))


def _exp(v):
    from jaxlite._src.prims.elementwise import exp_p
    return exp_p.bind(v)


def exp_neg_sq(x):
    return _exp(u.neg(u.mul(x, x)))


def _sign(x):
    from jaxlite._src.prims.elementwise import sign_p
    return sign_p.bind(x)


class _Binary(BinaryElementwise):
    kind = "float"

    def lower_py(self, ctx, ins):
        return None


class Polygamma(_Binary):
    """``polygamma(m, x)``: the m-th derivative of digamma (m a non-negative integer)."""
    name, np_fn = "polygamma", _keep("polygamma",
                                     lambda pg: lambda m, x: pg(m.astype(np.int64), x))

    def jvp(self, primals, tangents):
        m, x = primals
        out = self.bind(m, x)
        if not u.is_zero(tangents[0]):
            raise TypeError("polygamma is not differentiable with respect to its order m")
        return out, u.mul(tangents[1], self.bind(u.add(m, u.ones(m)), x))


class Igamma(_Binary):
    """Regularized lower incomplete gamma P(a, x)."""
    name = "igamma"

    @staticmethod
    def np_fn(a, x):
        from jaxlite._src.prims.special_igamma import igamma_np
        return igamma_np(a, x)

    def jvp(self, primals, tangents):
        a, x = primals
        out = self.bind(a, x)
        return out, _igamma_tangent(a, x, tangents, 1)


class Igammac(_Binary):
    """Regularized upper incomplete gamma Q(a, x) = 1 - P(a, x)."""
    name = "igammac"

    @staticmethod
    def np_fn(a, x):
        from jaxlite._src.prims.special_igamma import igammac_np
        return igammac_np(a, x)

    def jvp(self, primals, tangents):
        a, x = primals
        out = self.bind(a, x)
        return out, _igamma_tangent(a, x, tangents, -1)


def _igamma_tangent(a, x, tangents, sign):
    """The tangent of ``sign * P(a, x)`` (``Q = 1 - P`` for sign -1)."""
    ta, tx = tangents
    parts = []
    if not u.is_zero(ta):
        parts.append(u.mul(ta, igamma_grad_a_p.bind(a, x)))
    if not u.is_zero(tx):
        parts.append(u.mul(tx, _igamma_dx(a, x)))
    t = parts[0] if len(parts) == 1 else u.add(parts[0], parts[1])
    return t if sign > 0 else u.neg(t)


class IgammaGradA(_Binary):
    """d/da of the regularized lower incomplete gamma P(a, x) (special_igamma.py)."""
    name = "igamma_grad_a"

    @staticmethod
    def np_fn(a, x):
        from jaxlite._src.prims.special_igamma import igamma_grad_a_np
        return igamma_grad_a_np(a, x)

    def jvp(self, primals, tangents):
        raise NotImplementedError("Differentiation rule for 'igamma_grad_a' not implemented")


def _igamma_dx(a, x):
    from jaxlite._src.prims.elementwise import log_p
    # d/dx P(a, x) = exp(-x + (a - 1) log x - lgamma(a))
    return _exp(u.sub(u.sub(u.mul(u.sub(a, u.ones(a)), log_p.bind(x)), x),
                      lgamma_p.bind(a)))


class Zeta(_Binary):
    """Hurwitz zeta function zeta(x, q)."""
    name, np_fn = "zeta", _keep("zeta")

    def jvp(self, primals, tangents):
        # JAX defines no derivative for lax.zeta (jax.scipy.special.zeta adds one in q)
        raise NotImplementedError("Differentiation rule for 'zeta' not implemented")


class RegularizedIncompleteBeta(Elementwise):
    """The regularized incomplete beta I_x(a, b) (operands a, b, x)."""
    name, nargs, kind = "regularized_incomplete_beta", 3, "float"

    @staticmethod
    def np_fn(a, b, x):
        from jaxlite._src.prims.special_betainc import betainc_np
        return betainc_np(a, b, x)

    def jvp(self, primals, tangents):
        from jaxlite._src.prims.elementwise import log1p_p, log_p
        a, b, x = primals
        out = self.bind(a, b, x)
        if not (u.is_zero(tangents[0]) and u.is_zero(tangents[1])):
            raise ValueError("Betainc gradient with respect to a and b not supported.")
        if u.is_zero(tangents[2]):
            return out, u.Zero.like(out)
        # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b)
        lbeta = u.sub(u.add(lgamma_p.bind(a), lgamma_p.bind(b)), lgamma_p.bind(u.add(a, b)))
        dx = _exp(u.sub(u.add(u.mul(u.sub(b, u.ones(b)), log1p_p.bind(u.neg(x))),
                              u.mul(u.sub(a, u.ones(a)), log_p.bind(x))), lbeta))
        return out, u.mul(dx, tangents[2])


erf_p, erfc_p, erf_inv_p = xla_class(Erf)(), xla_class(Erfc)(), xla_class(ErfInv)()
lgamma_p, digamma_p = xla_class(Lgamma)(), xla_class(Digamma)()
bessel_i0e_p, bessel_i1e_p = BesselI0e(), BesselI1e()
polygamma_p, igamma_p, igammac_p, zeta_p = Polygamma(), Igamma(), Igammac(), Zeta()
regularized_incomplete_beta_p = RegularizedIncompleteBeta()
igamma_grad_a_p = IgammaGradA()
