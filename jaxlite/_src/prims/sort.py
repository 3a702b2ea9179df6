"""Sorting primitives: ``sort`` (several operands sorted lexicographically by the first
``num_keys``) and ``top_k`` (the k largest entries along an axis and their int32 indices).

Orders follow XLA as JAX uses it:

* ``sort`` compares floats with -0.0 == 0.0 and every NaN (either sign) equal and after
  +inf; complex keys compare by (real, imag) with that float order on each part. The values
  themselves are not canonicalised: the output is a permutation of the input. We always sort
  stably (``is_stable=False`` allows any order of equal keys, so stable is correct too).
* ``top_k`` uses XLA's raw total order instead: -NaN < -inf < ... < -0.0 < 0.0 < ... < +inf
  < +NaN, descending, equal entries by increasing index.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive, aval_nbytes, eager_operand
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import moveaxis
from jaxlite._src.prims.gather import GatherDimensionNumbers, bind_gather
from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["sort_p", "top_k_p"]


def _sort_key(x):
    """The NumPy arrays whose lexicographic order is JAX's sort order of ``x``.

    NumPy's own float comparison already makes -0.0 equal 0.0 and puts all NaNs (equal to
    each other) last; complex splits into real and imaginary keys (NumPy's complex order
    would put every value with a NaN imaginary part after the others). Floats NumPy cannot
    compare natively (bfloat16 & co) are widened to float32, which keeps their order.
    """
    if x.dtype.kind == "c":
        return _sort_key(np.real(x)) + _sort_key(np.imag(x))
    return [x if _native(x.dtype) else x.astype(np.float32)]


def _native(dt):
    """Whether NumPy compares ``dt`` itself (ml_dtypes floats it does not)."""
    return dt.kind in "biu" or dt in (np.float16, np.float32, np.float64)


def sort_permutation(operands, dimension, num_keys):
    """Indices sorting ``operands`` (lexicographically by the first ``num_keys``) along
    ``dimension``, stably."""
    keys = [k for op in operands[:num_keys] for k in _sort_key(np.asarray(op))]
    if len(keys) == 1:
        return np.argsort(keys[0], axis=dimension, kind="stable")
    return np.lexsort(keys[::-1], axis=dimension)


class Sort(Primitive):
    """Sort ``operands`` (equal shapes, any dtypes) along ``dimension`` by the first
    ``num_keys`` of them (the first key primary); the others follow the same permutation."""
    name = "sort"
    multiple_results = True


    def cost(self, avals_in, avals_out, literals, **params):
        """XLA's ``sort``: n * ceil(log2 n) flops for the n elements of the operands (a
        comparison sort's count, as HloCostAnalysis assumes)."""
        n = int(np.prod(avals_in[0].shape, dtype=np.int64))
        flops = n * (max(n - 1, 0)).bit_length()
        return [(flops, 0, [aval_nbytes(a) for a in avals_in],
                 sum(aval_nbytes(a) for a in avals_out))]

    def sharding_rule(self, avals, dimension, is_stable, num_keys):
        return [tuple(range(a.ndim)) for a in avals]

    def whole_dims(self, avals, dimension, is_stable, num_keys):
        """The sorted dimension is computed whole (then split as the operands were)."""
        return [(dimension,)] * len(avals)

    def explicit_whole_message(self, aval, k, dimension, **_):
        """JAX's error for a sorted dimension split in an operand's type (Explicit axes)."""
        return (f"Arguments to sort must be unsharded over the sorting dimension. Got arg "
                f"sharding={aval.sharding} and sorting dimension={dimension}.")

    def batch(self, size, args, dims, dimension, is_stable, num_keys):
        # every operand gets the first batched operand's batch dim (broadcast if unbatched)
        from jaxlite._src.prims.shape import broadcast_in_dim_p
        bd, proto = next((d, a) for a, d in zip(args, dims) if d is not None)
        shape = tuple(u.aval(proto).shape)
        keep = tuple(i for i in range(len(shape)) if i != bd)
        ops = [broadcast_in_dim_p.bind(a, shape=shape, broadcast_dimensions=keep, sharding=None)
               if d is None else moveaxis(a, d, bd) for a, d in zip(args, dims)]
        outs = self.bind(*ops, dimension=dimension + (bd <= dimension), is_stable=is_stable,
                         num_keys=num_keys)
        return outs, [bd] * len(outs)

    def jvp(self, primals, tangents, dimension, is_stable, num_keys):
        # sort an iota along with the operands and gather the tangents by that permutation
        shape = tuple(u.aval(primals[0]).shape)
        idx_dt = np.dtype(np.uint64 if max(shape, default=0) > np.iinfo(np.uint32).max
                          else np.uint32)
        outs = self.bind(*primals, u.broadcasted_iota(idx_dt, shape, dimension),
                         dimension=dimension, is_stable=is_stable, num_keys=num_keys)
        idx = u.expand_dims(outs[-1], (len(shape),))
        tangents_out = [t if u.is_zero(t) else _gather_along(t, idx, dimension)
                        for t in tangents]
        return list(outs[:-1]), tangents_out

    def impl(self, *operands, dimension, is_stable, num_keys):
        if len(operands) == 1 and _native(operands[0].dtype):
            return [np.sort(operands[0], axis=dimension, kind="stable")]
        perm = sort_permutation(operands, dimension, num_keys)
        return [np.take_along_axis(np.asarray(o), perm, axis=dimension) for o in operands]

    def abstract_eval(self, *avals, dimension, is_stable, num_keys):
        if not avals:
            raise TypeError("Sort requires at least one operand")
        if any(a.shape != avals[0].shape for a in avals[1:]):
            shapes = " ".join(str(a.shape) for a in avals)
            raise TypeError(f"Arguments to sort must have equal shapes, got: {shapes}")
        ndim = len(avals[0].shape)
        if not 0 <= dimension < ndim:
            raise ValueError(f"axis {dimension} is out of bounds for array of dimension "
                             f"{ndim}")
        if not 1 <= num_keys <= len(avals):
            raise ValueError(f"num_keys={num_keys} must be between 1 and "
                             f"len(operand)={len(avals)}")
        return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals]

    def eager(self, args, params):
        outs = Primitive.eager(self, args, params)
        # each output keeps its own operand's weak type (the generic rule shares one flag)
        weak = [a.weak_type if type(a) is ArrayImpl else eager_operand(a)[1] for a in args]
        return [o if o.weak_type == w else ArrayImpl(o._value, w)
                for o, w in zip(outs, weak)]

    def lower_py(self, ctx, ins, dimension, is_stable, num_keys):
        return None  # the dtype decides the method: call impl

    def pp_params(self, params):
        return [(k, params[k]) for k in ("dimension", "is_stable", "num_keys")]


