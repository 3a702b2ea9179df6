"""``jax.interpreters.batching``: the batching rule tables and the helpers JAX offers to
fill them, over jaxlite's batch trace (``not_mapped`` is None, as in JAX)."""
from __future__ import annotations

from jaxlite._src.extend.primitive import (
    AxisData, axis_primitive_batchers, fancy_primitive_batchers, primitive_batchers)
from jaxlite._src.interpreters.batching import BatchTrace, BatchTracer
from jaxlite._src.prims.base import broadcast_batcher as _broadcast_batcher
from jaxlite._src.prims.batch_util import bdim_at_front, moveaxis, not_mapped

__all__ = ["primitive_batchers", "axis_primitive_batchers", "fancy_primitive_batchers",
           "AxisData", "not_mapped", "BatchTrace", "BatchTracer", "bdim_at_front",
           "moveaxis", "defvectorized", "defbroadcasting", "broadcast"]


def defvectorized(prim):
    """``prim`` acts on each element independently (one operand): batching keeps the
    operand's batch dimension."""
    def rule(args, dims, **params):
        return prim.bind(*args, **params), dims[0]
    primitive_batchers[prim] = rule


def defbroadcasting(prim):
    """``prim`` is elementwise with broadcasting: operands are aligned on a batch dimension
    (jaxlite's elementwise batching rule)."""
    def rule(axis_size, args, dims, **params):
        return _broadcast_batcher(prim, axis_size, args, dims, params)
    fancy_primitive_batchers[prim] = lambda axis_data, args, dims, **params: rule(
        axis_data.size, args, dims, **params)


def broadcast(x, sz, axis, mesh_axis=None):
    """``x`` repeated ``sz`` times along a new dimension ``axis``."""
    from jaxlite._src.prims.batch_util import broadcast_batch
    return broadcast_batch(x, sz, axis)
