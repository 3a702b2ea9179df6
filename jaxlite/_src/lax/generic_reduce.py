"""lax.reduce with an arbitrary computation, approx_max_k/approx_min_k, optimization_barrier
and small helpers (lax.dtype, lax.broadcast_shapes). (lax.cumlogsumexp is a scan of
jnp.logaddexp, so it lives with that in ``numpy/ufuncs.py``.)

``reduce(x, init, lax.add/mul/max/min/bitwise_*, dims)`` with the monoid's identity as
``init`` binds reduce_sum / _prod / _max / _min / _and / _or / _xor, as JAX does. Any other
computation (or a pytree of operands) is folded pairwise over the reduced elements (log-depth,
like XLA's reduce it assumes the computation is associative and commutative), built from lax
ops so it traces, differentiates and batches.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer
from jaxlite._src.prims.operands import asarray_value

__all__ = ["reduce", "approx_max_k", "approx_min_k", "optimization_barrier",
           "dtype", "broadcast_shapes"]


def dtype(x):
    """The canonical dtype of ``x`` (an array, scalar or dtype-like): float32 for a Python
    float or a NumPy float64 unless x64 is enabled, as ``jax.lax.dtype``."""
    return dtypes.canonicalize_dtype(dtypes.dtype(x))


def broadcast_shapes(*shapes):
    """The shape NumPy broadcasting gives to arrays of the given shapes (also
    ``jnp.broadcast_shapes``); ValueError if they are incompatible."""
    if not shapes:
        return ()
    shapes = [(s,) if isinstance(s, (int, np.integer)) else tuple(s) for s in shapes]
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        dims = [s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0]
        non1 = {int(d) for d in dims if d != 1}
        if len(non1) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        out.append(non1.pop() if non1 else 1)
    return tuple(out)


def _identity_reducer(computation, init, dt):
    """The reduce_* monoid primitive wrapper for ``computation`` with identity ``init``."""
    from jaxlite._src.lax import elementwise as ew
    from jaxlite._src.lax import reductions as red
    from jaxlite._src.prims.windowed import max_identity, min_identity
    if isinstance(init, Tracer):
        return None
    v = np.asarray(init)
    if v.shape != ():
        return None
    if computation is ew.add and v == 0:
        return red.reduce_sum
    if computation is ew.mul and v == 1:
        return red.reduce_prod
    if computation is ew.max and v == max_identity(dt):
        return red.reduce_max
    if computation is ew.min and v == min_identity(dt):
        return red.reduce_min
    if dt.kind in "iub":
        ones = np.array(-1).astype(dt) if dt.kind != "b" else np.array(True)
        if computation is ew.bitwise_and and v == ones:
            return red.reduce_and
        if computation is ew.bitwise_or and v == 0:
            return red.reduce_or
        if computation is ew.bitwise_xor and v == 0:
            return red.reduce_xor
    return None


def flatten_operands_and_inits(operands, init_values):
    """Flatten matching pytrees of operands and initial values (``lax.reduce``,
    ``lax.reduce_window``): (operand leaves, init leaves, treedef), or JAX's ValueError."""
    from jaxlite._src.tree_util import tree_flatten
    flat_ops, op_tree = tree_flatten(operands)
    flat_inits, init_tree = tree_flatten(init_values)
    if op_tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{op_tree} vs. {init_tree}")
    if len(flat_ops) != len(flat_inits):
        raise ValueError("Must have same total number of operands as init_values: "
                         f" {len(flat_ops)} vs. {len(flat_inits)}")
    return flat_ops, flat_inits, op_tree


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """Reduce ``operands`` over ``dimensions`` with ``computation`` starting from
    ``init_values`` (matching pytrees of arrays and scalars); ``out_sharding`` is accepted
    and ignored."""
    from jaxlite._src.tree_util import tree_unflatten
    flat_ops, flat_inits, op_tree = flatten_operands_and_inits(operands, init_values)
    dims = tuple(int(d) for d in dimensions)
    if len(flat_ops) == 1:
        x = flat_ops[0]
        reducer = _identity_reducer(computation, flat_inits[0], np.dtype(dtypes.dtype(x)))
        if reducer is not None:
            return tree_unflatten(op_tree, [reducer(asarray_value(x), dims)])
    ops = [asarray_value(o) for o in flat_ops]
    inits = [asarray_value(i) for i in flat_inits]
    if any(o.dtype != i.dtype for o, i in zip(ops, inits)):
        raise TypeError("reduce: operand and init_value dtypes must match, got "
                        f"{[o.dtype for o in ops]} and {[i.dtype for i in inits]}")
    if any(i.ndim != 0 for i in inits):
        raise TypeError("reduce: init_values must be scalars, got shapes "
                        f"{[tuple(i.shape) for i in inits]}")
    shape = tuple(ops[0].shape)
    if any(tuple(o.shape) != shape for o in ops):
        raise ValueError(f"reduce: operands must have the same shape, got "
                         f"{[tuple(o.shape) for o in ops]}")
    if len(set(dims)) != len(dims) or any(not 0 <= d < len(shape) for d in dims):
        raise ValueError(f"reduce: invalid dimensions {dims} for operands of shape {shape}")
    return _pairwise_reduce(ops, inits, op_tree, computation, dims, shape)


