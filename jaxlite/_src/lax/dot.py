"""lax contractions: dot_general, dot, batch_matmul."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.prims.dot import dot_general_p
from jaxlite._src.prims.precision import (Precision, DotAlgorithm, DotAlgorithmPreset,
                                          canonicalize_precision, check_cpu_precision)
from jaxlite._src.api.sharding_types import place_as
from jaxlite._src.sharding.types import resolve_out_sharding

__all__ = ["dot_general", "dot", "batch_matmul", "Precision", "DotAlgorithm",
           "DotAlgorithmPreset", "DotDimensionNumbers", "PrecisionLike"]

# typing aliases of jax.lax
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]
PrecisionLike = Union[None, str, Precision, tuple[str, str], tuple[Precision, Precision],
                      DotAlgorithm, DotAlgorithmPreset]


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                *, out_sharding=None):
    """General contraction; ``dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(i) for i in lc), tuple(int(i) for i in rc)),
          (tuple(int(i) for i in lb), tuple(int(i) for i in rb)))
    if preferred_element_type is None:
        preferred_element_type = dtypes.result_type(lhs, rhs)
    s = resolve_out_sharding(out_sharding)
    precision = canonicalize_precision(precision)
    check_cpu_precision(precision)
    out = dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                             preferred_element_type=dtypes.canonicalize_dtype(
                                 preferred_element_type), out_sharding=s)
    return out if s is None else place_as(out, s)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """Vector/matrix product of 1-D or 2-D operands, or a ``dot_general`` when
    ``dimension_numbers`` are given; ``out_sharding`` lays out the result."""
    if dimension_numbers is None:
        lshape, rshape = np.shape(lhs), np.shape(rhs)
        if 1 <= len(lshape) <= 2 and 1 <= len(rshape) <= 2 and lshape[-1] == rshape[0]:
            dimension_numbers = (((len(lshape) - 1,), (0,)), ((), ()))
        else:
            raise ValueError(
                "jax.lax.dot: dimension_numbers must be specified when not performing simple"
                " un-batched matrix-matrix, matrix-vector, or vector-vector products;"
                f" got lhs_shape={lshape} rhs_shape={rshape}")
    return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                       out_sharding=out_sharding)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix multiply over leading dimensions."""
    nd = np.ndim(lhs)
    b = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (b, b)), precision)
