"""Reduction primitives (reduce_sum, reduce_max, ..., argmax/argmin) and cumulative scans."""
from __future__ import annotations

import functools
import math

import numpy as np

from jaxlite._src.config import config
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.ir import Eqn, Literal
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive, aval_nbytes
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.base import check_dtype_kind
from jaxlite._src.prims import taylor
from jaxlite._src.prims.ynn_sum import numba_sum, ynn_sum


def _expand_back(r, x_shape, axes):
    """Broadcast a reduced value ``r`` back to ``x_shape`` (reduced ``axes`` restored)."""
    from jaxlite._src.prims.shape import broadcast_in_dim_p
    kept = tuple(d for d in range(len(x_shape)) if d not in axes)
    return broadcast_in_dim_p.bind(r, shape=tuple(x_shape), broadcast_dimensions=kept,
                                   sharding=None)

__all__ = ["reduce_sum_p", "reduce_prod_p", "reduce_max_p", "reduce_min_p", "reduce_and_p",
           "reduce_or_p", "reduce_xor_p", "argmax_p", "argmin_p", "cumsum_p", "cumprod_p",
           "cummax_p", "cummin_p"]


@functools.lru_cache(maxsize=4096)
def _remembered(name, cls, shape, dtype, axes):
    # (``cls`` keys the cache: the window sizes are its attributes)
    return getattr(cls, name)(shape, dtype, axes)


def _check_axes(name, x, axes):
    for a in axes:
        if not 0 <= a < x.ndim:
            raise ValueError(f"{name}: axis {a} is out of bounds for array of dimension "
                             f"{x.ndim}")
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: duplicate value in 'axes': {axes}")


def _element_and_batch(x, d, size, axes):
    """The summed size of one batch element's reduction, and the batched operand's shape
    and axes (the batch dimension ``size`` long at ``d``)."""
    shape = list(x.shape)
    shape.insert(d, size)
    return math.prod(x.shape[a] for a in axes), tuple(shape), \
        tuple(int(a) + (a >= d) for a in axes)


def _batch_reduce(prim, x, d, axes, params):
    """Reduce over ``axes`` of a value batched at ``d`` (axes shift past the batch dim)."""
    new = tuple(int(a) + (a >= d) for a in axes)
    return prim.bind(x, axes=new, **params), d - sum(1 for a in axes if a < d)


class Reduction(Primitive):
    """Reduce ``operand`` over ``axes`` with the NumPy reduction ``np_fn``."""
    np_fn = None
    kind = "any"
    hidden_params = ()
    # HLO: the binary op of the ``reduce``'s computation (None: a custom-call)
    hlo_op = None

    def cost(self, avals_in, avals_out, literals, **params):
        """XLA's ``reduce``: one flop per element folded in (input size - output size); it
        reads the operand and its scalar initial value."""
        a, out = avals_in[0], avals_out[0]
        n_in = int(np.prod(a.shape, dtype=np.int64))
        n_out = int(np.prod(out.shape, dtype=np.int64))
        return [(n_in - n_out, 0, [aval_nbytes(a), a.dtype.itemsize], aval_nbytes(out))]

    def hlo_identity(self, dtype):
        """The ``reduce``'s initial value for operands of ``dtype``."""
        return 0

    def hlo(self, b, x, axes, out_sharding=None, **_):
        """``reduce(x, identity)`` over ``axes`` with a computation applying ``hlo_op``."""
        if self.hlo_op is None:
            return b.custom_call(self, (x,), dict(axes=axes, out_sharding=out_sharding))
        a, out = b.in_avals[0], b.out_avals[0]
        s = a.update(shape=())
        init = b.scalar(self.hlo_identity(a.dtype), a.dtype)
        comp = b.region(None, [s, s], lambda sub, p: sub.op(self.hlo_op, s, p))
        return b.op("reduce", out, (x, init), "dimensions={" + ",".join(map(str, axes)) + "}",
                    f"to_apply={comp}")

    def impl(self, x, axes, out_sharding=None):
        r = self.np_fn(x, axis=axes)
        return np.asarray(r, x.dtype) if not isinstance(r, np.generic) else x.dtype.type(r)

    def batch(self, size, args, dims, axes, **params):
        return _batch_reduce(self, args[0], dims[0], axes, params)

    def sharding_rule(self, avals, axes, **params):
        """Kept dimensions map to the output in order; reduced ones must not be split."""
        kept = [i for i in range(avals[0].ndim) if i not in axes]
        return [tuple(kept.index(i) if i in kept else None for i in range(avals[0].ndim))]

    def explicit_sharding_rule(self, avals, dims, axes, out_sharding=None, **_):
        """Over Explicit axes: the ``out_sharding`` asked for, else the kept dimensions
        keep their splits."""
        from jaxlite._src.sharding.types import sharding_dims
        nd = avals[0].ndim - len(axes)
        if out_sharding is not None:
            return [sharding_dims(out_sharding, nd)]
        return [tuple(d for k, d in enumerate(dims[0]) if k not in axes)]

    def abstract_eval(self, x, axes, out_sharding=None, **_):
        check_dtype_kind(self.name, self.kind, x.dtype)
        _check_axes(self.name, x, axes)
        return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in axes), x.dtype,
                           x.weak_type)


