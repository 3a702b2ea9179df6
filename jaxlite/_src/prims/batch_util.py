"""Helpers the primitives' batching rules (and the batching interpreter) are written with.

A batched operand carries its batch along dimension ``bdim`` (``not_mapped``: unbatched).
These helpers bind the structural primitives directly, so they work under every trace; they
live here, below both the rules that use them and ``interpreters/batching.py`` (which
re-exports them), so the rules never import the interpreter.
"""
from __future__ import annotations

import logging
import threading

from jaxlite._src.core.avals import aval_of_value

__all__ = ["not_mapped", "moveaxis", "bdim_at_front", "broadcast_batch", "loop_batch",
           "per_device_batching"]

logger = logging.getLogger("jaxlite.vmap")

not_mapped = None


class _RuleCtx(threading.local):
    axis_name = None   # the axis name of the batch trace whose rule is running
    per_device = False  # whether that trace's batch axis stands for devices (see BatchTrace)


# (set by the batching interpreter around each rule it runs)
_rule_ctx = _RuleCtx()


def per_device_batching():
    """Whether the batching rule now running batches over devices that each run their own
    program (``BatchTrace.per_device``: the batched form of a pmap/shard_map), for rules
    that can keep each device's own order of operations in one batched equation."""
    return _rule_ctx.per_device


def _sp():
    from jaxlite._src.prims import shape
    return shape


def moveaxis(x, src, dst):
    """``x`` with dimension ``src`` moved to ``dst`` (a transpose, or nothing)."""
    if src == dst:
        return x
    nd = len(aval_of_value(x).shape)
    perm = [d for d in range(nd) if d != src]
    perm.insert(dst, src)
    return _sp().transpose_p.bind(x, permutation=tuple(perm))


def bdim_at_front(x, bdim, size):
    """``x`` with its batch dimension first; an unbatched ``x`` is broadcast to ``size``."""
    if bdim is None:
        a = aval_of_value(x)
        return _sp().broadcast_in_dim_p.bind(x, shape=(size,) + tuple(a.shape),
                                             broadcast_dimensions=tuple(range(1, 1 + a.ndim)),
                                             sharding=None)
    return moveaxis(x, bdim, 0)


def broadcast_batch(x, size, dim):
    """An unbatched value broadcast along a new batch dimension ``dim``."""
    a = aval_of_value(x)
    shape = list(a.shape)
    shape.insert(dim, size)
    dims = tuple(i for i in range(a.ndim + 1) if i != dim)
    return _sp().broadcast_in_dim_p.bind(x, shape=tuple(shape), broadcast_dimensions=dims,
                                         sharding=None)


_warned: set = set()


def _empty_batch(prim, vals, dims, params):
    """The results of ``prim`` over an empty batch: arrays with a leading dimension of size
    0, shaped by the primitive's abstract evaluation on one element."""
    from jaxlite._src.core.avals import ShapedArray
    avals = []
    for v, d in zip(vals, dims):
        a = aval_of_value(v)
        avals.append(a if d is None else ShapedArray(a.shape[1:], a.dtype, a.weak_type))
    out = prim.abstract_eval(*avals, **params)
    outs = [_empty_of(o) for o in (out if prim.multiple_results else [out])]
    if prim.multiple_results:
        return outs, [0] * len(outs)
    return outs[0], 0


def _empty_of(aval):
    """An array of shape ``(0,) + aval.shape`` and ``aval``'s dtype."""
    import numpy as np

    from jaxlite._src.runtime.array import ArrayImpl
    return ArrayImpl(np.zeros((0,) + tuple(aval.shape), aval.dtype), aval.weak_type)


def loop_batch(prim, size, vals, dims, params, report=True):
    """Batch ``prim`` by running it once per batch element and stacking the results (the
    fallback for primitives without a batching rule, and for rules' rare cases;
    ``report``: log the missing rule once per primitive at debug level)."""
    sp = _sp()
    if report and prim.name not in _warned:
        _warned.add(prim.name)
        logger.debug("vmap: no batching rule for %s; running a loop over the batch",
                     prim.name)
    vals = [moveaxis(v, d, 0) if d is not None else v for v, d in zip(vals, dims)]
    if size == 0:
        return _empty_batch(prim, vals, dims, params)
    results = []
    for i in range(size):
        args = []
        for v, d in zip(vals, dims):
            if d is None:
                args.append(v)
                continue
            shp = aval_of_value(v).shape
            s = sp.slice_p.bind(v, start_indices=(i,) + (0,) * (len(shp) - 1),
                                limit_indices=(i + 1,) + tuple(shp[1:]), strides=None)
            args.append(sp.squeeze_p.bind(s, dimensions=(0,)))
        out = prim.bind(*args, **params)
        results.append(out if prim.multiple_results else [out])

    def stack(parts):
        exp = []
        for p in parts:
            a = aval_of_value(p)
            exp.append(sp.broadcast_in_dim_p.bind(
                p, shape=(1,) + tuple(a.shape), broadcast_dimensions=tuple(range(1, 1 + a.ndim)),
                sharding=None))
        return sp.concatenate_p.bind(*exp, dimension=0)
    n_out = len(results[0])
    outs = [stack([r[k] for r in results]) for k in range(n_out)]
    if prim.multiple_results:
        return outs, [0] * n_out
    return outs[0], 0
