"""jax.numpy sorting and searching (the parts built so far)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.errors import ConcretizationTypeError
from jaxlite._src.core.trace import Tracer
from jaxlite._src.numpy.util import asarray_value
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["nonzero", "flatnonzero", "argwhere"]


def nonzero(a, *, size=None, fill_value=None):
    """Indices of nonzero elements, one array per dimension (concrete inputs, or a static
    ``size`` under tracing)."""
    a = asarray_value(a)
    if isinstance(a, Tracer):
        raise ConcretizationTypeError(
            a, "The size argument of jnp.nonzero must be statically specified to use "
               "jnp.nonzero within JAX transformations.")
    idx = np.nonzero(np.asarray(a._value))
    out = []
    for i in idx:
        i = i.astype(np.int32)
        if size is not None:
            fv = 0 if fill_value is None else fill_value
            i = np.concatenate([i[:size], np.full(max(0, size - len(i)), fv, np.int32)])
        out.append(ArrayImpl(i, False))
    return tuple(out)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of nonzero elements of the flattened array."""
    from jaxlite._src.numpy.shape_ops import ravel
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """Indices of nonzero elements as an (N, ndim) array."""
    from jaxlite._src.numpy.shape_ops import stack
    a = asarray_value(a)
    return stack(nonzero(a, size=size, fill_value=fill_value), axis=1) if a.ndim else \
        stack(nonzero(a.reshape(1), size=size, fill_value=fill_value), axis=1)
