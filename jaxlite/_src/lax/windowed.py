"""lax.reduce_window: windowed reductions (pooling).

``reduce_window(x, init, lax.add/lax.max/lax.min, ...)`` with the monoid's identity as
``init`` binds reduce_window_sum / _max / _min, as JAX. Any other computation (or init
value, or a pytree of operands) is reduced with the computation applied elementwise to the
window taps of the padded operands: traceable, differentiable and batchable through the
lax ops it is made of (JAX binds its generic ``reduce_window`` primitive there instead).
"""
from __future__ import annotations

import itertools

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.prims.operands import asarray_value
from jaxlite._src.prims.windowed import (max_identity, min_identity, reduce_window_max_p,
                                         reduce_window_min_p, reduce_window_shape_tuple,
                                         reduce_window_sum_p, select_and_gather_add_p,
                                         select_and_scatter_add_p)

__all__ = ["reduce_window", "reduce_window_shape_tuple", "reduce_window_sum_p",
           "reduce_window_max_p", "reduce_window_min_p", "select_and_gather_add_p",
           "select_and_scatter_add_p"]


def _concrete_scalar(x):
    """The value of a concrete rank-0 ``x``, or None when it is traced or not a scalar."""
    if isinstance(x, Tracer):
        return None
    try:
        v = np.asarray(x)
    except Exception:
        return None
    return v if v.shape == () else None


def _dilate(w, d):
    return tuple(0 if k == 0 else 1 + r * (k - 1) for k, r in zip(w, d))


def _params(window_dimensions, window_strides, padding, base_dilation, window_dilation):
    wd = tuple(int(d) for d in window_dimensions)
    return dict(window_dimensions=wd,
                window_strides=tuple(int(s) for s in window_strides),
                padding=tuple((int(lo), int(hi)) for lo, hi in padding),
                base_dilation=tuple(int(d) for d in base_dilation),
                window_dilation=tuple(int(d) for d in window_dilation))


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce each window of ``operand`` with ``computation`` starting from ``init_value``.

    ``padding``: 'VALID', 'SAME', 'SAME_LOWER' or ``(low, high)`` pairs (padded positions
    hold ``init_value``); ``base_dilation`` inserts holes into the operand,
    ``window_dilation`` into the window. ``operand``/``init_value`` may be matching pytrees
    (``computation`` then maps pairs of pytrees to a pytree)."""
    from jaxlite._src.lax import elementwise as lax_ew
    from jaxlite._src.lax.convolution import padtype_to_pads
    from jaxlite._src.lax.generic_reduce import flatten_operands_and_inits
    flat_ops, flat_inits, op_tree = flatten_operands_and_inits(operand, init_value)
    if not flat_ops:
        raise ValueError("reduce_window must have at least one operand.")
    n = len(window_dimensions)
    if isinstance(padding, str):
        wd = window_dimensions if window_dilation is None else _dilate(window_dimensions,
                                                                        window_dilation)
        padding = tuple(padtype_to_pads(np.shape(flat_ops[0]), wd,
                                        window_strides or (1,) * n, padding))
    else:
        padding = tuple((lo, hi) for lo, hi in padding)
    params = _params(window_dimensions, window_strides or (1,) * n, padding,
                     base_dilation or (1,) * n, window_dilation or (1,) * n)
    if len(flat_ops) == 1:
        v = _concrete_scalar(flat_inits[0])
        if v is not None:
            x = flat_ops[0]
            # (as JAX: the init is compared with the identity of its own type, so a
            # Python -inf selects max pooling of integers too)
            dt = np.dtype(dtypes.dtype(flat_inits[0]))
            prim = None
            if computation is lax_ew.add and v == 0:
                prim = reduce_window_sum_p
            elif computation is lax_ew.max and dt.kind in "fciub" and \
                    v == max_identity(dt):
                prim = reduce_window_max_p
            elif computation is lax_ew.min and dt.kind in "fciub" and \
                    v == min_identity(dt):
                prim = reduce_window_min_p
            if prim is not None:
                return prim.bind(x, **params)
    return _generic_reduce_window(flat_ops, flat_inits, op_tree, computation, params)


def _generic_reduce_window(ops, inits, tree, computation, params):
    """Fold ``computation`` over the window taps (strided slices of the padded operands)."""
    from jaxlite._src.lax import shape as lax_shape
    from jaxlite._src.prims.windowed import common_shape_rule
    from jaxlite._src.tree_util import tree_flatten, tree_unflatten
    ops = [asarray_value(o) for o in ops]
    inits = [asarray_value(i) for i in inits]
    if any(o.dtype != i.dtype for o, i in zip(ops, inits)):
        raise TypeError("reduce_window got inconsistent dtypes for operands and init_values:"
                        f" got operand dtypes {[o.dtype for o in ops]} and init_value dtypes "
                        f"{[i.dtype for i in inits]}.")
    if any(i.ndim != 0 for i in inits):
        raise TypeError("reduce_window expected init_values to be scalars but init_values "
                        f"have shapes {[tuple(i.shape) for i in inits]}.")
    if any(tuple(o.shape) != tuple(ops[0].shape) for o in ops):
        raise ValueError("reduce_window operands must have the same shape, got "
                         f"{[tuple(o.shape) for o in ops]}.")
    out_shape = common_shape_rule(ops[0], params["window_dimensions"],
                                  params["window_strides"], params["padding"],
                                  params["base_dilation"], params["window_dilation"])
    cfg = [(lo, hi, d - 1) for (lo, hi), d in zip(params["padding"], params["base_dilation"])]
    padded = [lax_shape.pad(o, i, cfg) for o, i in zip(ops, inits)]
    acc = [lax_shape.broadcast_in_dim(i, out_shape, ()) for i in inits]
    if 0 in out_shape:
        return tree_unflatten(tree, acc)
    ws, wdil = params["window_strides"], params["window_dilation"]
    for tap in itertools.product(*[range(k) for k in params["window_dimensions"]]):
        start = [t * d for t, d in zip(tap, wdil)]
        limit = [st + (o - 1) * s + 1 if o else st for st, o, s in zip(start, out_shape, ws)]
        taps = [lax_shape.slice(p, start, limit, ws) for p in padded]
        res = computation(tree_unflatten(tree, acc), tree_unflatten(tree, taps))
        acc, res_tree = tree_flatten(res)
        if res_tree != tree:
            raise ValueError("reduce_window output must have the same tree structure as the "
                             f"operands {tree} vs. {res_tree}")
    return tree_unflatten(tree, acc)
