"""The elementary special functions (jax.scipy.special's erf, erfc, erfinv, gammaln,
digamma, i0e, i1e, expit and ndtr): one lax special primitive each, after jnp's promotion to
an inexact dtype. The other ``special_*`` modules build on these; ``special.py`` re-exports
them with the rest."""
from __future__ import annotations

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as ls
from jaxlite._src.numpy.util import promote_args_inexact
from jaxlite._src.scipy.special_normal import ndtr

__all__ = ["erf", "erfc", "erfinv", "gammaln", "digamma", "i0e", "i1e", "expit", "ndtr"]


def _f(name, fn, doc):
    def g(x):
        (x,) = promote_args_inexact(name, x)
        return fn(x)
    g.__name__ = g.__qualname__ = name
    g.__doc__ = doc
    return g


erf = _f("erf", ls.erf, "The error function.")
erfc = _f("erfc", ls.erfc, "The complementary error function.")
erfinv = _f("erfinv", ls.erf_inv, "The inverse error function.")
gammaln = _f("gammaln", ls.lgamma, "Log of the absolute value of the gamma function.")
digamma = _f("digamma", ls.digamma, "The digamma function.")
i0e = _f("i0e", ls.bessel_i0e, "Exponentially scaled modified Bessel function of order 0.")
i1e = _f("i1e", ls.bessel_i1e, "Exponentially scaled modified Bessel function of order 1.")
expit = _f("expit", lax.logistic, "The logistic sigmoid ``1 / (1 + exp(-x))``.")
