"""Partitionable Threefry samples computed shard by shard.

With ``jax_threefry_partitionable`` element ``i`` of a sample depends only on the key and
``i``, so a device can draw its block of a sharded sample by hashing the counters of its
block alone: ``draw_block`` (used eagerly by ``random.*(..., out_sharding=)``), and under
jit the ``threefry_sample_block`` primitive, which the partitioner puts in the per-device
program in place of a whole ``threefry_sample`` whose result is laid out by
``out_sharding`` (the block's start indices come from the device's mesh coordinates).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.random import kernels as K

__all__ = ["draw_block", "threefry_sample_block_p", "partition_sample"]

_U32 = np.dtype(np.uint32)


def draw_block(k0, k1, kind, shape, dtype, bounds, table=None):
    """The block ``bounds`` ((start, stop) per dimension) of the sample of ``shape`` drawn
    with the key (``k0``, ``k1``): the same values as that block of the whole sample."""
    from jaxlite._src.random.fused import _consumer
    counters = np.ravel_multi_index(
        np.meshgrid(*[np.arange(a, b) for a, b in bounds], indexing="ij"), shape) \
        if shape else np.zeros((), np.int64)
    cnt = np.asarray(counters).astype(_U32).ravel()
    out = np.empty(cnt.size, dtype)
    consume = _consumer(kind, dtype, out, table)
    s = K.scratch()
    for c in range(0, cnt.size, K.CHUNK):
        e = min(c + K.CHUNK, cnt.size)
        b1, b2 = s.get("b1", _U32, e - c), s.get("b2", _U32, e - c)
        K.hash_chunk(k0, k1, np.uint32(0), cnt[c:e], b1, b2, s.get("tmp", _U32, e - c))
        consume(c, e, b1, b2, s)
    return out.reshape(tuple(b - a for a, b in bounds))


def _table_for(kind):
    from jaxlite._src.random import fused as F
    if kind == "normal" and F._TABLE_ON and F._table[0] is not None:
        return F.normal_table()
    return None


class ThreefrySampleBlock(Primitive):
    """``threefry_sample_block[kind, shape, block, dtype](key, *starts)``: the block of
    size ``block`` starting at ``starts`` (int32 scalars, one per dimension) of the
    partitionable sample ``threefry_sample[kind, shape, dtype](key)`` of one raw key
    (uint32[2]), or of each key of a batch (uint32[..., 2])."""
    name = "threefry_sample_block"
    jvp = NOT_DIFFERENTIABLE
    weak_rule = "never"

    def impl(self, key, *starts, kind, shape, block, dtype):
        key = np.asarray(key, _U32)
        bounds = [(int(s), int(s) + b) for s, b in zip(starts, block)]
        table = _table_for(kind)
        keys = key.reshape(-1, 2)
        outs = [draw_block(int(k[0]), int(k[1]), kind, tuple(shape), np.dtype(dtype), bounds,
                           table) for k in keys]
        return np.stack(outs).reshape(key.shape[:-1] + tuple(block))

    def abstract_eval(self, key, *starts, kind, shape, block, dtype):
        if key.dtype != _U32 or not key.shape or key.shape[-1] != 2:
            raise TypeError(f"threefry_sample_block takes uint32[..., 2] keys, got "
                            f"{key.str_short()}")
        if len(starts) != len(shape) or len(block) != len(shape) or \
                any(s.shape != () for s in starts):
            raise TypeError(f"threefry_sample_block takes one scalar start index per "
                            f"dimension of its sample shape {tuple(shape)}, got "
                            f"{len(starts)}")
        if kind not in ("bits", "uniform", "normal"):
            raise ValueError(f"threefry_sample_block: unknown kind {kind!r}")
        return ShapedArray(tuple(key.shape[:-1]) + tuple(block), np.dtype(dtype))

    def batch(self, size, args, dims, **params):
        key, starts = args[0], args[1:]
        if any(d is not None for d in dims[1:]):
            raise NotImplementedError(
                "threefry_sample_block: the start indices of a sharded sample's block cannot "
                "be batched (vmap the sampler over keys instead).")
        d = dims[0]
        if d != 0:
            from jaxlite._src.prims.batch_util import moveaxis
            key = moveaxis(key, d, 0)
        return self.bind(key, *starts, **params), 0


threefry_sample_block_p = ThreefrySampleBlock()


def partition_sample(builder, eqn, ins, mesh_spec):
    """The partitioner's rule for a ``threefry_sample`` asked to lay its result out by a
    ``sharding`` (``random.*(..., out_sharding=)`` under jit): each device draws its own
    block (None: the generic rule, the whole sample)."""
    from jaxlite._src.prims.collectives import axis_index_p
    from jaxlite._src.prims.elementwise import mul_p
    p = eqn.params
    sharding = p.get("sharding")
    (key, kdims), = ins
    shape = tuple(p["shape"])
    if sharding is None or p["kind"] == "keys" or eqn.invars[0].aval.shape != (2,):
        return None
    dims = mesh_spec(None, sharding, len(shape))
    if dims is None or not any(dims):
        return None
    block = []
    for n, axes in zip(shape, dims):
        f = builder.factor(axes)
        if n % f:
            return None
        block.append(n // f)
    if any(kdims):
        key, _ = builder.replicate(key, kdims, "threefry_sample needs its whole key",
                                   eqn.source_info)
    starts = []
    for axes, b in zip(dims, block):
        if not axes:
            starts.append(np.int32(0))
            continue
        idx = axis_index_p.bind(axis_name=axes if len(axes) > 1 else axes[0])
        starts.append(mul_p.bind(idx, np.int32(b)))
    y = threefry_sample_block_p.bind(key, *starts, kind=p["kind"], shape=shape,
                                     block=tuple(block), dtype=p["dtype"])
    return [(y, tuple(dims))]
