"""jax.numpy.linalg (the parts built so far): norms and products."""
from __future__ import annotations

import numpy as np

from jaxlite._src.numpy.linalg_ops import matmul, outer, tensordot, trace, vecdot  # noqa: F401
from jaxlite._src.numpy.shape_ops import matrix_transpose  # noqa: F401
from jaxlite._src.numpy.util import asarray_value, promote_dtypes_inexact

__all__ = ["norm", "vector_norm", "matrix_norm", "matmul", "outer", "tensordot", "trace",
           "vecdot", "matrix_transpose"]


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """Vector p-norm over ``axis`` (all elements when None)."""
    from jaxlite._src.numpy import reductions as r
    from jaxlite._src.numpy import ufuncs as u
    (x,) = promote_dtypes_inexact(asarray_value(x))
    a = u.abs(x)
    if ord == np.inf:
        return r.max(a, axis=axis, keepdims=keepdims)
    if ord == -np.inf:
        return r.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return r.sum(u.not_equal(a, 0).astype(a.dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return r.sum(a, axis=axis, keepdims=keepdims)
    if ord == 2:
        return u.sqrt(r.sum(u.real(u.multiply(x, u.conj(x))), axis=axis, keepdims=keepdims))
    return u.power(r.sum(u.power(a, float(ord)), axis=axis, keepdims=keepdims), 1.0 / ord)


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """Matrix norm over the last two axes ('fro', 1, -1, inf, -inf)."""
    from jaxlite._src.numpy import reductions as r
    from jaxlite._src.numpy import ufuncs as u
    x = asarray_value(x)
    if ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims)
    a = u.abs(x)
    if ord in (1, -1):
        s = r.sum(a, axis=-2, keepdims=keepdims)
        return (r.max if ord == 1 else r.min)(s, axis=-1, keepdims=keepdims)
    if ord in (np.inf, -np.inf):
        s = r.sum(a, axis=-1, keepdims=keepdims)
        return (r.max if ord == np.inf else r.min)(s, axis=-2 if keepdims else -1,
                                                   keepdims=keepdims)
    raise NotImplementedError(f"matrix_norm ord={ord} is not supported yet in jaxlite")


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm, as ``numpy.linalg.norm``."""
    x = asarray_value(x)
    if axis is None:
        if ord is None:
            return vector_norm(x, axis=None, keepdims=keepdims)
        axis = tuple(range(x.ndim))
    if isinstance(axis, int) or len(axis) == 1:
        return vector_norm(x, axis=axis, keepdims=keepdims, ord=2 if ord is None else ord)
    return matrix_norm(x, keepdims=keepdims, ord="fro" if ord is None else ord)
