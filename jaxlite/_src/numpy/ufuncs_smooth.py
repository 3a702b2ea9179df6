"""jax.numpy functions whose derivatives come from their own JVP rules, as in JAX:
``logaddexp``/``logaddexp2`` (their stable forms have a kink where both arguments are equal,
so the tangent is written from the exponentials instead) and ``sinc`` (the removable
singularity at 0 gets its Maclaurin series, so every higher derivative at 0 is right)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.api.custom_derivatives import custom_jvp
from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax.shape import full_like
from jaxlite._src.numpy.util import promote_args_inexact, asarray_value, lax_const

__all__ = ["logaddexp", "logaddexp2", "sinc"]


def _const(x, value):
    # a scalar of x's dtype, weakly typed when x is (as JAX's constants in these rules)
    return full_like(x, value)


def _scale_const(x, value):
    """JAX's ``lax._const(x, value)``: weakly typed only for a weakly typed scalar ``x``
    (an array ``x`` gets a strong constant, so ``logaddexp2`` of weak arrays is strong)."""
    return _const(x, value) if not np.ndim(x) else np.asarray(value, x.dtype)


def _wrap_between(x, a):
    """``x`` shifted by a multiple of ``2a`` into ``[-a, a)``."""
    two_a = _const(x, 2 * a)
    r = lax.rem(lax.add(x, _const(x, a)), two_a)
    r = lax.select(lax.lt(r, _const(x, 0)), lax.add(r, two_a), r)
    return lax.sub(r, _const(x, a))


def _logaddexp_base(x1, x2, exp, scale, period):
    """``amax + scale * log1p(exp(-|x1 - x2|))``; NaN or same-signed infinities where the
    difference is NaN. Complex inputs wrap the imaginary part into one period."""
    amax = lax.max(x1, x2)
    if dtypes.issubdtype(x1.dtype, np.floating):
        delta = lax.sub(x1, x2)
        nan, both = lax.ne(delta, delta), lax.add(x1, x2)
        tail = lax.log1p(exp(lax.neg(lax.abs(delta))))
        if scale is not None:
            tail = lax.mul(_scale_const(tail, scale), tail)
        return lax.select(nan, both, lax.add(amax, tail))
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        delta = lax.sub(lax.add(x1, x2), lax.mul(amax, _const(amax, 2)))
        tail = lax.log1p(exp(delta))
        if scale is not None:
            tail = lax.mul(_scale_const(tail, scale), tail)
        out = lax.add(amax, tail)
        return lax.complex(lax.real(out), _wrap_between(lax.imag(out), period))
    raise ValueError(f"logaddexp requires floating-point or complex inputs; got {x1.dtype}")


def _replace_inf(x):
    """``x`` with +inf (of the real part) replaced by 0, so ``inf - inf`` never makes a NaN
    tangent."""
    re = lax.real(x) if dtypes.issubdtype(x.dtype, np.complexfloating) else x
    return lax.select(lax.eq(re, _const(re, np.inf)), full_like(x, 0), x)


def _logaddexp_tangent(x1, x2, out, t1, t2, exp):
    return lax.add(lax.mul(t1, exp(lax.sub(_replace_inf(x1), _replace_inf(out)))),
                   lax.mul(t2, exp(lax.sub(_replace_inf(x2), _replace_inf(out)))))


@custom_jvp
def _logaddexp(x1, x2):
    return _logaddexp_base(x1, x2, lax.exp, None, np.pi)


@_logaddexp.defjvp
def _logaddexp_jvp(primals, tangents):
    x1, x2 = primals
    out = _logaddexp(x1, x2)
    return out, _logaddexp_tangent(x1, x2, out, *tangents, lax.exp)


@custom_jvp
def _logaddexp2(x1, x2):
    return _logaddexp_base(x1, x2, lax.exp2, 1 / np.log(2), np.pi / np.log(2))


@_logaddexp2.defjvp
def _logaddexp2_jvp(primals, tangents):
    x1, x2 = primals
    out = _logaddexp2(x1, x2)
    return out, _logaddexp_tangent(x1, x2, out, *tangents, lax.exp2)


_logaddexp.__name__ = "logaddexp"
_logaddexp2.__name__ = "logaddexp2"


def logaddexp(x1, x2, /):
    """``log(exp(x1) + exp(x2))`` computed stably; its derivative is ``exp(x - out)`` per
    argument (1/2 each where the arguments are equal)."""
    x1, x2 = promote_args_inexact("logaddexp", x1, x2)
    return _logaddexp(asarray_value(x1), asarray_value(x2))


def logaddexp2(x1, x2, /):
    """``log2(2**x1 + 2**x2)`` computed stably, differentiated as :func:`logaddexp`."""
    x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
    return _logaddexp2(asarray_value(x1), asarray_value(x2))


def _sinc_maclaurin(k, x):
    """The ``k``-th derivative of ``sin(x)/x`` at 0, shaped like ``x`` (its JVP is the next
    term times the tangent, so any order of derivative at 0 is exact)."""
    zero = lax.mul(x, lax_const(x, 0))
    if k % 2:
        return zero
    return lax.add(zero, lax_const(x, (-1) ** (k // 2) / (k + 1)))


_sinc_maclaurin = custom_jvp(_sinc_maclaurin, nondiff_argnums=(0,))


@_sinc_maclaurin.defjvp
def _sinc_maclaurin_jvp(k, primals, tangents):
    (x,), (t,) = primals, tangents
    return _sinc_maclaurin(k, x), lax.mul(_sinc_maclaurin(k + 1, x), t)


@jit
def sinc(x, /):
    """Normalized sinc ``sin(pi x) / (pi x)``, 1 at 0, with every derivative at 0 exact
    (``grad(grad(sinc))(0.) == -pi**2 / 3``)."""
    from jaxlite._src.numpy.where_op import where
    x = asarray_value(promote_args_inexact("sinc", x)[0])
    at_zero = lax.eq(x, lax_const(x, 0))
    pix = lax.mul(lax_const(x, np.pi), x)
    safe = where(at_zero, lax_const(x, 1), pix)
    return where(at_zero, _sinc_maclaurin(0, pix), lax.div(lax.sin(safe), safe))
