"""Type annotations of ``jax.typing``: ``ArrayLike``, ``DTypeLike`` and their parts.

``ArrayLike`` is what jaxlite converts to an array implicitly (its arrays and tracers, NumPy
arrays and NumPy or Python scalars; not lists, not strings); ``DTypeLike`` what names a dtype
(a string, a scalar type, a NumPy dtype, or an object with a ``dtype`` attribute). Both are
``typing.Union`` objects, so ``isinstance(x, ArrayLike)`` works at run time.
"""
from __future__ import annotations

import enum
import typing
from collections.abc import Sequence
from types import EllipsisType
from typing import Any, Protocol, Union

import numpy as np

from jaxlite._src.runtime.array import Array

__all__ = ["Array", "ArrayLike", "DTypeLike", "DType", "StaticScalar", "SupportsDType",
           "Shape", "DimSize", "DuckTypedArray", "ExtendedDType", "Index", "DLDeviceType"]

DType = np.dtype
ExtendedDType = Any


@typing.runtime_checkable
class SupportsDType(Protocol):
    """Anything with a ``dtype`` attribute (``jnp.float32``, an array)."""

    @property
    def dtype(self, /) -> DType: ...


class DuckTypedArray(Protocol):
    """Anything with ``shape`` and ``dtype`` (``ShapeDtypeStruct``, an array)."""

    @property
    def dtype(self) -> DType: ...

    @property
    def shape(self) -> tuple: ...


StaticScalar = Union[np.bool_, np.number, bool, int, float, complex]
ArrayLike = Union[Array, np.ndarray, StaticScalar]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
DimSize = Union[int, Any]
Shape = Sequence[DimSize]
AnyInt = Union[int, np.integer]
StaticIndex = Union[AnyInt, slice, EllipsisType]
Index = Union[StaticIndex, None, Sequence[AnyInt], Array, np.ndarray]


class DLDeviceType(enum.IntEnum):
    """Device kinds of the DLPack protocol."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10
