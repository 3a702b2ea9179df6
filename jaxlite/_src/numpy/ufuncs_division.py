"""jax.numpy's division family with JAX's semantics: floor division and remainders of
integers (by zero too: XLA's quotient -1 and remainder x, corrected by the signs as JAX
does), and of floats through one CPython-style float divmod (so ``1 // 0.1`` is 9)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.api.jit import jit
from jaxlite._src.core import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax.shape import full_like
from jaxlite._src.numpy.util import asarray_value, check_arraylike, promote_args_numeric

__all__ = ["floor_divide", "remainder", "mod", "fmod", "divmod"]


def _is_int(x):
    return dtypes.issubdtype(x.dtype, np.integer)


def _promote(name, x, y):
    """``x`` and ``y`` promoted (JAX's rules) and broadcast to one shape (the selects below
    take operands of one shape)."""
    x, y = promote_args_numeric(name, x, y)
    if np.shape(x) != np.shape(y) and np.ndim(x) and np.ndim(y):
        # (a scalar stays a scalar operand, as JAX's lax scalar promotion leaves it)
        from jaxlite._src.numpy.shape_ops import broadcast_arrays
        x, y = broadcast_arrays(x, y)
    return x, y


def _const(x, value):
    """``value`` as a scalar of ``x``'s dtype (a literal in jaxprs, as JAX's constants)."""
    return asarray_value(np.asarray(value, x.dtype))


def _minus_one(x):
    """``x - 1`` as JAX's bodies write it (a Python 1: ``x``'s weak type kept)."""
    from jaxlite._src.numpy.util import promote_args
    return lax.sub(*promote_args("subtract", x, 1))


def _where(c, x, y):
    """jnp.where (its ``_where`` jit under a trace, as JAX's bodies call it)."""
    from jaxlite._src.numpy.where_op import where
    return where(c, x, y)


def _floor_divide(x, y):
    """Elementwise floor division (Python semantics for negative numbers; as JAX, an
    integer divided by zero gives -1, or -2 where its sign differs from zero's)."""
    x, y = _promote("floor_divide", x, y)
    if dtypes.issubdtype(x.dtype, np.unsignedinteger):
        return lax.div(x, y)
    if _is_int(x):
        q = lax.div(x, y)
        fix = lax.bitwise_and(lax.ne(lax.sign(x), lax.sign(y)),
                              lax.ne(lax.rem(x, y), _const(x, 0)))
        return _where(fix, _minus_one(q), q)
    if dtypes.issubdtype(x.dtype, np.complexfloating):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x, y)[0]


def _float_divmod(x, y):
    """Floor quotient and remainder of floats as CPython's float divmod computes them:
    the quotient from ``x - fmod(x, y)`` (exact); JAX's operations in JAX's order."""
    mod = lax.rem(x, y)
    div = lax.div(_where(lax.eq(y, _const(y, 0)), x, lax.sub(x, mod)), y)
    fix = lax.bitwise_and(lax.ne(mod, _const(mod, 0)), lax.ne(lax.sign(y), lax.sign(mod)))
    mod = lax.select(fix, lax.add(mod, y), mod)
    div = lax.select(fix, _minus_one(div), div)
    return lax.round(div), mod


def _nonzero_divisor(y):
    """An integer divisor with its zeros replaced by 1 (JAX's remainders by zero are 0)."""
    return _where(lax.eq(y, _const(y, 0)), full_like(y, 1), y)


def _remainder(x, y):
    """Elementwise remainder with the sign of the divisor (Python ``%``; an integer
    remainder by zero is 0, as JAX's)."""
    x, y = _promote("remainder", x, y)
    if _is_int(y):
        y = _nonzero_divisor(y)
    r = lax.rem(x, y)
    zero = _const(r, 0)
    nonzero = lax.ne(r, zero)
    fix = lax.bitwise_and(lax.ne(lax.lt(r, zero), lax.lt(y, zero)), nonzero)
    return lax.select(fix, lax.add(r, y), r)


def _fmod(x1, x2):
    """Elementwise C-style remainder (sign of the dividend; an integer remainder by zero
    is 0, as JAX's: the divisor's zeros replaced before the promotion)."""
    check_arraylike("fmod", x1, x2)
    x1, x2 = asarray_value(x1), asarray_value(x2)
    if dtypes.issubdtype(dtypes.result_type(x1, x2), np.integer):
        x2 = _nonzero_divisor(x2)
    x1, x2 = _promote("fmod", x1, x2)
    return lax.rem(x1, x2)


def _divmod(x1, x2):
    """``(floor_divide(x1, x2), remainder(x1, x2))`` (for floats both from one CPython-style
    float divmod, as JAX)."""
    x1, x2 = _promote("divmod", x1, x2)
    if _is_int(x1):
        return floor_divide(x1, x2), remainder(x1, x2)
    if dtypes.issubdtype(x1.dtype, np.complexfloating):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)


def _public(body, name, doc):
    """The public function: ``body`` under ``jit``, named ``name`` (as JAX jit-wraps its
    division functions: a jaxpr holds one ``jit[name=...]`` equation, and an eager call runs
    as one compiled program)."""
    def f(x1, x2, /):
        return body(x1, x2)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return jit(f)


floor_divide = _public(_floor_divide, "floor_divide", _floor_divide.__doc__)
remainder = _public(_remainder, "remainder", _remainder.__doc__)


def mod(x1, x2, /):
    """Alias of ``remainder`` (whose jit it calls, as JAX's)."""
    return remainder(x1, x2)


fmod = _public(_fmod, "fmod", _fmod.__doc__)
divmod = _public(_divmod, "divmod", _divmod.__doc__)
