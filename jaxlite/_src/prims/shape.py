"""Structural primitives: broadcasting, reshaping, transposition, slicing, concatenation,
padding and iota (dynamic slices: dynamic_slice.py). Each is one class holding its rules."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive, aval_nbytes
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims import batch_util
from jaxlite._src.prims import numba_exprs as nx
from jaxlite._src.prims import taylor


class Linear(Primitive):
    """A primitive linear in its first operand (the others, if any, are static-like index
    operands): its JVP applies it to the tangent. Subclasses give ``transpose``."""

    def jvp(self, primals, tangents, **params):
        x, *rest = primals
        t = tangents[0]
        return self.bind(x, *rest, **params), self.bind(t, *rest, **params)

__all__ = ["broadcast_in_dim_p", "reshape_p", "transpose_p", "squeeze_p", "rev_p", "slice_p",
           "concatenate_p", "iota_p", "pad_p"]


def _only_unit_axes(eqn):
    """Whether ``eqn``'s output is its operand with size-1 axes inserted (same dtype)."""
    x, out = eqn.invars[0].aval, eqn.outvars[0].aval
    return x.dtype == out.dtype and \
        [d for d in out.shape if d != 1] == [d for d in x.shape if d != 1] and \
        out.ndim >= x.ndim


# Broadcasts to at most this many elements are written out: NumPy's broadcast_to (a
# read-only view) costs several microseconds of Python, more than filling a small array.
_SMALL = 8192


def _broadcast_small(x, shape):
    """``x`` stretched to ``shape`` in a new array (for small shapes)."""
    out = np.empty(shape, x.dtype)
    out[...] = x
    return out


def _broadcast(x, shape):
    """``x`` stretched to ``shape``: a new array when small, else a read-only view."""
    return _broadcast_small(x, shape) if math.prod(shape) <= _SMALL else \
        np.broadcast_to(x, shape)