def _check_f16(dt, shape, axes, aval):
    """jax_allow_f16_reductions=False: a sum over float16/bfloat16 raises (JAX's error)."""
    if dt in (np.float16, dtypes.bfloat16) and not config.jax_allow_f16_reductions and \
            not all(shape[d] == 1 for d in axes):
        aval = aval if aval is not None else ShapedArray(shape, dt)
        raise ValueError(f"reduce_sum on operand {aval.str_short(True)} is not allowed when "
                         "jax_allow_f16_reductions=False.")


class ReduceSum(Reduction):
    """Sum over ``axes``. ``device_axes`` (hidden; only in the batched form of a
    pmap/shard_map): the operand's leading ``device_axes`` axes index devices, and each
    device's block is summed in the order its own program would take (``devices_sum``)."""
    name, kind = "reduce_sum", "num"
    hlo_op = "add"
    # over a split dimension: each device sums its block, then an all-reduce of this
    # computation (the partitioner's psum)
    all_reduce = "add"
    hidden_params = ("device_axes",)

    def abstract_eval(self, x, axes, out_sharding=None, device_axes=0):
        _check_f16(x.dtype, x.shape, axes, x)
        if any(a < device_axes for a in axes):
            raise ValueError(f"reduce_sum: axes {axes} include one of the {device_axes} "
                             "leading device axes")
        return super().abstract_eval(x, axes, out_sharding)

    def batch(self, size, args, dims, axes, out_sharding=None, device_axes=0):
        """vmap's rule (the batch dimension kept where it is); over the devices of a
        pmap/shard_map's batched form (``BatchTrace.per_device``) a float sum gets the
        batch dimension in front as one more device axis, so each device's block is
        summed as its own program sums it (a larger operand would take another order:
        YNNPACK's from ``YNN_MIN_SIZE`` elements on, NumPy's pairwise blocks)."""
        from jaxlite._src.prims.batch_util import per_device_batching
        from jaxlite._src.prims.batch_util import moveaxis
        x, d = args[0], dims[0]
        if per_device_batching() and u.aval(x).dtype.kind in "fc":
            # (every axis a of the unbatched operand is axis a + 1 with the batch in front)
            return self.bind(moveaxis(x, d, 0), axes=tuple(int(a) + 1 for a in axes),
                             out_sharding=out_sharding, device_axes=device_axes + 1), 0
        params = {"out_sharding": out_sharding}
        if device_axes:
            params["device_axes"] = device_axes
        return _batch_reduce(self, x, d, axes, params)

    def check_operands(self, vals, params):
        x = vals[0]
        _check_f16(x.dtype, np.shape(x), params["axes"], None)

    # XLA:CPU's order of a float sum (jaxlib 0.10.2). Its HLO pass TreeReductionRewriter
    # (window 32) rewrites a reduce with a summed dimension longer than 32 into a
    # reduce-window over windows of 32 along every such dimension (padded with zeros,
    # "SAME" padding: the smaller half before) and whole along the other summed
    # dimensions, then a reduce of the result, again until every summed dimension is at
    # most 32. Each window and the last reduce add their elements one by one in row-major
    # order into 0. An operand of 4096 elements or more is instead summed by YNNPACK
    # (a "ynn_fusion"): its blocked, Kahan-compensated order is ``ynn_sum.ynn_sum``.
    TREE_WINDOW = 32
    YNN_MIN_SIZE = 4096

    @classmethod
    def xla_order(cls, shape, dtype, axes):
        """Whether XLA's order of this sum (``xla_sum``) is modelled and can differ from
        NumPy's: a float32/float64 sum of ``YNN_MIN_SIZE`` elements or more (YNNPACK's
        order), or of fewer whose last reduce (after the tree's windows) runs over one
        axis longer than 1. (Remembered per shape, dtype and axes: eager sums ask it on
        every call.)"""
        return _remembered("_xla_order", cls, tuple(shape), np.dtype(dtype), tuple(axes))

    @classmethod
    def _xla_order(cls, shape, dtype, axes):
        if dtype.kind != "f" or dtype.itemsize not in (4, 8) or not axes:
            return False
        size = math.prod(shape)
        if not size or math.prod(shape[a] for a in axes) < 2:
            return False
        return size >= cls.YNN_MIN_SIZE or cls.tree_order(shape, dtype, axes)

    @classmethod
    def tree_order(cls, shape, dtype, axes):
        """Whether XLA's tree of windows (``TREE_WINDOW``) of this float32/float64 sum or
        product is modelled and can differ from NumPy's order: its last reduce (after the
        windows) runs over one axis longer than 1. (A product takes this tree at every
        size: YNNPACK has no product.)"""
        return _remembered("_tree_order", cls, tuple(shape), np.dtype(dtype), tuple(axes))

    @classmethod
    def _tree_order(cls, shape, dtype, axes):
        if dtype.kind != "f" or dtype.itemsize not in (4, 8) or not axes or \
                not math.prod(shape) or math.prod(shape[a] for a in axes) < 2:
            return False
        sizes = [shape[a] for a in axes]
        w = cls.TREE_WINDOW
        if all(s <= w for s in sizes) and math.prod(shape) == math.prod(sizes):
            long = [s for s in sizes if s > 1]
            rows = math.prod(long[:-1])
            # (a whole-operand reduce over two or more axes, no windows: one loop over
            # the rows, the last axis unrolled in it. LLVM vectorizes that row loop (VF
            # lanes of rows, combined by a shuffle tree) only for some shapes; it stays
            # one add after another in row-major order, checked against jaxlib 0.10.2,
            # when the rows are an odd number under 16 (LLVM's tiny trip count with a
            # remainder) or the last axis is 12 or longer)
            if len(long) >= 2 and ((rows % 2 and rows < 16) or long[-1] >= 12):
                return True
        while any(s > w for s in sizes):
            sizes = [-(-s // w) if s > w else 1 for s in sizes]
        # (otherwise a last reduce over two or more axes longer than 1 is vectorized by
        # LLVM for some shapes, whose choice is not modelled)
        return sum(s > 1 for s in sizes) <= 1

    @staticmethod
    def _sequential(x, axes, op=np.add):
        """Sum ``x`` over ``axes`` adding its elements one by one in row-major order of
        the summed axes, from 0. NumPy adds the rows of a C-ordered ``(rows, cols)``
        array over axis 0 one after the other (pairwise summation is only for a
        contiguous summed axis); a single column is a running sum (``accumulate``).
        Adding 0 at the end turns a ``-0.0`` into ``0.0`` as starting from 0 does.
        ``op=np.multiply``: the product from 1 the same way."""
        zero = x.dtype.type(0 if op is np.add else 1)
        if len(axes) == x.ndim:     # (a running sum is one add after another)
            return op(op.accumulate(x.reshape(-1))[-1], zero)
        kept = [d for d in range(x.ndim) if d not in axes]
        out_shape = tuple(x.shape[d] for d in kept)
        rows = math.prod(x.shape[a] for a in axes)
        y = np.transpose(x, tuple(axes) + tuple(kept)).reshape(rows, -1)
        if y.shape[1] < 2:
            return op(op.accumulate(y[:, 0])[-1], zero).reshape(out_shape)
        return op(op.reduce(np.ascontiguousarray(y), axis=0), zero).reshape(out_shape)

    @classmethod
    def _one_axis_sum(cls, x, axes, a, op=np.add):
        """``xla_sum`` where one summed axis ``a`` (at most ``TREE_WINDOW**2`` long) is
        longer than 1, in a few NumPy calls: windows of the zero-padded axis added by
        running sums (``accumulate`` adds one by one), then the partials the same way
        (``op=np.multiply``: padded with ones, running products)."""
        one = x.dtype.type(0 if op is np.add else 1)
        kept = [d for d in range(x.ndim) if d not in axes]
        out_shape = tuple(x.shape[d] for d in kept)
        n, w = x.shape[a], cls.TREE_WINDOW
        y = (x if a == x.ndim - 1 else np.moveaxis(x, a, -1)).reshape(-1, n)
        if n > w:
            m = -(-n // w)
            lo = (m * w - n) // 2
            padded = np.full((y.shape[0], m * w), one, x.dtype)
            padded[:, lo:lo + n] = y
            y = op.accumulate(padded.reshape(-1, m, w), axis=2)[:, :, -1]
        out = op(op.accumulate(y, axis=1)[:, -1], one)
        return out.reshape(out_shape)

    @classmethod
    def xla_sum(cls, x, axes):
        """``x`` summed over ``axes`` in XLA:CPU's order (see ``TREE_WINDOW``; YNNPACK's
        for ``YNN_MIN_SIZE`` elements or more) when ``xla_order`` holds, else NumPy's
        sum."""
        x = np.asarray(x)
        axes = tuple(sorted(int(a) % x.ndim for a in axes)) if x.ndim else ()
        if not cls.xla_order(x.shape, x.dtype, axes):
            return np.sum(x, axis=axes, dtype=x.dtype)
        if x.size >= cls.YNN_MIN_SIZE:
            return ynn_sum(x, axes)
        return cls._tree(x, axes, np.add)

    @classmethod
    def devices_sum(cls, x, axes, device_axes):
        """``x`` summed over ``axes`` where its leading ``device_axes`` axes index devices:
        each device's block in the order its own program takes (``xla_sum`` of the
        block). XLA's tree of windows adds each output element's windows along the summed
        axes alone, so it runs over every block at once; YNNPACK's order and NumPy's
        follow the whole operand's shape, so those blocks are summed one by one."""
        x = np.asarray(x)
        k = device_axes
        axes = tuple(sorted(int(a) for a in axes))
        block, per_axes = x.shape[k:], tuple(a - k for a in axes)
        if x.dtype.kind not in "fc" or not axes:
            return np.sum(x, axis=axes, dtype=x.dtype)
        if cls._tree_path(block, x.dtype, per_axes):
            return cls._tree(x, axes, np.add)
        blocks = x.reshape((-1,) + block)
        out = [np.asarray(cls.xla_sum(b, per_axes)) for b in blocks]
        return np.stack(out).reshape(x.shape[:k] + out[0].shape)

    @classmethod
    def xla_prod(cls, x, axes):
        """``x`` multiplied over ``axes`` in XLA:CPU's order (the tree of windows, padded
        with ones, at every size) when ``tree_order`` holds, else NumPy's product."""
        x = np.asarray(x)
        axes = tuple(sorted(int(a) % x.ndim for a in axes)) if x.ndim else ()
        if not cls.tree_order(x.shape, x.dtype, axes):
            return np.prod(x, axis=axes, dtype=x.dtype)
        return cls._tree(x, axes, np.multiply)

    @classmethod
    def _tree(cls, x, axes, op):
        """XLA's tree of windows (``TREE_WINDOW``) reducing ``x`` over ``axes`` with
        ``op`` (``np.add`` from 0 or ``np.multiply`` from 1)."""
        one = x.dtype.type(0 if op is np.add else 1)
        long = [a for a in axes if x.shape[a] > 1]
        if len(long) == 1 and x.shape[long[0]] <= cls.TREE_WINDOW ** 2:
            return cls._one_axis_sum(x, axes, long[0], op)
        w = cls.TREE_WINDOW
        while any(x.shape[a] > w for a in axes):
            pads, shape, win = [], [], []
            for d, s in enumerate(x.shape):
                if d not in axes:
                    pads.append((0, 0))
                    shape.append(s)
                    continue
                m = -(-s // w) if s > w else 1
                total = m * min(s, w) - s
                pads.append((total // 2, total - total // 2))
                shape += [m, min(s, w)]
                win.append(len(shape) - 1)
            if any(p != (0, 0) for p in pads):     # (np.pad, without its overhead)
                padded = np.full([s + lo + hi for s, (lo, hi) in zip(x.shape, pads)],
                                 one, x.dtype)
                padded[tuple(slice(lo, lo + s) for s, (lo, _) in zip(x.shape, pads))] = x
                x = padded
            x = x.reshape(shape)
            x = cls._sequential(x, tuple(win), op)
        return cls._sequential(x, axes, op)

    def impl(self, x, axes, out_sharding=None, device_axes=0):
        if device_axes:
            return self.devices_sum(x, axes, device_axes)
        if self.xla_order(np.shape(x), np.result_type(x), axes):
            return self.xla_sum(x, axes)
        return np.sum(x, axis=axes, dtype=x.dtype)

    @classmethod
    def _tree_path(cls, shape, dtype, axes):
        """Whether this float sum takes XLA's tree of windows (``_tree``), whose every
        output element adds the same windows of the summed axes whatever the other axes."""
        return cls.xla_order(shape, dtype, axes) and math.prod(shape) < cls.YNN_MIN_SIZE

    def lower_py(self, ctx, ins, axes, out_sharding=None, device_axes=0):
        if device_axes:
            return f"{ctx.bind_global(self.devices_sum, 'dsum')}({ins[0]}, {axes}, {device_axes})"
        return f"{ctx.bind_global(self.impl, 'rsum')}({ins[0]}, {axes})"

    def lower_stmts(self, ctx, ins, outs, eqn):
        """For an array operand, the ``np.add.reduce`` that ``np.sum`` calls (same bits),
        without its Python wrapper; XLA's order (``xla_sum``) where it is modelled."""
        x = eqn.invars[0].aval
        if not x.ndim or x.dtype.kind not in "biufc" or eqn.params.get("device_axes"):
            return None
        axes = eqn.params["axes"]
        if self.xla_order(x.shape, x.dtype, axes):
            return [f"{outs[0]} = {ctx.bind_global(self.xla_sum, 'xsum')}({ins[0]}, {axes})"]
        dt = ctx.bind_global(x.dtype, "dt")
        return [f"{outs[0]} = np.add.reduce({ins[0]}, axis={axes}, dtype={dt})"]

    def jvp(self, primals, tangents, axes, out_sharding=None, **params):
        return (self.bind(primals[0], axes=axes, out_sharding=out_sharding, **params),
                self.bind(tangents[0], axes=axes, out_sharding=out_sharding, **params))

    def transpose(self, ct, x, axes, out_sharding=None, **_):
        if u.is_zero(ct):
            return [None]
        return [_expand_back(ct, u.aval(x).shape, axes)]

    def output_sum_axes(self, axes, out_sharding=None, device_axes=0):
        """The axes summed (for the compiler's folding of sums into their producer)."""
        return None if out_sharding is not None or device_axes else tuple(axes)

    def sum_of_unit_axes(self, eqn, operand):
        """A sum over size-1 axes of ``operand`` with such axes inserted is
        ``add(operand, 0)``: the same bits as summing one element into zero (``-0.0``
        becomes ``0.0`` in both), and an elementwise op tier 2 fuses (autodiff's transpose
        of ``b[None]``)."""
        from jaxlite._src.prims.elementwise import add_p
        x, out = eqn.invars[0].aval, eqn.outvars[0].aval
        if eqn.params.get("out_sharding") is not None or out.dtype.kind not in "fiu" or \
                x.dtype != out.dtype or any(x.shape[a] != 1 for a in eqn.params["axes"]) or \
                tuple(operand.aval.shape) != tuple(out.shape) or operand.aval.dtype != out.dtype:
            return None
        zero = Literal(np.zeros((), out.dtype)[()], type(out)((), out.dtype))
        return Eqn(add_p, [operand, zero], {}, list(eqn.outvars), eqn.source_info)

    def numba(self, code, eqn, ins, axes, out_sharding=None, device_axes=0):
        """Tier 2's loop code (``compiler/numba_bodies.py``): NumPy's own sum (its add loop
        over each row, from 0); a sum in XLA's order (``xla_order``) is XLA's tree of
        windows written out (``tree_sum``), also over devices' blocks (``devices_sum``)
        whose own sums take it; YNNPACK's order (``YNN_MIN_SIZE`` elements or more) calls
        its numba kernels (``ynn_sum.numba_sum``; None: tier 1's impl)."""
        x = eqn.invars[0].aval
        if not axes:
            return [ins[0]]
        if device_axes:     # (the tree adds each result's windows whatever the kept axes)
            if not self._blocks_tree_path(x, axes, device_axes):
                return None
            return [code.tree_sum(ins[0], x, axes, eqn.outvars[0].aval, self.TREE_WINDOW)]
        if self.xla_order(x.shape, x.dtype, axes):
            if x.size >= self.YNN_MIN_SIZE:
                res = numba_sum(code, ins[0], x, axes, eqn.outvars[0].aval)
                return None if res is None else [res]
            return [code.tree_sum(ins[0], x, axes, eqn.outvars[0].aval, self.TREE_WINDOW)]
        return [code.reduce(np.add, ins[0], x, axes, eqn.outvars[0].aval, 0)]

    def numba_alone(self, eqn):
        """Whether tier 2 compiles this sum standing alone into a numba function of its
        own: XLA's order (``xla_sum``: a few NumPy calls per tree level, or YNNPACK's
        tiling in Python, ~10-40 us on a small operand, where the kernel's call costs well
        under 1 us); over devices' blocks, where their own sums take XLA's tree."""
        x, axes = eqn.invars[0].aval, eqn.params["axes"]
        if eqn.params.get("out_sharding") is not None or not axes:
            return False
        k = eqn.params.get("device_axes", 0)
        if k:
            return self._blocks_tree_path(x, axes, k)
        return self.xla_order(x.shape, x.dtype, axes)

    @classmethod
    def _blocks_tree_path(cls, x, axes, device_axes):
        """Whether each device's block of ``x`` (its leading ``device_axes`` axes index
        devices; 0: ``x`` is one operand) is summed by XLA's tree of windows."""
        k = device_axes
        return cls._tree_path(x.shape[k:], x.dtype, tuple(a - k for a in axes))



class ReduceProd(Reduction):
    name, kind = "reduce_prod", "num"
    hlo_op = "multiply"

    def hlo_identity(self, dtype):
        return 1

    def impl(self, x, axes, out_sharding=None):
        """NumPy's product, or XLA:CPU's tree of windows (``ReduceSum.xla_prod``) for a
        float32/float64 product where its order is modelled."""
        if ReduceSum.tree_order(np.shape(x), np.result_type(x), axes):
            return ReduceSum.xla_prod(x, axes)
        return np.prod(x, axis=axes, dtype=x.dtype)

    def pp_params(self, params):
        return [("axes", params["axes"])]

    def batch_changes_order(self, size, avals, dims, axes, out_sharding=None):
        """A float product batched keeps each element's order only when both the
        element's product and the batched one take XLA's tree of windows
        (``ReduceSum.tree_order``, which follows the whole operand's shape)."""
        x, d = avals[0], dims[0]
        if x.dtype.kind not in "fc" or d is None or not axes:
            return False
        summed, shape, baxes = _element_and_batch(x, d, size, axes)
        return summed > 1 and not (ReduceSum.tree_order(x.shape, x.dtype, axes) and
                                   ReduceSum.tree_order(shape, x.dtype, baxes))

    def jvp(self, primals, tangents, axes, out_sharding=None):
        # d prod = sum_i t_i * prod_{j != i} x_j, with the exclusive products taken from
        # cumulative products from both ends (exact when some x_j are zero).
        from jaxlite._src.prims.shape import pad_p, reshape_p, transpose_p
        (x,), (t,) = primals, tangents
        out = self.bind(x, axes=axes, out_sharding=out_sharding)
        xa = u.aval(x)
        rest = [d for d in range(xa.ndim) if d not in axes]
        n = int(np.prod([xa.shape[d] for d in axes], dtype=np.int64))
        rest_shape = tuple(xa.shape[d] for d in rest)

        def flat(v):
            v = transpose_p.bind(v, permutation=tuple(axes) + tuple(rest))
            return reshape_p.bind(v, new_sizes=(n,) + rest_shape, dimensions=None,
                                  sharding=None)
        xf, tf = flat(x), flat(t)
        one = u.const(x, 1)
        cfg = ((1, -1, 0),) + ((0, 0, 0),) * len(rest)
        left = cumprod_p.bind(pad_p.bind(xf, one, padding_config=cfg), axis=0, reverse=False)
        cfg_r = ((-1, 1, 0),) + ((0, 0, 0),) * len(rest)
        right = cumprod_p.bind(pad_p.bind(xf, one, padding_config=cfg_r), axis=0,
                               reverse=True)
        tan = reduce_sum_p.bind(u.mul(tf, u.mul(left, right)), axes=(0,), out_sharding=None)
        return out, tan


class ReduceMax(Reduction):
    name, np_fn = "reduce_max", np.max
    hlo_op = "maximum"
    all_reduce = "maximum"   # (see ReduceSum)

    def hlo_identity(self, dtype):
        return _largest_or_smallest(dtype, self.name == "reduce_min")

    def jvp(self, primals, tangents, axes, out_sharding=None):
        # the tangent at the arg-extreme positions, averaged over ties (as JAX)
        (x,), (t,) = primals, tangents
        out = self.bind(x, axes=axes, out_sharding=out_sharding)
        shape = u.aval(x).shape
        where = u.eq(x, _expand_back(out, shape, axes))
        ind = u.convert(where, u.aval(t).dtype)
        counts = reduce_sum_p.bind(ind, axes=axes, out_sharding=None)
        tot = reduce_sum_p.bind(u.mul(t, ind), axes=axes, out_sharding=None)
        return out, u.div(tot, counts)

    def impl(self, x, axes, out_sharding=None):
        if x.size == 0:
            return _empty_fill(x, axes, "max")
        if x.dtype.kind == "c":
            return _complex_fold(x, axes, largest=True)
        r = _short_last_axis(np.maximum, x, axes)
        if r is not None:
            return r
        return np.maximum.reduce(x, axis=axes)   # (np.max's reduction, without its wrapper)

    def pp_params(self, params):
        return [("axes", params["axes"])]

    def numba(self, code, eqn, ins, axes, out_sharding=None):
        """Tier 2's loop code (``compiler/numba_bodies.py``): NumPy's own reduction (its loop over each row, from the first element)."""
        x = eqn.invars[0].aval
        if not axes:
            return [ins[0]]
        uf = np.maximum if self.name == "reduce_max" else np.minimum
        return [code.reduce(uf, ins[0], x, axes, eqn.outvars[0].aval, None)]



class ReduceMin(ReduceMax):
    name = "reduce_min"
    hlo_op = all_reduce = "minimum"

    def impl(self, x, axes, out_sharding=None):
        if x.size == 0:
            return _empty_fill(x, axes, "min")
        if x.dtype.kind == "c":
            return _complex_fold(x, axes, largest=False)
        r = _short_last_axis(np.minimum, x, axes)
        if r is not None:
            return r
        return np.minimum.reduce(x, axis=axes)


def _complex_fold(x, axes, largest):
    """A complex max/min reduction as XLA:CPU runs JAX's: an accumulator from the
    identity (real part -inf / +inf, imaginary 0) takes each element in turn unless it
    beats it lexicographically (real parts, then imaginary; any comparison with a NaN is
    false, so a NaN can be taken and then dropped again); axes of length 1 are dropped
    first, as XLA's simplifier does. A reduction over more than ``TREE_WINDOW`` elements
    folds windows of that many (padded with the identity) and then the windows' results:
    XLA's tree, whose order with NaNs present is not modelled exactly."""
    axes = tuple(sorted(int(a) % x.ndim for a in axes))
    kept = tuple(x.shape[d] for d in range(x.ndim) if d not in axes)
    axes = tuple(a for a in axes if x.shape[a] > 1)
    if not axes:
        return x.reshape(kept).copy()
    init = x.dtype.type(complex(-np.inf if largest else np.inf, 0))
    beats = np.greater if largest else np.less
    w = ReduceSum.TREE_WINDOW
    rest = [d for d in range(x.ndim) if d not in axes]
    y = np.transpose(x, rest + list(axes)).reshape(kept + (-1,))
    while True:
        n = y.shape[-1]
        if n > w:     # (windows of w, the padding split between both ends)
            m = -(-n // w)
            lo = (m * w - n) // 2
            padded = np.full(y.shape[:-1] + (m * w,), init, y.dtype)
            padded[..., lo:lo + n] = y
            y = padded.reshape(y.shape[:-1] + (m, w))
        acc = np.full(y.shape[:-1], init, y.dtype)
        for i in range(y.shape[-1]):
            e = y[..., i]
            ra, re = acc.real, e.real
            keep = np.where(ra == re, beats(acc.imag, e.imag), beats(ra, re))
            acc = np.where(keep, acc, e)
        if n <= w:
            return acc
        y = acc


def _short_last_axis(op, x, axes):
    """max/min over a short last axis (2 to 8 long) of many rows, as ``op`` applied to its
    columns in order: NumPy's reduce runs an inner loop of that length per row (14 us for
    (128, 3), against 3 us); the same comparisons in the same order, so the same bits
    (signed zeros included; a NaN result may carry the other sign:
    tests/test_dispatch_fastpaths.py checks), or None outside that case."""
    n = x.shape[-1] if x.ndim >= 2 else 0
    if len(axes) != 1 or axes[0] not in (x.ndim - 1, -1) or not 2 <= n <= 8 or \
            x.size < 32 * n or x.dtype.kind not in "fiub":
        return None
    r = op(x[..., 0], x[..., 1])
    for i in range(2, n):
        op(r, x[..., i], out=r)
    return r


def _largest_or_smallest(dtype, largest):
    """The largest (or smallest) value of ``dtype``: the identity of min (max)."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return largest
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return info.max if largest else info.min
    return np.inf if largest else -np.inf


def _empty_fill(x, axes, which):
    shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    if x.dtype.kind == "f":
        v = -np.inf if which == "max" else np.inf
    elif x.dtype == np.bool_:
        v = which == "min"
    else:
        info = np.iinfo(x.dtype)
        v = info.min if which == "max" else info.max
    return np.full(shape, v, x.dtype)


class ReduceAnd(Reduction):
    """Logical (bool) or bitwise (integer) AND over ``axes``."""
    name, np_fn, kind = "reduce_and", np.all, "int_or_bool"
    bitwise, logical = np.bitwise_and, np.logical_and
    hlo_op = "and"

    def hlo_identity(self, dtype):
        return True if np.dtype(dtype) == np.bool_ else np.array(-1).astype(dtype)
    jvp = NOT_DIFFERENTIABLE

    def impl(self, x, axes, out_sharding=None):
        if x.dtype == np.bool_:   # (np.all/np.any's reduction, without their wrappers)
            return np.asarray(self.logical.reduce(x, axis=axes))
        return np.asarray(self.bitwise.reduce(x, axis=axes), x.dtype)

    def numba(self, code, eqn, ins, axes, out_sharding=None):
        """Tier 2's loop code (``compiler/numba_bodies.py``): NumPy's own reduction (its
        loop over each row, from the first element)."""
        x = eqn.invars[0].aval
        if not axes:
            return [ins[0]]
        uf = self.logical if x.dtype == np.bool_ else self.bitwise
        return [code.reduce(uf, ins[0], x, axes, eqn.outvars[0].aval, None)]

    def pp_params(self, params):
        return [("axes", params["axes"])]


class ReduceOr(ReduceAnd):
    name, np_fn, bitwise, logical = "reduce_or", np.any, np.bitwise_or, np.logical_or
    hlo_op = "or"

    def hlo_identity(self, dtype):
        return 0


class ReduceXor(ReduceAnd):
    name, np_fn, bitwise = "reduce_xor", None, np.bitwise_xor
    hlo_op = "xor"

    def hlo_identity(self, dtype):
        return 0

    def impl(self, x, axes, out_sharding=None):
        return np.asarray(np.bitwise_xor.reduce(x, axis=axes), x.dtype)


class ArgReduce(Primitive):
    """Index of the max/min along ``axes`` (one axis), as ``index_dtype``."""
    weak_rule = "never"
    jvp = NOT_DIFFERENTIABLE
    np_fn = None

    def sharding_rule(self, avals, axes, index_dtype):
        """Kept dimensions map to the output in order; the reduced one is gathered."""
        kept = [i for i in range(avals[0].ndim) if i not in axes]
        return [tuple(kept.index(i) if i in kept else None for i in range(avals[0].ndim))]

    def impl(self, x, axes, index_dtype):
        return np.asarray(self.np_fn(x, axis=axes[0]), index_dtype)

    def numba(self, code, eqn, ins, axes, index_dtype):
        """Tier 2's loop code (``compiler/numba_bodies.py``): NumPy's rule over the axis,
        the first extreme element, a NaN counting as extreme (the first NaN wins)."""
        a, out = eqn.invars[0].aval, eqn.outvars[0].aval
        ax, n = axes[0], a.shape[axes[0]]
        cmp = ">" if self.name == "argmax" else "<"
        nan = a.dtype.kind == "f"
        res = code.fresh("a") if out.shape else None
        if res:
            code.emit(f"{res} = np.empty({tuple(out.shape)}, {code.dt(out.dtype)})")
        idx = code.loop_nest(out.shape)
        at = list(idx)
        at.insert(ax, "{j}")
        elem = f"{ins[0]}[{', '.join(at)}]"
        best, bi, j, v = code.fresh("b"), code.fresh("k"), code.fresh("j"), code.fresh("e")
        code.emit(f"{best} = {elem.format(j='0')}")
        code.emit(f"{bi} = 0")
        code.emit(f"for {j} in range(1, {n}):")
        code.emit(f"    {v} = {elem.format(j=j)}")
        if nan:
            code.emit(f"    if {best} != {best}:")
            code.emit("        break")
            code.emit(f"    if {v} != {v} or {v} {cmp} {best}:")
        else:
            code.emit(f"    if {v} {cmp} {best}:")
        code.emit(f"        {best} = {v}")
        code.emit(f"        {bi} = {j}")
        if res:
            code.emit(f"{res}[{', '.join(idx)}] = {bi}")
        code.close_nest(idx)
        if res:
            return [res]
        s = code.fresh("s")
        code.emit(f"{s} = {code.dt(out.dtype)}({bi})")
        return [s]

    def hlo(self, b, x, axes, index_dtype):
        """A two-operand ``reduce`` of (values, iota indices) keeping the first extreme
        value (NaN counts as extreme), with JAX's comparator."""
        a, out = b.in_avals[0], b.out_avals[0]
        ia = a.update(dtype=np.dtype(index_dtype))
        idx = b.op("iota", ia, (), f"iota_dimension={axes[0]}")
        vs, js = a.update(shape=()), ia.update(shape=())
        bs = vs.update(dtype=np.dtype(bool))
        direction = "GT" if self.name == "argmax" else "LT"

        def body(sub, p):
            av, ai, bv, bi = p
            first = sub.op("compare", bs, (av, bv), f"direction={direction}")
            if a.dtype.kind in "fc":
                first = sub.op("or", bs, (first, sub.op("compare", bs, (av, av),
                                                        "direction=NE")))
            tie = sub.op("and", bs, (sub.op("compare", bs, (av, bv), "direction=EQ"),
                                     sub.op("compare", bs, (ai, bi), "direction=LT")))
            pick = sub.op("or", bs, (first, tie))
            return sub.tuple([sub.op("select", vs, (first, av, bv)),
                              sub.op("select", js, (pick, ai, bi))], [vs, js])
        comp = b.region(None, [vs, js, vs, js], body)
        init = b.scalar(_largest_or_smallest(a.dtype, self.name == "argmin"), a.dtype)
        zero = b.scalar(0, index_dtype)
        r = b.op("reduce", [out.update(dtype=a.dtype), out], (x, idx, init, zero),
                 f"dimensions={{{axes[0]}}}", f"to_apply={comp}")
        return b.get_tuple_element(r, 1, out)

    def batch(self, size, args, dims, axes, index_dtype):
        return _batch_reduce(self, args[0], dims[0], axes, dict(index_dtype=index_dtype))

    def abstract_eval(self, x, axes, index_dtype):
        _check_axes(self.name, x, axes)
        if x.shape[axes[0]] == 0:
            raise ValueError(f"{self.name} of an empty axis is undefined")
        return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in axes),
                           index_dtype, False)


class ArgMax(ArgReduce):
    name, np_fn = "argmax", np.argmax


class ArgMin(ArgReduce):
    name, np_fn = "argmin", np.argmin


reduce_sum_p, reduce_prod_p = ReduceSum(), ReduceProd()
reduce_max_p, reduce_min_p = ReduceMax(), ReduceMin()
reduce_and_p, reduce_or_p, reduce_xor_p = ReduceAnd(), ReduceOr(), ReduceXor()
argmax_p, argmin_p = ArgMax(), ArgMin()

# the cumulative scans live in prims/cumulative.py (one concern per file); re-exported here
from jaxlite._src.prims.cumulative import (  # noqa: E402
    cummax_p, cummin_p, cumprod_p, cumsum_p)

# Taylor-mode rules (jax.experimental.jet)
reduce_sum_p.jet, cumsum_p.jet = taylor.linear(reduce_sum_p), taylor.linear(cumsum_p)
reduce_max_p.jet, reduce_min_p.jet = taylor.chooser(reduce_max_p), taylor.chooser(reduce_min_p)