def _pairwise_reduce(ops, inits, tree, computation, dims, shape):
    from jaxlite._src.lax import shape as lax_shape
    from jaxlite._src.tree_util import tree_flatten, tree_unflatten
    keep = tuple(d for d in range(len(shape)) if d not in dims)
    out_shape = tuple(shape[d] for d in keep)
    n = int(np.prod([shape[d] for d in dims], dtype=np.int64))
    # reduced dimensions first, flattened into one
    xs = [lax_shape.reshape(lax_shape.transpose(o, dims + keep), (n,) + out_shape)
          for o in ops]

    def apply(a, b):
        res, res_tree = tree_flatten(computation(tree_unflatten(tree, a),
                                                 tree_unflatten(tree, b)))
        if res_tree != tree:
            raise ValueError("reduce: the computation must return the operands' tree "
                             f"structure {tree}, got {res_tree}")
        return res
    while n > 1:
        if n % 2:
            xs = [lax_shape.concatenate(
                [x, lax_shape.broadcast_in_dim(i, (1,) + out_shape, ())], 0)
                for x, i in zip(xs, inits)]
            n += 1
        evens = [lax_shape.slice(x, (0,) * x.ndim, x.shape, (2,) + (1,) * len(out_shape))
                 for x in xs]
        odds = [lax_shape.slice(x, (1,) + (0,) * len(out_shape), x.shape,
                                (2,) + (1,) * len(out_shape)) for x in xs]
        xs = apply(evens, odds)
        n //= 2
    acc = [lax_shape.broadcast_in_dim(i, out_shape, ()) for i in inits]
    if n == 0:
        return tree_unflatten(tree, acc)
    return tree_unflatten(tree, apply(acc, [lax_shape.reshape(x, out_shape) for x in xs]))


def _approx_k(operand, k, reduction_dimension, aggregate_to_topk, largest):
    from jaxlite._src.lax import elementwise as ew
    from jaxlite._src.lax.sort import top_k
    if not dtypes.issubdtype(dtypes.dtype(operand), np.floating):
        raise ValueError("operand must be a floating type")
    if not aggregate_to_topk:
        raise NotImplementedError("approx_max_k/approx_min_k: aggregate_to_topk=False "
                                  "(TPU-specific partial results) is not supported.")
    if largest:
        return top_k(operand, k, axis=reduction_dimension)
    vals, idx = top_k(ew.neg(operand), k, axis=reduction_dimension)
    return ew.neg(vals), idx


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` largest values and their indices along ``reduction_dimension``. On the CPU
    JAX computes them exactly, and so does jaxlite (recall 1 meets any ``recall_target``)."""
    return _approx_k(operand, k, reduction_dimension, aggregate_to_topk, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
    """The ``k`` smallest values and their indices along ``reduction_dimension`` (exact,
    as :func:`approx_max_k`)."""
    return _approx_k(operand, k, reduction_dimension, aggregate_to_topk, False)


def optimization_barrier(operand, /):
    """Returns ``operand`` (any pytree) unchanged, through the ``optimization_barrier``
    primitive: a scheduling hint that stops the compiler from moving or merging
    computations across it (speed and memory only, never values)."""
    from jaxlite._src.prims.misc_ops import optimization_barrier_p
    from jaxlite._src.prims.operands import asarray_value
    leaves, tree = tree_util.tree_flatten(operand)
    if not leaves:
        return operand
    return tree_util.tree_unflatten(
        tree, optimization_barrier_p.bind(*[asarray_value(x) for x in leaves]))