class BroadcastInDim(Linear):
    """Broadcast ``operand`` to ``shape``; ``broadcast_dimensions[i]`` is the output dimension
    that operand dimension ``i`` maps to."""
    moves_values = True
    accepts_extended = True
    name = "broadcast_in_dim"
    xla_broadcast = True     # (XLA's simplifier matches it as ``Broadcast(operand)``)
    one_element_as_is = True   # (tier 2's scalar loops: see Reshape)
    numba_expr = nx.operand    # (of a scalar, in tier 2's loops)

    def inserts_unit_axes(self, eqn):
        """(The compiler's ``unit_sums`` pass.) Operand dimensions keep their order here."""
        return _only_unit_axes(eqn)

    def hlo(self, b, x, shape, broadcast_dimensions, sharding=None):
        """``broadcast``; operand dimensions of size 1 stretched to more are dropped first
        (HLO's broadcast maps dimensions of equal size only)."""
        (a,), out = b.in_avals, b.out_avals[0]
        keep = [i for i, d in enumerate(broadcast_dimensions) if a.shape[i] == shape[d]]
        if len(keep) != a.ndim:
            x = b.op("reshape", a.update(shape=tuple(a.shape[i] for i in keep)), (x,))
        dims = ",".join(str(broadcast_dimensions[i]) for i in keep)
        return b.op("broadcast", out, (x,), f"dimensions={{{dims}}}")

    def sharding_rule(self, avals, shape, broadcast_dimensions, **params):
        """Operand dimension i is output dimension broadcast_dimensions[i] (unless it is
        stretched from size 1)."""
        x = avals[0]
        return [tuple(d if x.shape[i] == shape[d] else None
                      for i, d in enumerate(broadcast_dimensions))]

    def explicit_sharding_rule(self, avals, dims, shape, broadcast_dimensions, sharding=None):
        """Over Explicit axes: the ``sharding`` asked for, else the operand's splits."""
        from jaxlite._src.sharding.types import mapped_dims, sharding_dims
        if sharding is not None:
            return [sharding_dims(sharding, len(shape))]
        return [mapped_dims(self.name, avals[:1], dims[:1],
                            self.sharding_rule(avals, shape, broadcast_dimensions), len(shape))]

    def impl(self, x, shape, broadcast_dimensions, sharding=None):
        expanded = np.reshape(x, [x.shape[broadcast_dimensions.index(d)]
                                  if d in broadcast_dimensions else 1 for d in range(len(shape))])
        return _broadcast(expanded, shape)

    def abstract_eval(self, x, shape, broadcast_dimensions, sharding=None):
        if any(d < 0 for d in shape):
            raise TypeError("broadcast_in_dim shape must have every element be nonnegative, "
                            f"got {tuple(shape)}.")
        if len(broadcast_dimensions) != x.ndim:
            raise TypeError(
                "broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; "
                f"got broadcast_dimensions {broadcast_dimensions} for operand ndim {x.ndim}.")
        for i, d in enumerate(broadcast_dimensions):
            if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
                raise TypeError(
                    "broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
                    "their corresponding dimensions in the target broadcast shape; got operand "
                    f"of shape {x.shape}, target broadcast shape {shape}, broadcast_dimensions "
                    f"{broadcast_dimensions} ")
        if list(broadcast_dimensions) != sorted(broadcast_dimensions):
            raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing; "
                            f"got broadcast_dimensions {broadcast_dimensions}")
        return ShapedArray(shape, x.dtype, x.weak_type)

    def local_params(self, params, in_factors, out_factors, out_aval):
        """Per-device parameters in a partitioned program: the block's shape."""
        return dict(params, shape=tuple(s // f for s, f in zip(out_aval.shape, out_factors)))

    def lower_stmts(self, ctx, ins, outs, eqn):
        """``impl``'s reshape and ``np.broadcast_to`` with the shapes worked out at lowering
        time."""
        shape = tuple(eqn.params["shape"])
        bd = tuple(eqn.params["broadcast_dimensions"])
        xs = tuple(eqn.invars[0].aval.shape)
        expanded = tuple(xs[bd.index(d)] if d in bd else 1 for d in range(len(shape)))
        e = ins[0] if expanded == xs else \
            f"{ins[0]}.reshape({expanded})" if xs else f"np.reshape({ins[0]}, {expanded})"
        if expanded == shape:   # nothing stretches: the operand, or a view of it
            return [f"{outs[0]} = {e}"]
        if math.prod(shape) <= _SMALL:
            if not xs:      # a scalar fills the array as it is
                e = ins[0]
            return [f"{outs[0]} = {ctx.bind_global(_broadcast_small, '_broadcast_small')}"
                    f"({e}, {shape})"]
        return [f"{outs[0]} = np.broadcast_to({e}, {shape})"]

    def pp_params(self, params):
        bd = params["broadcast_dimensions"]
        return [("broadcast_dimensions", bd)] if bd else []

    def batch(self, size, args, dims, shape, broadcast_dimensions, sharding=None):
        x = batch_util.moveaxis(args[0], dims[0], 0)
        return self.bind(x, shape=(size,) + tuple(shape),
                         broadcast_dimensions=(0,) + tuple(1 + int(d)
                                                           for d in broadcast_dimensions),
                         sharding=sharding), 0

    def transpose(self, ct, x, shape, broadcast_dimensions, sharding=None):
        if u.is_zero(ct):
            return [None]
        xs = u.aval(x).shape
        summed = [d for d in range(len(shape)) if d not in broadcast_dimensions]
        expanded = [d for i, d in enumerate(broadcast_dimensions) if xs[i] == 1 and shape[d] != 1]
        r = u.reduce_sum(ct, sorted(summed + expanded))
        if tuple(u.aval(r).shape) != tuple(xs):
            r = reshape_p.bind(r, new_sizes=tuple(xs), dimensions=None, sharding=None)
        return [r]

    def numba(self, code, eqn, ins, shape, broadcast_dimensions, sharding=None):
        """Tier 2's loop code (``compiler/numba_bodies.py``): a loop nest reading the
        operand (a scalar filled in)."""
        return [code.broadcast(ins[0], eqn.invars[0].aval, eqn.outvars[0].aval,
                               broadcast_dimensions)]


def _reshape_groups(shape, new):
    """For each dimension of ``shape``, the dimension of ``new`` it starts (the major
    dimensions of each group of merged or split dimensions), or None."""
    out, i, j = [None] * len(shape), 0, 0
    while i < len(shape) and j < len(new):
        a, b, i0, j0 = shape[i], new[j], i, j
        while a != b:
            if a < b:
                i += 1
                a *= shape[i] if i < len(shape) else 1
            else:
                j += 1
                b *= new[j] if j < len(new) else 1
            if i >= len(shape) or j >= len(new):
                return tuple(out)
        out[i0] = j0
        i, j = i + 1, j + 1
    return tuple(out)


class Reshape(Linear):
    """Reshape to ``new_sizes`` (row-major)."""
    moves_values = True
    accepts_extended = True
    name = "reshape"
    # the result of a one-element operand is that element (tier 2's scalar loops keep it a
    # scalar through it)
    one_element_as_is = True

    def inserts_unit_axes(self, eqn):
        """(The compiler's ``unit_sums`` pass.) Not when ``dimensions`` transposes first."""
        return eqn.params.get("dimensions") is None and _only_unit_axes(eqn)

    def hlo(self, b, x, new_sizes, dimensions=None, sharding=None):
        if dimensions is not None and tuple(dimensions) != tuple(range(b.in_avals[0].ndim)):
            t = b.in_avals[0]
            x = b.op("transpose", t.update(shape=tuple(t.shape[d] for d in dimensions)), (x,),
                     "dimensions={" + ",".join(map(str, dimensions)) + "}")
        return b.op("reshape", b.out_avals[0], (x,))

    def sharding_rule(self, avals, new_sizes, dimensions=None, sharding=None):
        """Where operand dimensions merge or split into output dimensions, the major
        operand dimension of each group maps to the major output dimension (as XLA keeps
        the sharding); the group's other dimensions map nowhere (taken whole)."""
        if dimensions is not None:
            return None
        return [_reshape_groups(tuple(avals[0].shape), tuple(new_sizes))]

    def local_params(self, params, in_factors, out_factors, out_aval):
        """Per device: the block's shape. A split of the major dimension of a group of merged
        or split dimensions cuts the flattened group into the same contiguous chunks on both
        sides, so the reshape is done on blocks (the other dimensions of a group are whole:
        the rule maps them nowhere)."""
        return dict(params, new_sizes=tuple(s // f for s, f in
                                            zip(out_aval.shape, out_factors)))

    def explicit_sharding_rule(self, avals, dims, new_sizes, dimensions=None, sharding=None):
        """Over Explicit axes: the ``sharding`` (out_sharding) asked for, else JAX's rule
        (singleton dimensions, one split or one merge; anything else is ambiguous)."""
        from jaxlite._src.sharding.types import mesh_of, reshape_dims, sharding_dims
        if sharding is not None:
            return [sharding_dims(sharding, len(new_sizes))]
        return [reshape_dims(avals[0], dims[0], new_sizes, mesh_of(avals), dimensions)]

    def impl(self, x, new_sizes, dimensions=None, sharding=None):
        if dimensions is not None:
            x = np.transpose(x, dimensions)
        return np.reshape(x, new_sizes)

    def abstract_eval(self, x, new_sizes, dimensions=None, sharding=None):
        if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
            raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                            f"for shape {x.shape}.")
        return ShapedArray(new_sizes, x.dtype, x.weak_type)

    def lower_py(self, ctx, ins, new_sizes, dimensions=None, sharding=None):
        return None if dimensions is not None else f"np.reshape({ins[0]}, {new_sizes})"

    def lower_stmts(self, ctx, ins, outs, eqn):
        """An operand of rank >= 1 is an ndarray: its ``reshape`` method is ``np.reshape``
        without the Python wrapper."""
        if eqn.params["dimensions"] is not None or not eqn.invars[0].aval.ndim:
            return None
        return [f"{outs[0]} = {ins[0]}.reshape({tuple(eqn.params['new_sizes'])})"]

    def batch(self, size, args, dims, new_sizes, dimensions=None, sharding=None):
        x = batch_util.moveaxis(args[0], dims[0], 0)
        if dimensions is not None:
            x = transpose_p.bind(x, permutation=(0,) + tuple(d + 1 for d in dimensions))
        return self.bind(x, new_sizes=(size,) + tuple(new_sizes), dimensions=None,
                         sharding=sharding), 0

    def transpose(self, ct, x, new_sizes, dimensions=None, sharding=None):
        if u.is_zero(ct):
            return [None]
        xs = tuple(u.aval(x).shape)
        if dimensions is None:
            return [self.bind(ct, new_sizes=xs, dimensions=None, sharding=None)]
        perm_shape = tuple(xs[d] for d in dimensions)
        r = self.bind(ct, new_sizes=perm_shape, dimensions=None, sharding=None)
        return [transpose_p.bind(r, permutation=tuple(int(i) for i in np.argsort(dimensions)))]

    def numba(self, code, eqn, ins, new_sizes, dimensions=None, sharding=None):
        """Tier 2's loop code (``compiler/numba_bodies.py``): the elements in order, another shape."""
        if dimensions is not None:
            return None
        return [code.reshape(ins[0], eqn.invars[0].aval, eqn.outvars[0].aval)]



class Transpose(Linear):
    """Permute the dimensions of ``operand``."""
    moves_values = True
    accepts_extended = True
    name = "transpose"

    def cost(self, avals_in, avals_out, literals, **params):
        """XLA's unoptimized ``transpose`` is a layout change its cost analysis counts as
        reading nothing (only the operand's use)."""
        return [(0, 0, [0], 0)]

    def hlo(self, b, x, permutation):
        """``transpose``; its result has the layout of a relabelled operand, as XLA gives
        it (a transpose is then a bitcast)."""
        layout = [permutation.index(d) for d in range(len(permutation) - 1, -1, -1)]
        return b.op("transpose", b.out_avals[0], (x,),
                    "dimensions={" + ",".join(map(str, permutation)) + "}",
                    layout=layout if permutation else None)

    def impl(self, x, permutation):
        return np.transpose(x, permutation)

    def sharding_rule(self, avals, permutation):
        """Operand dimension permutation[j] becomes output dimension j."""
        return [tuple(permutation.index(i) for i in range(avals[0].ndim))]

    def check_operands(self, vals, params):
        # np.transpose would accept a short permutation of a leading-1 or 1-D operand
        if sorted(params["permutation"]) != list(range(np.ndim(vals[0]))):
            self.abstract_eval(ShapedArray(np.shape(vals[0]), np.asarray(vals[0]).dtype),
                               **params)

    def abstract_eval(self, x, permutation):
        if sorted(permutation) != list(range(x.ndim)):
            raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                            f"got permutation {permutation} for operand shape {x.shape}.")
        return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)

    def lower_py(self, ctx, ins, permutation):
        return f"np.transpose({ins[0]}, {permutation})"

    def output_permutation(self, permutation):
        return tuple(permutation)

    def batch(self, size, args, dims, permutation):
        d = dims[0]
        perm = (d,) + tuple(i if i < d else i + 1 for i in permutation)
        return self.bind(args[0], permutation=perm), 0

    def transpose(self, ct, x, permutation):
        if u.is_zero(ct):
            return [None]
        return [self.bind(ct, permutation=tuple(int(i) for i in np.argsort(permutation)))]

    def numba(self, code, eqn, ins, permutation):
        """Tier 2's loop code (``compiler/numba_bodies.py``): a loop nest reading the operand's permuted element."""
        if eqn.invars[0].aval.ndim == 0:
            return [ins[0]]

        def read(idx):
            src = [None] * len(permutation)
            for j, d in enumerate(permutation):
                src[d] = idx[j]
            return f"{ins[0]}[{', '.join(src)}]"
        return [code.gather_nest(eqn.outvars[0].aval, read)]



