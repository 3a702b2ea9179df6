"""Batching (vmap): the batch trace, and batching whole functions and jaxprs.

A ``BatchTracer`` holds a value with one extra dimension, ``bdim`` (None: not batched). Each
primitive's ``batch(axis_size, args, dims, **params) -> (out, out_dim)`` rule says how to run
it on batched operands; a primitive without one falls back to a loop over the batch (correct,
but slow: the fallback is reported once per primitive at debug log level). The helpers rules
use (``moveaxis``, ``bdim_at_front``, ``loop_batch``, ...) come from ``prims/batch_util.py``.
"""
from __future__ import annotations


from jaxlite._src.core.avals import ShapedArray, aval_of_value
from jaxlite._src.core.trace import Trace, Tracer, check_leaks, ctx, set_current_trace
# The helpers the batching rules use live with the rules (prims/batch_util.py).
from jaxlite._src.prims.batch_util import (  # noqa: F401
    _rule_ctx, bdim_at_front, broadcast_batch, loop_batch, moveaxis, not_mapped,
    per_device_batching)

__all__ = ["BatchTrace", "BatchTracer", "not_mapped", "moveaxis", "bdim_at_front",
           "per_device_batching", "batch_jaxpr", "batch_jaxpr_keep_dims", "batch_jaxpr_to",
           "batch_fun", "broadcast_batch", "loop_batch"]


class BatchTracer(Tracer):
    """A batched value: ``val`` carries the batch along dimension ``bdim``."""
    __slots__ = ("val", "bdim")

    def __init__(self, trace, val, bdim):
        self._trace = trace
        self.val = val
        self.bdim = bdim

    @property
    def aval(self):
        a = aval_of_value(self.val)
        if self.bdim is None:
            return a
        shape = a.shape[:self.bdim] + a.shape[self.bdim + 1:]
        if type(a) is not ShapedArray:      # (a batched ref)
            return a.update(shape=shape)
        return ShapedArray(shape, a.dtype, a.weak_type)

    def _provenance(self):
        v = self.val
        return v._provenance() if isinstance(v, Tracer) else ""


