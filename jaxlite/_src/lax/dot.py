"""lax contractions: dot_general, dot, batch_matmul."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.prims.dot import dot_general_p

__all__ = ["dot_general", "dot", "batch_matmul", "Precision"]


class Precision:
    """Matmul precision settings (informational on the CPU)."""
    DEFAULT = "DEFAULT"
    HIGH = "HIGH"
    HIGHEST = "HIGHEST"


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                out_sharding=None):
    """General contraction; ``dimension_numbers = ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``."""
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(int(i) for i in lc), tuple(int(i) for i in rc)),
          (tuple(int(i) for i in lb), tuple(int(i) for i in rb)))
    if preferred_element_type is None:
        preferred_element_type = dtypes.result_type(lhs, rhs)
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, precision=precision,
                              preferred_element_type=dtypes.canonicalize_dtype(
                                  preferred_element_type), out_sharding=None)


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Vector/matrix product of 1-D or 2-D operands."""
    lnd, rnd = np.ndim(lhs), np.ndim(rhs)
    return dot_general(lhs, rhs, (((lnd - 1,), (0,)), ((), ())), precision,
                       preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix multiply over leading dimensions."""
    nd = np.ndim(lhs)
    b = tuple(range(nd - 2))
    return dot_general(lhs, rhs, (((nd - 1,), (nd - 2,)), (b, b)), precision)