def _total_order_key(x):
    """An integer array ordered like ``x`` in XLA's total order (see the module doc)."""
    kind = x.dtype.kind
    if kind == "b":
        return x.astype(np.uint8)
    if kind in "iu":
        return x
    if x.dtype.itemsize == 2:
        i = x.view(np.int16)
    elif x.dtype.itemsize == 4:
        i = x.view(np.int32)
    elif x.dtype.itemsize == 8:
        i = x.view(np.int64)
    else:  # 8-bit floats: widen (exact) and use float32's bits
        return _total_order_key(x.astype(np.float32))
    mag = np.array(np.iinfo(i.dtype).max, i.dtype)
    return np.where(i < 0, i ^ mag, i)


class TopK(Primitive):
    """The ``k`` largest entries of ``operand`` along ``axis`` in decreasing order, and
    their int32 indices (ties: lower index first)."""
    name = "top_k"
    multiple_results = True

    def sharding_rule(self, avals, k, axis):
        """Both results keep the operand's layout; ``axis`` is computed whole."""
        return [tuple(range(avals[0].ndim))]

    def whole_dims(self, avals, k, axis):
        return [(axis,)]

    def explicit_sharding_rule(self, avals, dims, k, axis):
        """Over Explicit axes both results keep the operand's sharding, except along
        ``axis``, which must not be split."""
        from jaxlite._src.sharding.types import ShardingTypeError
        d = dims[0]
        if d[axis]:
            raise ShardingTypeError(
                f"The input should be unsharded over the axis along which to compute the top_k "
                f"values. Got input type {avals[0].str_short(False)} and axis {axis}; reshard "
                f"it first (jax.sharding.reshard).")
        return [d, d]

    def batch(self, size, args, dims, k, axis):
        bd = dims[0]
        return self.bind(args[0], k=k, axis=axis + (bd <= axis)), [bd, bd]

    def jvp(self, primals, tangents, k, axis):
        (x,), (t,) = primals, tangents
        vals, idx = self.bind(x, k=k, axis=axis)
        if u.is_zero(t):
            return [vals, idx], [u.Zero.like(vals), u.Zero.like(idx)]
        shape = tuple(u.aval(idx).shape)
        gidx = u.reshape(idx, shape + (1,))
        return [vals, idx], [_gather_along(t, gidx, axis, mode=None), u.Zero.like(idx)]

    def impl(self, x, k, axis):
        # ~key decreases as key grows (no overflow); the stable sort keeps ties in order
        order = np.argsort(~_total_order_key(x), axis=axis, kind="stable")
        idx = np.take(order, np.arange(k), axis=axis)
        return [np.take_along_axis(x, idx, axis=axis), idx.astype(np.int32)]

    def abstract_eval(self, x, k, axis):
        if x.dtype.kind == "c":
            raise ValueError("top_k is not compatible with complex inputs.")
        if k < 0:
            raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
        if len(x.shape) == 0:
            raise TypeError(f"top_k operand must have >= 1 dimension, got {x.shape}")
        if not 0 <= axis < len(x.shape):
            raise ValueError(f"axis argument out of range: axis={axis} for "
                             f"operand.shape={x.shape}")
        shape = list(x.shape)
        if shape[axis] < k:
            raise ValueError("k argument to top_k must be no larger than size along axis;"
                             f" got k={k} with shape={shape} and axis={axis}")
        int32_max = np.iinfo(np.int32).max
        if shape[axis] > int32_max + 1:
            raise ValueError(
                "top_k returns int32 indices, which will overflow for array dimensions "
                f"larger than the maximum int32 ({int32_max}). Got operand.shape={x.shape}")
        shape[axis] = k
        return [ShapedArray(tuple(shape), x.dtype, x.weak_type),
                ShapedArray(tuple(shape), np.dtype(np.int32), False)]

    def eager(self, args, params):
        vals, idx = Primitive.eager(self, args, params)
        return [vals, idx if not idx.weak_type else ArrayImpl(idx._value, False)]

    def lower_py(self, ctx, ins, k, axis):
        return None

    def pp_params(self, params):
        return [("axis", params["axis"]), ("k", params["k"])]


def _gather_along(t, idx, dimension, mode="promise_in_bounds"):
    """``t`` gathered along ``dimension`` at ``idx`` (``idx`` has a trailing unit axis; the
    other dimensions are batch dimensions), as JAX's sort/top_k JVPs."""
    rank = u.aval(t).ndim
    batch = tuple(d for d in range(rank) if d != dimension)
    dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(dimension,),
                                start_index_map=(dimension,), operand_batching_dims=batch,
                                start_indices_batching_dims=batch)
    return bind_gather(t, idx, dn, (1,) * rank, mode=mode)


sort_p = Sort()
top_k_p = TopK()