class BatchTrace(Trace):
    """Applies batching rules; ``axis_name`` names the mapped axis for collectives.

    ``per_device``: the batch axis stands for devices that each run their own program (the
    batched form of a pmap/shard_map, ``prims/shard_map_batched.py``), so every element
    must get the bits its device's own program gives. A primitive whose order of
    operations depends on its operand's shape either says so (``batch_changes_order``: a
    matmul of a stack is another BLAS call), and then runs once per element
    (``loop_batch``), each on that device's own operand; or its rule asks
    ``per_device_batching()`` and keeps each element's order in one batched equation (a
    float sum whose leading axes are marked as devices)."""
    __slots__ = ("axis_size", "axis_name", "spmd_axis_name", "per_device")

    def __init__(self, parent, axis_size, axis_name=None, spmd_axis_name=None,
                 per_device=False):
        super().__init__(parent)
        self.axis_size = axis_size
        self.axis_name = axis_name
        self.spmd_axis_name = spmd_axis_name
        self.per_device = per_device

    def lift(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.bdim
        return x, None

    def process_primitive(self, prim, args, params):
        vals, dims = [], []
        for a in args:
            v, d = self.lift(a)
            vals.append(v)
            dims.append(d)
        collective = getattr(prim, "collective", False) and self.axis_name is not None and \
            self.axis_name in _axes_of(params)
        prev_axis, prev_dev = _rule_ctx.axis_name, _rule_ctx.per_device
        with set_current_trace(self.parent):
            if not collective and not prim.batch_always and all(d is None for d in dims):
                return prim.bind(*vals, **params)
            rule = prim.batch
            _rule_ctx.axis_name, _rule_ctx.per_device = self.axis_name, self.per_device
            try:
                if collective:
                    out, out_dims = prim.batch_collective(self, vals, dims, **params)
                elif rule is None or (self.per_device and self._changes_order(prim, vals,
                                                                              dims, params)):
                    out, out_dims = loop_batch(prim, self.axis_size, vals, dims, params,
                                               report=rule is None)
                else:
                    out, out_dims = rule(self.axis_size, vals, dims, **params)
            finally:
                _rule_ctx.axis_name, _rule_ctx.per_device = prev_axis, prev_dev
        if prim.multiple_results:
            return [self.pack(o, d) for o, d in zip(out, out_dims)]
        return self.pack(out, out_dims)

    def _changes_order(self, prim, vals, dims, params):
        """Whether ``prim``'s batching rule could compute some element in another order of
        operations than ``prim`` on that element alone (``Primitive.batch_changes_order``,
        given the elements' avals)."""
        ask = getattr(prim, "batch_changes_order", None)
        if ask is None:
            return False
        avals = []
        for v, d in zip(vals, dims):
            a = aval_of_value(v)
            if d is not None:
                a = a.update(shape=a.shape[:d] + a.shape[d + 1:])
            avals.append(a)
        return bool(ask(self.axis_size, avals, dims, **params))

    def pack(self, v, d):
        if d is None:
            return v
        return BatchTracer(self, v, d)

    def unpack(self, x):
        if isinstance(x, BatchTracer) and x._trace is self:
            return x.val, x.bdim
        return x, None


def _axes_of(params):
    ax = params.get("axes", params.get("axis_name", ()))
    return ax if isinstance(ax, tuple) else (ax,)


# ----------------------------------------------------------------------------- functions

def batch_fun(fun, axis_size, in_vals, in_dims, out_dims=None, axis_name=None,
              spmd_axis_name=None, per_device=None):
    """Run ``fun`` (flat lists) batched. Returns (outs, out_dims); when ``out_dims`` is given
    the outputs are moved (or broadcast) to those dimensions (None: must be unbatched).
    ``per_device`` (see ``BatchTrace``) defaults to that of the batch trace whose rule is
    running (a body a rule batches belongs to the same devices)."""
    if per_device is None:
        per_device = _rule_ctx.per_device
    trace = BatchTrace(ctx.trace, axis_size, axis_name, spmd_axis_name, per_device)
    tracers = [BatchTracer(trace, v, d) if d is not None else v
               for v, d in zip(in_vals, in_dims)]
    with set_current_trace(trace):
        outs = fun(*tracers)
    pairs = [trace.unpack(o) for o in outs]
    del tracers, outs
    check_leaks(trace, "BatchTrace")
    if out_dims is None:
        return [p for p, _ in pairs], [d for _, d in pairs]
    res = []
    for (v, d), want in zip(pairs, out_dims):
        if want is None:
            if d is not None:
                raise ValueError("vmap has mapped output but out_axes is None")
            res.append(v)
        elif d is None:
            res.append(broadcast_batch(v, axis_size, want))
        else:
            res.append(moveaxis(v, d, want))
    return res, list(out_dims)


def batch_jaxpr(closed, axis_size, in_dims, axis_name=None, per_device=None):
    """``closed`` batched: a ClosedJaxpr taking the inputs batched along ``in_dims`` (None:
    unbatched) and returning every output batched along dimension 0. ``axis_name`` and
    ``per_device`` (see ``BatchTrace``) default to those of the batch trace whose rule is
    running."""
    return _batch_jaxpr(closed, axis_size, in_dims, axis_name, [0] * len(closed.out_avals),
                        per_device)[0]


def batch_jaxpr_keep_dims(closed, axis_size, in_dims, axis_name=None):
    """``closed`` batched, its outputs left where the batching rules put them (None:
    unbatched), as JAX batches a ``jit`` call: returns (ClosedJaxpr, out_dims)."""
    return _batch_jaxpr(closed, axis_size, in_dims, axis_name, None)


def batch_jaxpr_to(closed, axis_size, in_dims, out_dims, axis_name=None):
    """``closed`` batched, each output moved (or broadcast) to its dimension in ``out_dims``
    (None: the output must come out unbatched, else ValueError)."""
    return _batch_jaxpr(closed, axis_size, in_dims, axis_name, list(out_dims))[0]


def _batch_jaxpr(closed, axis_size, in_dims, axis_name, want_dims, per_device=None):
    axis_name = axis_name if axis_name is not None else _rule_ctx.axis_name
    per_device = per_device if per_device is not None else _rule_ctx.per_device
    from jaxlite._src.core.ir import ClosedJaxpr
    from jaxlite._src.interpreters.eval import eval_jaxpr
    from jaxlite._src.interpreters.staging import trace_to_jaxpr
    avals = []
    for a, d in zip(closed.in_avals, in_dims):
        if d is None:
            avals.append(a)
        else:
            shape = list(a.shape)
            shape.insert(d, axis_size)
            avals.append(ShapedArray(shape, a.dtype, a.weak_type) if type(a) is ShapedArray
                         else a.update(shape=tuple(shape)))

    got = []

    def fun(*args):
        outs, dims = batch_fun(lambda *xs: eval_jaxpr(closed.jaxpr, closed.consts, *xs),
                               axis_size, list(args), list(in_dims), want_dims, axis_name,
                               per_device=per_device)
        got[:] = dims
        return outs

    jaxpr, _, consts = trace_to_jaxpr(fun, avals)
    return ClosedJaxpr(jaxpr, consts), list(got)