class Squeeze(Linear):
    """Remove the unit ``dimensions``."""
    moves_values = True
    accepts_extended = True
    name = "squeeze"
    one_element_as_is = True   # (see Reshape)

    def hlo(self, b, x, dimensions):
        return b.op("reshape", b.out_avals[0], (x,))

    def sharding_rule(self, avals, dimensions):
        """Kept dimensions map to the output in order."""
        kept = [i for i in range(avals[0].ndim) if i not in dimensions]
        return [tuple(kept.index(i) if i in kept else None for i in range(avals[0].ndim))]

    def impl(self, x, dimensions):
        return np.squeeze(x, dimensions) if dimensions else x

    def abstract_eval(self, x, dimensions):
        for d in dimensions:
            if not 0 <= d < x.ndim or x.shape[d] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 f"equal to one, got shape={x.shape} and dimensions="
                                 f"{dimensions}")
        return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions),
                           x.dtype, x.weak_type)

    def batch(self, size, args, dims, dimensions):
        d = dims[0]
        new = tuple(int(a) + (a >= d) for a in dimensions)
        return self.bind(args[0], dimensions=new), d - sum(1 for a in dimensions if a < d)

    def transpose(self, ct, x, dimensions):
        if u.is_zero(ct):
            return [None]
        return [reshape_p.bind(ct, new_sizes=tuple(u.aval(x).shape), dimensions=None,
                               sharding=None)]

    def numba(self, code, eqn, ins, dimensions):
        """Tier 2's loop code (``compiler/numba_bodies.py``): the elements in order, another shape."""
        return [code.reshape(ins[0], eqn.invars[0].aval, eqn.outvars[0].aval)]



