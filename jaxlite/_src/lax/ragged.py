"""``lax.ragged_dot`` / ``ragged_dot_general``: matrix products whose lhs is split into
consecutive groups (mixture-of-experts layers).

Written with dot_general over a one-hot group mask, so every transformation (grad, vmap,
jit) follows from the rules of the primitives it binds. Group ``j`` covers the indices
``[sum(group_sizes[:j]), sum(group_sizes[:j+1]))`` of the lhs ragged dimension; indices past
``sum(group_sizes)`` belong to no group and give zeros, as in JAX. The cost is that of
``g`` dense products (fine on the CPU for the expert counts MoE layers use).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.lax.dot import dot_general
from jaxlite._src.lax.elementwise import bitwise_and, convert_element_type, ge, lt, mul, sub
from jaxlite._src.lax.reductions import cumsum, reduce_sum
from jaxlite._src.lax.shape import broadcast_in_dim, broadcasted_iota, transpose
from jaxlite._src.prims.operands import asarray_value

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
    """The dot dimension numbers of a ragged dot (``((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch))``), the lhs ragged dimension and the rhs group dimension (empty
    unless the ragged dimension is a non-contracting one)."""
    dot_dimension_numbers: tuple
    lhs_ragged_dimensions: tuple
    rhs_group_dimensions: tuple

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        object.__setattr__(self, "dot_dimension_numbers",
                           tuple(tuple(map(tuple, t)) for t in dot_dimension_numbers))
        object.__setattr__(self, "lhs_ragged_dimensions", tuple(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", tuple(rhs_group_dimensions))


_BASIC = RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """``[m, k] x [g, k, n] -> [m, n]``: rows ``[start_j, start_j + group_sizes[j])`` of
    ``lhs`` are multiplied by ``rhs[j]`` (rows past ``sum(group_sizes)`` give zeros)."""
    return ragged_dot_general(lhs, rhs, group_sizes, _BASIC, precision,
                              preferred_element_type, group_offset, out_sharding)


def _group_mask(group_sizes, size, dtype):
    """[g, size] one-hot: entry (j, i) is 1 when index i lies in group j."""
    gs = convert_element_type(asarray_value(group_sizes), np.int32)
    g = gs.shape[0]
    end = cumsum(gs, 0)
    start = sub(end, gs)
    idx = broadcasted_iota(np.int32, (g, size), 1)
    inside = bitwise_and(ge(idx, broadcast_in_dim(start, (g, size), (0,))),
                         lt(idx, broadcast_in_dim(end, (g, size), (0,))))
    return convert_element_type(inside, dtype)


def _masked_lhs(lhs, mask, ragged):
    """[g, *lhs.shape]: lhs times the group mask along its ragged dimension."""
    g = mask.shape[0]
    shape = (g,) + tuple(lhs.shape)
    return mul(broadcast_in_dim(lhs, shape, tuple(range(1, lhs.ndim + 1))),
               broadcast_in_dim(mask, shape, (0, ragged + 1)))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """Ragged matrix product with dot_general's dimension numbers; the lhs ragged dimension
    is a non-contracting dimension (rhs then has a group dimension: ``[b, m, k] x
    [g, b, k, n] -> [b, m, n]``), a contracting one (``-> [g, b, m, n]``: one product per
    group of the contraction) or a batch one (``-> [b, m, n]``). ``group_sizes`` has shape
    ``[g]``."""
    if out_sharding is not None:
        raise NotImplementedError("ragged_dot_general: out_sharding is not supported in "
                                  "jaxlite; lay the result out afterwards with "
                                  "jax.sharding.reshard.")
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported in "
                                  "jaxlite (as on JAX's CPU backend); leave it None.")
    dn = ragged_dot_dimension_numbers
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError("ragged_dot_general expects a RaggedDotDimensionNumbers, got "
                        f"{type(dn).__name__}")
    lhs, rhs = asarray_value(lhs), asarray_value(rhs)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general requires exactly one lhs ragged dimension, got "
                        f"{list(dn.lhs_ragged_dimensions)}")
    ragged = dn.lhs_ragged_dimensions[0] % lhs.ndim
    if np.ndim(group_sizes) != 1:
        raise NotImplementedError("ragged_dot_general: group_sizes must have shape [g] "
                                  f"in jaxlite, got shape {np.shape(group_sizes)}")
    g = np.shape(group_sizes)[0]
    dt = preferred_element_type or dtypes.result_type(lhs, rhs)
    mask = _group_mask(group_sizes, lhs.shape[ragged], lhs.dtype)
    masked = _masked_lhs(lhs, mask, ragged)          # group axis 0, lhs dims shifted by 1
    lc1, lb1 = tuple(d + 1 for d in lc), tuple(d + 1 for d in lb)
    if ragged in lc:                                  # mode 2: one product per group
        if dn.rhs_group_dimensions:
            raise TypeError("ragged_dot_general: rhs_group_dimensions must be empty when "
                            "the lhs ragged dimension is contracting")
        out = dot_general(masked, rhs, ((lc1, tuple(rc)), (lb1, tuple(rb))), precision, dt)
        # layout: batch dims, then the group axis (first lhs free dim), then the rest
        nb = len(lb)
        perm = (nb,) + tuple(range(nb)) + tuple(range(nb + 1, out.ndim))
        return transpose(out, perm)
    if ragged in lb:                                  # mode 3: groups only mask the batch
        if dn.rhs_group_dimensions:
            raise TypeError("ragged_dot_general: rhs_group_dimensions must be empty when "
                            "the lhs ragged dimension is a batch dimension")
        covered = reduce_sum(mask, (0,))
        shape = tuple(lhs.shape)
        lhs_m = mul(lhs, broadcast_in_dim(covered, shape, (ragged,)))
        return dot_general(lhs_m, rhs, ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))),
                           precision, dt)
    # mode 1: the group axis is a batch dimension shared with rhs's group dimension
    if len(dn.rhs_group_dimensions) != 1:
        raise TypeError("ragged_dot_general: rhs must have one group dimension when the lhs "
                        "ragged dimension is a non-contracting one")
    gd = dn.rhs_group_dimensions[0] % rhs.ndim
    if rhs.shape[gd] != g:
        raise TypeError(f"ragged_dot_general: rhs group dimension has size {rhs.shape[gd]} "
                        f"but group_sizes has {g} groups")
    out = dot_general(masked, rhs, ((lc1, tuple(rc)), ((0,) + lb1, (gd,) + tuple(rb))),
                      precision, dt)
    return reduce_sum(out, (0,))
