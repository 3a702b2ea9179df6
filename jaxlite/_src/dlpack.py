"""``jax.dlpack``: exchanging arrays with other libraries through the DLPack protocol.

jaxlite arrays implement ``__dlpack__``/``__dlpack_device__`` (they export their NumPy
buffer, on the CPU); ``from_dlpack`` imports any object that implements the protocol.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from jaxlite._src.numpy.windows_io import from_dlpack

__all__ = ["from_dlpack", "is_supported_dtype", "SUPPORTED_DTYPES"]

SUPPORTED_DTYPES = frozenset(np.dtype(d) for d in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
    np.bool_))


def is_supported_dtype(dtype):
    """Whether arrays of ``dtype`` can be exchanged through DLPack."""
    return np.dtype(dtype) in SUPPORTED_DTYPES