class Rev(Linear):
    """Reverse the order of elements along ``dimensions``."""
    moves_values = True
    accepts_extended = True
    name = "rev"

    def hlo(self, b, x, dimensions):
        return b.op("reverse", b.out_avals[0], (x,),
                    "dimensions={" + ",".join(map(str, dimensions)) + "}")

    def sharding_rule(self, avals, dimensions):
        return [tuple(range(avals[0].ndim))]

    def whole_dims(self, avals, dimensions):
        """Reversed dimensions are computed whole (then split as the operand was)."""
        return [tuple(dimensions)]

    def explicit_sharding_rule(self, avals, dims, dimensions):
        """Over Explicit axes the result keeps the operand's sharding."""
        return [dims[0]]

    def impl(self, x, dimensions):
        return np.flip(x, dimensions) if dimensions else x

    def abstract_eval(self, x, dimensions):
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def transpose(self, ct, x, dimensions):
        return [None if u.is_zero(ct) else self.bind(ct, dimensions=dimensions)]

    def batch(self, size, args, dims, dimensions):
        d = dims[0]
        return self.bind(args[0], dimensions=tuple(a + (a >= d) for a in dimensions)), d

    def numba(self, code, eqn, ins, dimensions):
        """Tier 2's loop code (``compiler/numba_bodies.py``): a loop nest reading the
        operand backwards along ``dimensions``."""
        shape = eqn.outvars[0].aval.shape
        if not shape:
            return [ins[0]]
        return [code.gather_nest(eqn.outvars[0].aval, lambda idx: f"{ins[0]}[" + ", ".join(
            f"{n - 1} - {i}" if d in dimensions else i
            for d, (n, i) in enumerate(zip(shape, idx))) + "]")]


