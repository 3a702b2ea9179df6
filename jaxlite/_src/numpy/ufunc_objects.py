"""The jax.numpy functions that are ``jnp.ufunc`` objects in JAX (``add``, ``multiply``,
``maximum``, ``logaddexp``, ...): the same elementwise functions as in ufuncs.py, wrapped so
they also have ``reduce``, ``accumulate``, ``at``, ``reduceat`` and ``outer`` with JAX's fast
paths (``jnp.add.reduce`` is ``jnp.sum``, ``jnp.maximum.accumulate`` a cumulative max, ...).

Library code keeps calling the plain functions in ufuncs.py; only the public namespace
exports these objects."""
from __future__ import annotations

import numpy as np

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.numpy import cumulative
from jaxlite._src.numpy import reductions as red
from jaxlite._src.numpy import ufuncs as uf
from jaxlite._src.numpy.extra_indexing import ufunc
from jaxlite._src.numpy.util import check_arraylike, promote_dtypes_inexact

__all__ = ["add", "subtract", "multiply", "negative", "maximum", "minimum", "logaddexp",
           "logaddexp2", "logical_and", "logical_or", "logical_xor", "bitwise_and",
           "bitwise_or", "bitwise_xor"]


def _bool_safe_at(method):
    """``jnp.add.at``/``jnp.multiply.at``: booleans accumulate as int32, as JAX."""
    def at(a, indices, b):
        from jaxlite._src.numpy.util import asarray_value
        a = asarray_value(a)
        if a.dtype == np.bool_:
            a = a.astype(np.int32)
            b = lax.convert_element_type(b, np.bool_).astype(np.int32)
            return getattr(a.at[indices], method)(b).astype(np.bool_)
        return getattr(a.at[indices], method)(b)
    return at


def _subtract_at(a, indices, b):
    from jaxlite._src.numpy.util import asarray_value
    return asarray_value(a).at[indices].subtract(b)


def _cumulative(name, lax_fn):
    """``ufunc.accumulate`` for maximum/minimum: a cumulative max/min along ``axis``."""
    def accumulate(a, axis=0, dtype=None):
        from jaxlite._src.numpy.util import asarray_value, canonicalize_axis
        check_arraylike(f"{name}.accumulate", a)
        a = asarray_value(a)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        out = lax_fn(a, canonicalize_axis(axis, a.ndim))
        return out if dtype is None else out.astype(dtype)
    return accumulate


def _logsumexp(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``jnp.logaddexp.reduce``: log(sum(exp(a))) without overflow (JAX's formulation)."""
    from jaxlite._src.api.custom_derivatives import stop_gradient
    from jaxlite._src.lax import shape as lax_shape
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.logaddexp.reduce is not "
                                  "supported.")
    check_arraylike("logsumexp", a)
    (a,) = promote_dtypes_inexact(a)
    dims = red._reduction_axes(a, axis)
    amax = red.max(uf.real(a), axis=dims, keepdims=keepdims, where=where, initial=-np.inf)
    amax = stop_gradient(lax.select(lax.is_finite(amax), amax, lax_shape.full_like(amax, 0)))
    amax_dims = amax if keepdims else lax_shape.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a, amax_dims.astype(a.dtype)))
    sumexp = red.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    result = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    return result if initial is None else uf.logaddexp(initial, result)


def _logsumexp2(a, axis=None, dtype=None, out=None, keepdims=False, initial=None,
                where=None):
    """``jnp.logaddexp2.reduce``: log2(sum(2 ** a)) via logsumexp."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.logaddexp2.reduce is not "
                                  "supported.")
    check_arraylike("logsumexp2", a)
    ln2 = float(np.log(2))
    if initial is not None:
        initial = initial * ln2
    return uf.true_divide(_logsumexp(uf.multiply(a, ln2), axis=axis, keepdims=keepdims,
                                     where=where, initial=initial), ln2)


def _extremum(name):
    """``jnp.maximum.reduce``/``jnp.minimum.reduce``: jnp.max/min taking ``dtype`` too."""
    init = -np.inf if name == "max" else np.inf

    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        return red._reduce(a, name, name, init, has_identity=False,
                           axis=red._optional_axes(axis), dtype=dtype, out=out,
                           keepdims=keepdims, initial=initial, where=where)
    reduce.__name__ = f"_reduce_{name}"
    return reduce


def _binary(func, identity, **kw):
    return ufunc(func, 2, 1, name=func.__name__, call=func, identity=identity, **kw)


add = _binary(uf.add, 0, reduce=red.sum, accumulate=cumulative.cumsum, at=_bool_safe_at("add"))
multiply = _binary(uf.multiply, 1, reduce=red.prod, accumulate=cumulative.cumprod,
                   at=_bool_safe_at("multiply"))
subtract = _binary(uf.subtract, None, at=_subtract_at)
maximum = _binary(uf.maximum, None, reduce=_extremum("max"),
                  accumulate=_cumulative("maximum", lax_red.cummax))
minimum = _binary(uf.minimum, None, reduce=_extremum("min"),
                  accumulate=_cumulative("minimum", lax_red.cummin))
logaddexp = _binary(uf.logaddexp, -np.inf, reduce=_logsumexp)
logaddexp2 = _binary(uf.logaddexp2, -np.inf, reduce=_logsumexp2)
logical_and = _binary(uf.logical_and, True, reduce=red.reduce_logical_and)
logical_or = _binary(uf.logical_or, False, reduce=red.reduce_logical_or)
logical_xor = _binary(uf.logical_xor, False, reduce=red.reduce_logical_xor)
bitwise_and = _binary(uf.bitwise_and, -1, reduce=red.reduce_bitwise_and)
bitwise_or = _binary(uf.bitwise_or, 0, reduce=red.reduce_bitwise_or)
bitwise_xor = _binary(uf.bitwise_xor, 0, reduce=red.reduce_bitwise_xor)
negative = ufunc(uf.negative, 1, 1, name="negative", call=uf.negative)
