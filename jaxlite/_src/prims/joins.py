"""Joining and splitting primitives JAX 0.10 has: ``split``, ``stack``, ``unstack``, ``tile``
(all linear; each class holds its JVP, transpose and batching rules)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import Primitive
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims import batch_util
from jaxlite._src.prims import taylor

__all__ = ["split_p", "stack_p", "unstack_p", "tile_p"]


def _inst(ts):
    return [u.instantiate(t) for t in ts]


class Split(Primitive):
    """Pieces of ``sizes`` along ``axis``."""
    name = "split"
    accepts_extended = True
    multiple_results = True

    def sharding_rule(self, avals, sizes, axis):
        return [tuple(range(avals[0].ndim))]

    def whole_dims(self, avals, sizes, axis):
        """The split axis is computed whole; each piece is split as the operand was where
        its size divides."""
        return [(axis,)]

    def impl(self, x, sizes, axis):
        return np.split(x, np.cumsum(sizes)[:-1].astype(np.int64), axis=axis)

    def abstract_eval(self, x, sizes, axis):
        if not 0 <= axis < x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
        if any(s < 0 for s in sizes):
            raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
        if sum(sizes) != x.shape[axis]:
            raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of "
                             f"the operand shape {list(x.shape)}")
        outs = []
        for s in sizes:
            shape = list(x.shape)
            shape[axis] = int(s)
            outs.append(ShapedArray(shape, x.dtype, x.weak_type))
        return outs

    def jvp(self, primals, tangents, sizes, axis):
        return (self.bind(primals[0], sizes=sizes, axis=axis),
                self.bind(u.instantiate(tangents[0]), sizes=sizes, axis=axis))

    def transpose(self, cts, x, sizes, axis):
        if all(u.is_zero(c) for c in cts):
            return [None]
        from jaxlite._src.prims.shape import concatenate_p
        return [concatenate_p.bind(*_inst(cts), dimension=axis)]

    def batch(self, size, args, dims, sizes, axis):
        d = dims[0]
        outs = self.bind(args[0], sizes=sizes, axis=axis + (axis >= d))
        return outs, [d] * len(outs)


class Stack(Primitive):
    """Operands of equal shape joined along a new ``axis``."""
    name = "stack"
    accepts_extended = True

    def sharding_rule(self, avals, axis):
        """Operand dimension k is output dimension k, or k + 1 from ``axis`` on."""
        return [tuple(k + (k >= axis) for k in range(a.ndim)) for a in avals]

    def impl(self, *xs, axis):
        return np.stack(xs, axis=axis)

    def abstract_eval(self, *xs, axis):
        if not xs:
            raise ValueError("Need at least one array to stack.")
        for x in xs[1:]:
            if x.shape != xs[0].shape or x.dtype != xs[0].dtype:
                raise TypeError("stack requires operands of equal shapes and dtypes, got "
                                f"{', '.join(a.str_short() for a in xs)}.")
        shape = list(xs[0].shape)
        shape.insert(axis, len(xs))
        return ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs))

    def jvp(self, primals, tangents, axis):
        return self.bind(*primals, axis=axis), self.bind(*_inst(tangents), axis=axis)

    def transpose(self, ct, *xs, axis):
        if u.is_zero(ct):
            return [None] * len(xs)
        parts = unstack_p.bind(ct, axis=axis)
        return [p if u.is_undefined(x) else None for p, x in zip(parts, xs)]

    def batch(self, size, args, dims, axis):
        b = batch_util
        return self.bind(*[b.bdim_at_front(a, d, size) for a, d in zip(args, dims)],
                         axis=axis + 1), 0


class Unstack(Primitive):
    """The slices of the operand along ``axis``."""
    name = "unstack"
    accepts_extended = True
    multiple_results = True

    def sharding_rule(self, avals, axis):
        """Every other dimension keeps its layout in each slice (``axis`` goes away)."""
        nd = avals[0].ndim
        return [tuple(None if k == axis else k - (k > axis) for k in range(nd))]

    def whole_dims(self, avals, axis):
        return [(axis,)]

    def explicit_whole_message(self, aval, k, axis):
        """The error for an unstacked axis split in the operand's type (Explicit axes)."""
        return (f"unstack operand cannot be sharded on the unstacking axis {axis}. Got operand "
                f"type={aval.str_short()}.")

    def impl(self, x, axis):
        return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]

    def abstract_eval(self, x, axis):
        shape = x.shape[:axis] + x.shape[axis + 1:]
        return [ShapedArray(shape, x.dtype, x.weak_type)] * x.shape[axis]

    def jvp(self, primals, tangents, axis):
        return (self.bind(primals[0], axis=axis),
                self.bind(u.instantiate(tangents[0]), axis=axis))

    def transpose(self, cts, x, axis):
        if all(u.is_zero(c) for c in cts):
            return [None]
        return [stack_p.bind(*_inst(cts), axis=axis)]

    def batch(self, size, args, dims, axis):
        d = dims[0]
        ax = axis + (axis >= d)
        outs = self.bind(args[0], axis=ax)
        return outs, [d if d < ax else d - 1] * len(outs)


class Tile(Primitive):
    """The operand repeated ``reps[i]`` times along each dimension."""
    name = "tile"
    accepts_extended = True

    def sharding_rule(self, avals, reps):
        """Dimensions repeated once keep their layout; repeated ones are computed whole."""
        return [tuple(range(avals[0].ndim))]

    def whole_dims(self, avals, reps):
        return [tuple(k for k, r in enumerate(reps) if r != 1)]

    def explicit_whole_message(self, aval, k, reps):
        """The error for a repeated dimension split in the operand's type (Explicit axes)."""
        return (f"Operand cannot be sharded on dimension {k} when the tiling is non-trivial. "
                f"Got input type: {aval.str_short(False)} with reps: {tuple(reps)}.")

    def impl(self, x, reps):
        return np.tile(x, reps)

    def abstract_eval(self, x, reps):
        if len(reps) != x.ndim:
            raise ValueError(f"tile reps must have one entry per dimension, got {reps} for "
                             f"shape {x.shape}.")
        return ShapedArray(tuple(r * n for r, n in zip(reps, x.shape)), x.dtype, x.weak_type)

    def jvp(self, primals, tangents, reps):
        return self.bind(primals[0], reps=reps), self.bind(u.instantiate(tangents[0]),
                                                           reps=reps)

    def transpose(self, ct, x, reps):
        if u.is_zero(ct):
            return [None]
        from jaxlite._src.prims.shape import reshape_p
        shape = u.aval(x).shape
        split = []
        for r, n in zip(reps, shape):
            split += [r, n]
        c = reshape_p.bind(ct, new_sizes=tuple(split), dimensions=None, sharding=None)
        return [u.reduce_sum(c, tuple(range(0, 2 * len(shape), 2)))]

    def batch(self, size, args, dims, reps):
        d = dims[0]
        r = list(reps)
        r.insert(d, 1)
        return self.bind(args[0], reps=tuple(r)), d


split_p, stack_p, unstack_p, tile_p = Split(), Stack(), Unstack(), Tile()

for _p in (split_p, stack_p, unstack_p, tile_p):   # Taylor mode (jax.experimental.jet)
    _p.jet = taylor.linear(_p)