class Slice(Linear):
    """Static strided slice ``operand[start:limit:stride]`` per dimension."""
    moves_values = True
    accepts_extended = True
    name = "slice"


    def cost(self, avals_in, avals_out, literals, **params):
        """XLA's ``slice`` reads only the elements it keeps: the operand is counted at the
        output's bytes, its utilization the kept fraction."""
        a, out = avals_in[0], avals_out[0]
        size = int(np.prod(a.shape, dtype=np.int64))
        frac = int(np.prod(out.shape, dtype=np.int64)) / size if size else 0.0
        return [(0, 0, [aval_nbytes(out)], aval_nbytes(out), [frac])]

    def hlo(self, b, x, start_indices, limit_indices, strides=None):
        strides = strides or (1,) * len(start_indices)
        parts = [f"[{s}:{e}" + (f":{st}]" if st != 1 else "]")
                 for s, e, st in zip(start_indices, limit_indices, strides)]
        return b.op("slice", b.out_avals[0], (x,), "slice={" + ", ".join(parts) + "}")

    def sharding_rule(self, avals, **params):
        """The output keeps the operand's layout (computed whole, split where the sizes
        divide)."""
        return [tuple(range(avals[0].ndim))]

    def whole_dims(self, avals, **params):
        return [tuple(range(avals[0].ndim))]

    def explicit_sharding_rule(self, avals, dims, **params):
        """Over Explicit axes the result keeps the operand's sharding (a split dimension
        must stay divisible)."""
        from jaxlite._src.sharding.types import mesh_of, varying_shape_dims
        out = self.abstract_eval(*avals, **params).shape
        return [varying_shape_dims("slicing", avals[0], dims[0], out, mesh_of(avals))]

    def eager_sharding_rule(self, avals, start_indices, limit_indices, strides=None):
        """Eagerly (one op at a time) JAX leaves sliced dimensions replicated; only the
        untouched ones keep their split."""
        st = strides or (1,) * len(start_indices)
        return [tuple(k if (a, b, c) == (0, n, 1) else None for k, (a, b, c, n) in
                      enumerate(zip(start_indices, limit_indices, st, avals[0].shape)))]

    def impl(self, x, start_indices, limit_indices, strides=None):
        st = strides or (1,) * len(start_indices)
        return x[tuple(slice(a, b, c) for a, b, c in zip(start_indices, limit_indices, st))]

    def check_operands(self, vals, params):
        # NumPy slicing clips out-of-bounds limits silently; JAX raises
        shp, lim = np.shape(vals[0]), params["limit_indices"]
        if len(lim) != len(shp) or any(b > n for b, n in zip(lim, shp)) or \
                any(a < 0 for a in params["start_indices"]):
            self.abstract_eval(ShapedArray(shp, np.asarray(vals[0]).dtype), **params)

    def abstract_eval(self, x, start_indices, limit_indices, strides=None):
        if len(start_indices) != x.ndim or len(limit_indices) != x.ndim:
            raise TypeError("slice start_indices and limit_indices must have length equal to "
                            f"the number of dimensions of the operand, got {start_indices} and "
                            f"{limit_indices} for operand shape {x.shape}.")
        st = strides or (1,) * x.ndim
        shape = []
        for a, b, c, n in zip(start_indices, limit_indices, st, x.shape):
            if not 0 <= a <= b <= n:
                raise TypeError(f"slice indices out of bounds: start {start_indices}, limit "
                                f"{limit_indices}, operand shape {x.shape}")
            shape.append(max(0, -(-(b - a) // c)))
        return ShapedArray(shape, x.dtype, x.weak_type)

    def lower_py(self, ctx, ins, start_indices, limit_indices, strides=None):
        st = strides or (1,) * len(start_indices)
        parts = [f"{a}:{b}" + (f":{c}" if c != 1 else "")
                 for a, b, c in zip(start_indices, limit_indices, st)]
        return f"{ins[0]}[{', '.join(parts)}{',' if len(parts) == 1 else ''}]"

    def batch(self, size, args, dims, start_indices, limit_indices, strides=None):
        d = dims[0]
        st = list(start_indices)
        li = list(limit_indices)
        st.insert(d, 0)
        li.insert(d, size)
        sd = None if strides is None else tuple(strides[:d]) + (1,) + tuple(strides[d:])
        return self.bind(args[0], start_indices=tuple(st), limit_indices=tuple(li),
                         strides=sd), d

    def transpose(self, ct, x, start_indices, limit_indices, strides=None):
        if u.is_zero(ct):
            return [None]
        xs = u.aval(x).shape
        st = strides or (1,) * len(xs)
        cs = u.aval(ct).shape
        config = []
        for a, n, c, m in zip(start_indices, xs, st, cs):
            used = a + (m - 1) * c + 1 if m else a
            config.append((a, n - used, c - 1 if strides else 0))
        zero = u.const(ct, 0)
        return [pad_p.bind(ct, zero, padding_config=tuple(config))]

    def numba(self, code, eqn, ins, start_indices, limit_indices, strides=None):
        """Tier 2's loop code (``compiler/numba_bodies.py``): a loop nest reading the operand at ``start + i * stride``."""
        st = strides or (1,) * len(start_indices)

        def read(idx):
            return f"{ins[0]}[" + ", ".join(
                f"{s} + {i} * {k}" for s, i, k in zip(start_indices, idx, st)) + "]"
        return [code.gather_nest(eqn.outvars[0].aval, read)]



class Concatenate(Primitive):
    """Join operands along ``dimension`` (linear in every operand)."""
    moves_values = True
    accepts_extended = True
    name = "concatenate"

    def hlo(self, b, *xs, dimension):
        return b.op("concatenate", b.out_avals[0], xs, f"dimensions={{{dimension}}}")

    def sharding_rule(self, avals, dimension):
        """Every operand keeps its layout in the output (computed whole)."""
        return [tuple(range(a.ndim)) for a in avals]

    def whole_dims(self, avals, dimension):
        return [tuple(range(a.ndim)) for a in avals]

    def explicit_sharding_rule(self, avals, dims, dimension):
        """Over Explicit axes every operand must have the same sharding, which the result
        keeps."""
        from jaxlite._src.sharding.types import ShardingTypeError, is_typed
        typed = [(a, d) for a, d in zip(avals, dims) if is_typed(a)]
        if any(d != typed[0][1] for _, d in typed):
            shown = ", ".join(str(a.sharding) for a, _ in typed)
            raise ShardingTypeError(f"All operands should have the same sharding. Got "
                                    f"shardings {shown}. Reshard them to one sharding first "
                                    f"(jax.sharding.reshard).")
        return [typed[0][1]]

    def jvp(self, primals, tangents, dimension):
        out = self.bind(*primals, dimension=dimension)
        ts = [u.zeros(t.aval) if u.is_zero(t) else t for t in tangents]
        return out, self.bind(*ts, dimension=dimension)

    def batch(self, size, args, dims, dimension):
        b = batch_util
        new = [b.bdim_at_front(a, d, size) for a, d in zip(args, dims)]
        return self.bind(*new, dimension=dimension + 1), 0

    def transpose(self, ct, *xs, dimension):
        res, off = [], 0
        cs = u.aval(ct).shape if not u.is_zero(ct) else None
        for x in xs:
            n = u.aval(x).shape[dimension]
            if u.is_undefined(x) and cs is not None:
                start = [0] * len(cs)
                limit = list(cs)
                start[dimension], limit[dimension] = off, off + n
                res.append(slice_p.bind(ct, start_indices=tuple(start),
                                        limit_indices=tuple(limit), strides=None))
            else:
                res.append(None)
            off += n
        return res

    def impl(self, *xs, dimension):
        return np.concatenate(xs, axis=dimension)

    def abstract_eval(self, *xs, dimension):
        if not xs:
            raise TypeError("concatenate requires at least one operand")
        x0 = xs[0]
        for x in xs[1:]:
            if x.dtype != x0.dtype:
                raise TypeError("Cannot concatenate arrays with different dtypes: "
                                f"{', '.join(x.dtype.name for x in xs)}")
            if x.ndim != x0.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, x0.shape))
                                        if i != dimension):
                raise TypeError("Cannot concatenate arrays with shapes that differ in "
                                f"dimensions other than the one being concatenated: "
                                f"concatenating along dimension {dimension} for shapes "
                                f"{', '.join(str(x.shape) for x in xs)}.")
        shape = list(x0.shape)
        shape[dimension] = sum(x.shape[dimension] for x in xs)
        return ShapedArray(shape, x0.dtype, all(x.weak_type for x in xs))

    def numba(self, code, eqn, ins, dimension):
        """Tier 2's loop code (``compiler/numba_bodies.py``): each operand copied into its block."""
        out = eqn.outvars[0].aval
        res = code.new_array(out)
        off = 0
        for x, a in zip(ins, eqn.invars):
            if a.aval.shape[dimension]:
                starts = ["0"] * out.ndim
                starts[dimension] = str(off)
                code.copy_block(res, starts, x, ["0"] * out.ndim, a.aval.shape)
            off += a.aval.shape[dimension]
        return [res]



