"""Python and NumPy values as operands of primitives.

``asarray_value(x)`` is how every layer above the primitives (lax, the transformations'
argument handling, jax.numpy) turns an argument into a jaxlite array or tracer before binding:
Python scalars stay weakly typed, NumPy values take their canonical dtype.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.runtime import guards

__all__ = ["asarray_value", "py_int_array"]

_py_scalars = (int, float, complex, bool)


def py_int_array(x, dtype):
    """A Python int as an array of ``dtype``, as JAX: it must fit the default int type
    (int32, or int64 with x64) and then wraps around into ``dtype`` (int8 + 300 is 44)."""
    default = dtypes.default_int_dtype()
    info = np.iinfo(default)
    if not info.min <= x <= info.max:
        raise OverflowError(f"Python int {x} too large to convert to {default}")
    return np.asarray(x, default).astype(dtype)


def asarray_value(x):
    """``x`` as a jaxlite array or tracer (Python scalars stay weakly typed)."""
    t = type(x)
    if t is ArrayImpl or isinstance(x, Tracer):
        return x
    if guards.active[0] and (t in _py_scalars or isinstance(x, (np.ndarray, np.generic))):
        guards.check_host_to_device(x)   # jax.transfer_guard: an implicit transfer
    if t in _py_scalars:
        if t is int and not -2147483648 <= x <= 2147483647:
            return ArrayImpl(py_int_array(x, dtypes.default_int_dtype()), True)
        return ArrayImpl(np.asarray(x, dtypes.python_scalar_dtype(x)), t is not bool)
    if isinstance(x, (np.ndarray, np.generic)):
        return ArrayImpl(np.asarray(x, dtypes.canonicalize_dtype(x.dtype)), False)
    if isinstance(x, ArrayImpl):
        return x
    if t in dtypes.extended_array_types:   # a key array is already an array
        return x
    if hasattr(x, "__jax_array__"):
        return asarray_value(x.__jax_array__())
    raise TypeError(f"Value {x!r} of type {t} is not a valid JAX array type")