class Iota(Primitive):
    """``0, 1, 2, ...`` along ``dimension`` of an array of ``shape`` (no operands: nothing to
    differentiate or batch)."""
    name = "iota"
    weak_rule = "never"
    jvp = NOT_DIFFERENTIABLE

    def hlo(self, b, dtype, shape, dimension, sharding=None):
        return b.op("iota", b.out_avals[0], (), f"iota_dimension={dimension}")

    def impl(self, dtype, shape, dimension, sharding=None):
        r = np.arange(shape[dimension], dtype=dtype)
        return np.broadcast_to(r.reshape([-1 if i == dimension else 1
                                          for i in range(len(shape))]), shape)

    def explicit_sharding_rule(self, avals, dims, dtype, shape, dimension, sharding=None):
        """The ``sharding`` asked for (over Explicit axes)."""
        from jaxlite._src.sharding.types import sharding_dims
        return [None if sharding is None else sharding_dims(sharding, len(shape))]

    def abstract_eval(self, dtype, shape, dimension, sharding=None):
        if any(d < 0 for d in shape):
            raise TypeError(f"iota shape must have every element be nonnegative, got "
                            f"{tuple(shape)}.")
        return ShapedArray(shape, dtype, False)

    def numba(self, code, eqn, ins, dtype, shape, dimension, sharding=None):
        """Tier 2's loop code (``compiler/numba_bodies.py``): each element its index along ``dimension``."""
        return [code.gather_nest(eqn.outvars[0].aval,
                                 lambda idx: f"{code.dt(dtype)}({idx[dimension]})")]



class Pad(Primitive):
    """Linear in both the operand and the padding value."""
    """Pad with ``padding_value``; ``padding_config`` is (low, high, interior) per dimension
    (negative low/high crop)."""
    name = "pad"

    def hlo(self, b, x, padval, padding_config):
        cfg = "x".join(f"{lo}_{hi}" + (f"_{interior}" if interior else "")
                       for lo, hi, interior in padding_config)
        return b.op("pad", b.out_avals[0], (x, padval), f"padding={cfg}")

    def sharding_rule(self, avals, padding_config):
        """The output keeps the operand's layout where the padded sizes still divide."""
        return [tuple(range(avals[0].ndim)), ()]

    def whole_dims(self, avals, padding_config):
        return [tuple(range(avals[0].ndim)), ()]

    def explicit_sharding_rule(self, avals, dims, padding_config):
        """Over Explicit axes the result keeps the operand's sharding (a split dimension
        must stay divisible)."""
        from jaxlite._src.sharding.types import mesh_of, varying_shape_dims
        out = self.abstract_eval(*avals, padding_config=padding_config).shape
        return [varying_shape_dims("padding", avals[0], dims[0], out, mesh_of(avals))]

    def impl(self, x, padval, padding_config):
        out = x
        for d, (lo, hi, interior) in enumerate(padding_config):
            if interior > 0:
                n = out.shape[d]
                shape = list(out.shape)
                shape[d] = n + (n - 1) * interior if n else 0
                full = np.full(shape, padval, dtype=x.dtype)
                idx = [slice(None)] * out.ndim
                idx[d] = slice(None, None, interior + 1)
                full[tuple(idx)] = out
                out = full
            pads = [(0, 0)] * out.ndim
            pads[d] = (max(lo, 0), max(hi, 0))
            out = np.pad(out, pads, constant_values=padval)
            idx = [slice(None)] * out.ndim
            idx[d] = slice(-lo if lo < 0 else 0, out.shape[d] + hi if hi < 0 else None)
            out = out[tuple(idx)]
        return np.asarray(out, x.dtype)

    def abstract_eval(self, x, padval, padding_config):
        if padval.shape != ():
            raise TypeError(f"pad padding_value must be a scalar; got {padval.shape}.")
        if padval.dtype != x.dtype:
            raise TypeError("pad operand and padding_value must be same dtype: got "
                            f"{x.dtype.name} and {padval.dtype.name}.")
        if len(padding_config) != x.ndim:
            raise ValueError("length of padding_config must equal the number of axes of "
                             f"operand, got padding_config {padding_config} for operand "
                             f"shape {x.shape}")
        shape = []
        for n, (lo, hi, interior) in zip(x.shape, padding_config):
            shape.append(lo + hi + n + max(0, n - 1) * interior)
        return ShapedArray(shape, x.dtype, x.weak_type)

    def jvp(self, primals, tangents, padding_config):
        x, pv = primals
        tx, tp = tangents
        out = self.bind(x, pv, padding_config=padding_config)
        if u.is_zero(tx) and u.is_zero(tp):
            return out, u.Zero(u.aval(out))
        tx = u.zeros(tx.aval) if u.is_zero(tx) else tx
        tp = u.zeros(tp.aval) if u.is_zero(tp) else tp
        return out, self.bind(tx, tp, padding_config=padding_config)

    def batch(self, size, args, dims, padding_config):
        if dims[1] is not None:
            return batch_util.loop_batch(self, size, args, dims,
                                         dict(padding_config=padding_config))
        d = dims[0]
        cfg = list(padding_config)
        cfg.insert(d, (0, 0, 0))
        return self.bind(args[0], args[1], padding_config=tuple(cfg)), d

    def transpose(self, ct, x, pv, padding_config):
        if u.is_zero(ct):
            return [None, None]
        # crop the low/high padding (negative pads), then take every (interior+1)-th element
        unpad = self.bind(ct, u.const(ct, 0),
                          padding_config=tuple((-lo, -hi, 0) for lo, hi, _ in padding_config))
        us = u.aval(unpad).shape
        xt = slice_p.bind(unpad, start_indices=(0,) * len(us), limit_indices=tuple(us),
                          strides=tuple(i + 1 for _, _, i in padding_config))
        if tuple(u.aval(xt).shape) != tuple(u.aval(x).shape):  # pragma: no cover - defensive
            raise AssertionError("pad transpose produced the wrong shape")
        pt = None
        if u.is_undefined(pv):
            from jaxlite._src.prims.reductions import reduce_sum_p
            total = reduce_sum_p.bind(ct, axes=tuple(range(len(us))), out_sharding=None)
            inner = reduce_sum_p.bind(xt, axes=tuple(range(len(us))), out_sharding=None)
            pt = u.sub(total, inner)
        return [xt if u.is_undefined(x) else None, pt]


broadcast_in_dim_p, reshape_p, transpose_p = BroadcastInDim(), Reshape(), Transpose()
squeeze_p, rev_p, slice_p, concatenate_p = Squeeze(), Rev(), Slice(), Concatenate()
iota_p, pad_p = Iota(), Pad()

# Taylor mode (jax.experimental.jet): linear in their inexact operands
for _p in (broadcast_in_dim_p, reshape_p, transpose_p, squeeze_p, rev_p, slice_p,
           concatenate_p, pad_p):
    _p.jet = taylor.linear(_p)
