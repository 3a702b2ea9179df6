"""Collectives over named axes: psum, pmax, pmin, all_gather, psum_scatter, ppermute,
all_to_all, axis_index.

Under ``vmap(..., axis_name=n)`` the batch trace owning ``n`` runs ``batch_collective``: the
reduction happens over the batch dimension. Inside pmap/shard_map the axes name mesh axes:
tracing sees them through ``axis_env``, and on the device threads ``impl`` meets the other
devices through the runtime's rendezvous (jaxlite/_src/runtime/collectives.py).
Outside any transformation binding the name they raise JAX's ``NameError``.
"""
from __future__ import annotations

import contextlib
import linecache
import math
import re
import sys
import threading

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.primitive import NOT_DIFFERENTIABLE, Primitive
from jaxlite._src.core.trace import ctx
from jaxlite._src.prims import ad_util as u
from jaxlite._src.prims.batch_util import bdim_at_front, moveaxis
from jaxlite._src.runtime import collectives as _rt
from jaxlite._src.sharding import vma

__all__ = ["psum_p", "pmax_p", "pmin_p", "all_gather_p", "ppermute_p", "axis_index_p", "pvary_p",
           "reduce_scatter_p", "all_to_all_p", "axis_size", "axis_env"]

_env = threading.local()


@contextlib.contextmanager
def axis_env(mesh):
    """Bind the axes of ``mesh`` (name -> size) for collectives traced inside."""
    stack = getattr(_env, "stack", None)
    if stack is None:
        stack = _env.stack = []
    stack.append(dict(zip(mesh.axis_names, mesh.axis_sizes)))
    auto = getattr(_env, "auto", None)
    if auto is None:
        auto = _env.auto = []
    auto.append(tuple(getattr(mesh, "auto_axis_names", ())))
    try:
        yield
    finally:
        stack.pop()
        auto.pop()


def env_axes():
    """{name: size} of the mesh axes bound by enclosing shard_map/pmap tracing."""
    out = {}
    for d in getattr(_env, "stack", None) or ():
        out.update(d)
    return out


def _bound_axes():
    names = []
    t = ctx.trace
    while t is not None:
        n = getattr(t, "axis_name", None)
        if n is not None:
            names.extend(n if isinstance(n, tuple) else (n,))
        t = t.parent
    names.extend(env_axes())
    spmd = _rt.current()
    if spmd is not None:
        names.extend(spmd.axis_names)
    return names


_SRC = re.compile(r"#\s*(\S+:\d+ \(.*\))\s*$")


_where_cache = {}


def _where():
    """The user line of the collective being run (read from the generated code's comment)."""
    f = sys._getframe(2)
    key = (f.f_code.co_filename, f.f_lineno)
    hit = _where_cache.get(key)
    if hit is not None:
        return hit
    m = _SRC.search(linecache.getline(*key))
    if m:                      # the generated code's own line: the same every time
        if len(_where_cache) > 4096:
            _where_cache.clear()
        hit = _where_cache[key] = m.group(1)
        return hit
    while f is not None:
        m = _SRC.search(linecache.getline(f.f_code.co_filename, f.f_lineno))
        if m:
            return m.group(1)
        f = f.f_back
    return "an unknown line"


def _spmd(axes):
    """The device thread's SPMD context when it binds all of ``axes``, else None."""
    c = _rt.current()
    return c if c is not None and c.has_axes(axes) else None


def _check_bound(axes, fix=None):
    """Raise JAX's NameError for an axis of ``axes`` no enclosing map binds. Inside a
    shard_map over some of its mesh's axes, naming one of the others gets JAX's message for
    that collective: ``fix`` is what it says to call under shard_map (None: JAX's short
    message)."""
    bound = _bound_axes()
    for a in axes:
        if a not in bound:
            if any(a in names for names in getattr(_env, "auto", None) or ()):
                if fix is None:
                    raise NameError(f"unbound axis name: {a}")
                raise NameError(f"Found an unbound axis name: {a}. To fix this, please call "
                                f"{fix} under `jax.shard_map`.")
            raise NameError(f"unbound axis name: {a}. The following axis names (e.g. defined "
                            f"by pmap or vmap(axis_name=...)) are available to collective "
                            f"operations: {bound}")


def axis_size(name):
    """The size of the mapped axis ``name`` (from the enclosing vmap, pmap or shard_map)."""
    if isinstance(name, (tuple, list)):
        n = 1
        for a in name:
            n *= axis_size(a)
        return n
    t = ctx.trace
    while t is not None:
        if getattr(t, "axis_name", None) == name:
            return t.axis_size
        t = t.parent
    env = env_axes()
    if name in env:
        return env[name]
    spmd = _rt.current()
    if spmd is not None and spmd.has_axes((name,)):
        return spmd.axis_size((name,))
    _check_bound((name,))


def sum_members(v, d, size):
    """The sum over the stacked members' axis ``d`` (the batched forms of ``psum`` and
    ``psum_scatter``): for floats of up to 32 members,
    the members added one after another as the cross-process ``combine`` and an
    all-reduce do (a ``reduce_sum`` of a large stacked operand would take YNNPACK's
    compensated order instead, so one process with n devices would differ from n
    processes)."""
    from jaxlite._src.prims.reductions import reduce_sum_p
    if d is None:
        return u.mul(v, u.const(v, size))
    a = u.aval(v)
    if a.dtype.kind not in "fc" or not 1 < size <= 32:
        return reduce_sum_p.bind(v, axes=(d,), out_sharding=None)
    out = a.shape[:d] + a.shape[d + 1:]
    total = None
    for i in range(size):
        lo = [0] * a.ndim
        hi = list(a.shape)
        lo[d], hi[d] = i, i + 1
        part = u.reshape(u.slice(v, tuple(lo), tuple(hi)), out)
        total = part if total is None else u.add(total, part)
    if a.dtype.kind == "f":
        # the all-reduce starts from +0.0, so a sum of -0.0s is +0.0; written as a select
        # (not ``total + 0``, which the compiler's algebraic simplifier drops as XLA's does
        # for an add it sees, while it never sees inside an all-reduce)
        return u.select(u.eq(total, u.const(total, 0)), u.zeros(total), total)
    return u.add(total, u.const(total, 0))


class _Collective(Primitive):
    collective = True
    no_fold = True     # its value depends on the device running it
    batches_axis_tuples = True   # the vmap rule reduces its axis and rebinds for the others
    multiple_results = True

    def impl(self, *args, axes, axis_index_groups=None):
        if _spmd(axes) is None:
            _check_bound(axes)
        per_group, reduce = self._reducers()
        return _rt.collective(self.name, axes, _where(), [np.asarray(a) for a in args],
                              per_group, reduce=reduce, index_groups=axis_index_groups)

    def _reducers(self):
        """(per_group, (MPI op, combine)) for the runtime: made once per primitive."""
        got = self.__dict__.get("_reducers_")
        if got is None:
            red = self.combine

            def combine(vals):
                if len(vals[0]) == 1:
                    return [red([m[0] for m in vals])]
                return [red([m[k] for m in vals]) for k in range(len(vals[0]))]

            def per_group(members):
                return [combine([v for _, v in members])] * len(members)
            got = self._reducers_ = (per_group, (self.mpi_op, combine))
        return got

    def abstract_eval(self, *avals, axes, **params):
        _check_bound(axes, "pvary" if vma.current() is not None else "psum")
        return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in avals]

    def sharding_rule(self, avals, **params):
        """Elementwise across the devices of its axes: each operand dimension is the same
        result dimension (a partial-manual shard_map's body keeps its other axes' split)."""
        return [tuple(range(a.ndim)) for a in avals]

    def vma_rule(self, avals, axes, **params):
        """The result is the same on every device of the reduced axes (inside shard_map
        it no longer varies over them)."""
        return [set(a.vma) - set(axes) for a in avals]

    def pp_params(self, params):
        return [(k, params[k]) for k in sorted(params)]

    def batch_collective(self, trace, vals, dims, axes, **params):
        _no_vmapped_groups(params.get("axis_index_groups"))
        size = trace.axis_size
        others = tuple(a for a in axes if a != trace.axis_name)
        outs = []
        for v, d in zip(vals, dims):
            outs.append(self.reduce(v, d, size))
        if others:   # reduce over the remaining named axes in the enclosing traces
            outs = self.bind(*outs, axes=others, **params)
        return outs, [None] * len(outs)

    def batch(self, size, args, dims, **params):
        # a reduction over other named axes acts on each batch element alike
        return self.bind(*args, **params), list(dims)


class PSum(_Collective):
    name = "psum"
    mpi_op = "sum"

    def abstract_eval(self, *avals, axes, **params):
        for a in avals:
            check_sum_states(self.name, a, axes)
        return super().abstract_eval(*avals, axes=axes, **params)

    @staticmethod
    def combine(vals):
        """The members' sum in member order, from 0 as XLA's all-reduce (a sum of -0.0s is
        +0.0, as in the batched form's ``sum_members``)."""
        total = _fold(np.add, vals)
        return np.add(total, np.zeros((), total.dtype), out=total) \
            if type(total) is np.ndarray else np.add(total, total.dtype.type(0))

    def reduce(self, v, d, size):
        """The sum over the stacked members' axis ``d`` (``sum_members``)."""
        return sum_members(v, d, size)

    def jvp(self, primals, tangents, **params):
        ts = [u.instantiate(t) for t in tangents]
        return self.bind(*primals, **params), self.bind(*ts, **params)

    def transpose(self, cts, *args, **params):
        cts = [u.instantiate(c) for c in cts]
        return self.bind(*cts, **params)


class PMax(_Collective):
    name = "pmax"
    mpi_op = "max"
    combine = staticmethod(lambda vals: _fold(np.maximum, vals))

    def jvp(self, primals, tangents, axes, axis_index_groups=None):
        return _extreme_jvp(self, primals, tangents, axes, axis_index_groups)

    def reduce(self, v, d, size):
        from jaxlite._src.prims.reductions import reduce_max_p
        return v if d is None else reduce_max_p.bind(v, axes=(d,), out_sharding=None)


def check_sum_states(name, aval, axes):
    """JAX's ValueError for a sum over axes some of which the value varies over and some
    not (inside shard_map with check_vma): it must be summed over one kind at a time."""
    if vma.current() is None or len(axes) < 2:
        return
    have = getattr(aval, "vma", None) or frozenset()
    states = {"varying" if a in have else "invarying" for a in axes}
    if len(states) > 1:
        raise ValueError(
            f"jax.lax.{name} can only accept axis_name which corresponds to one of varying, "
            f"unreduced, reduced or invarying state of the input. Got input type: "
            f"{aval.str_short(False)}, axes: {tuple(axes)} and input state: "
            f"{states}")   # (a set, printed in the order Python gives, as JAX)


def _fold(ufunc, vals):
    """``ufunc`` over the members' values in member order, ((v0 op v1) op v2) ..., into one
    new buffer (the members' own arrays are never written)."""
    first = vals[0]
    if len(vals) == 1:
        return np.array(first)
    out = ufunc(first, vals[1])
    if type(out) is np.ndarray:
        for v in vals[2:]:
            ufunc(out, v, out=out)
    else:                       # 0-d operands give NumPy scalars
        for v in vals[2:]:
            out = ufunc(out, v)
    return np.asarray(out, first.dtype)


def _extreme_jvp(prim, primals, tangents, axes, groups):
    outs = prim.bind(*primals, axes=axes, axis_index_groups=groups)
    touts = []
    for x, t, o in zip(primals, tangents, outs):
        t = u.instantiate(t)
        ind = u.convert(u.eq(x, o), u.aval(t).dtype)
        (den,) = psum_p.bind(ind, axes=axes, axis_index_groups=groups)
        (num,) = psum_p.bind(u.mul(t, ind), axes=axes, axis_index_groups=groups)
        touts.append(u.div(num, den))
    return outs, touts


class PMin(_Collective):
    name = "pmin"
    mpi_op = "min"
    combine = staticmethod(lambda vals: _fold(np.minimum, vals))

    def jvp(self, primals, tangents, axes, axis_index_groups=None):
        return _extreme_jvp(self, primals, tangents, axes, axis_index_groups)

    def reduce(self, v, d, size):
        from jaxlite._src.prims.reductions import reduce_min_p
        return v if d is None else reduce_min_p.bind(v, axes=(d,), out_sharding=None)


class AllGather(Primitive):
    """Stack every member's operand along ``all_gather_dimension`` (or concatenate when
    ``tiled``)."""
    name = "all_gather"
    collective = True
    no_fold = True     # its value depends on the device running it

    def impl(self, x, axis_name, all_gather_dimension, axis_size, tiled, axis_index_groups=None):
        axes = _names(axis_name)
        if _spmd(axes) is None:
            _check_bound(axes)

        def per_group(members):
            vals = [np.asarray(v) for _, v in members]
            g = np.concatenate(vals, all_gather_dimension) if tiled else \
                np.stack(vals, all_gather_dimension)
            return [g] * len(members)
        return _rt.collective("all_gather", axes, _where(), np.asarray(x), per_group,
                              index_groups=axis_index_groups)

    def vma_rule(self, avals, axis_name, **params):
        """Inside shard_map the result varies over the collective's axes (and the
        operand's)."""
        from jaxlite._src.sharding.vma import axes_tuple
        return [set(avals[0].vma) | set(axes_tuple(axis_name))]

    def sharding_rule(self, avals, all_gather_dimension, tiled, **params):
        """Dimensions other than the gathered one keep their layout."""
        if tiled:
            return [tuple(range(avals[0].ndim))]
        return [tuple(k if k < all_gather_dimension else k + 1 for k in range(avals[0].ndim))]

    def whole_dims(self, avals, all_gather_dimension, tiled, **params):
        """A tiled gather concatenates along its dimension, which must be whole."""
        return [(all_gather_dimension,) if tiled else ()]

    def abstract_eval(self, x, axis_name, all_gather_dimension, axis_size, tiled, axis_index_groups=None):
        _check_bound(_names(axis_name))
        shape = list(x.shape)
        if tiled:
            shape[all_gather_dimension] *= axis_size
        else:
            shape.insert(all_gather_dimension, axis_size)
        return ShapedArray(shape, x.dtype, x.weak_type)

    def jvp(self, primals, tangents, **params):
        return self.bind(primals[0], **params), self.bind(u.instantiate(tangents[0]), **params)

    def batch_collective(self, trace, vals, dims, axis_name, all_gather_dimension, axis_size,
                         tiled, axis_index_groups=None):
        _no_vmapped_groups(axis_index_groups)
        _one_vmapped_axis("all_gather", axis_name, "all_gather(all_gather(x, 'j'), 'i')")
        from jaxlite._src.prims.shape import reshape_p
        (x,), (d,) = vals, dims
        x = bdim_at_front(x, d, trace.axis_size)
        x = moveaxis(x, 0, all_gather_dimension)
        if tiled:
            shape = list(u.aval(x).shape)
            k = all_gather_dimension
            shape[k:k + 2] = [shape[k] * shape[k + 1]]
            x = reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None, sharding=None)
        return x, None

    def batch(self, size, args, dims, axis_name, all_gather_dimension, axis_size, tiled, axis_index_groups=None):
        # gathering over another named axis: batch dim in front, gather dimension after it
        x = moveaxis(args[0], dims[0], 0)
        return self.bind(x, axis_name=axis_name, all_gather_dimension=all_gather_dimension + 1,
                         axis_size=axis_size, tiled=tiled,
                         axis_index_groups=axis_index_groups), 0

    def transpose(self, ct, x, axis_name, all_gather_dimension, axis_size, tiled, axis_index_groups=None):
        # each member's slice of every gathered cotangent, summed over the members
        if u.is_zero(ct):
            return [None]
        return [reduce_scatter_p.bind(ct, axis_name=axis_name,
                                      scatter_dimension=all_gather_dimension,
                                      axis_size=axis_size, tiled=tiled,
                         axis_index_groups=axis_index_groups)]


class ReduceScatter(Primitive):
    """``psum_scatter``: the sum over the members, of which member ``i`` keeps block ``i``
    along ``scatter_dimension`` (a dimension of size ``axis_size`` that is removed, or with
    ``tiled`` a dimension split into ``axis_size`` blocks)."""
    name = "reduce_scatter"
    collective = True
    no_fold = True     # its value depends on the device running it

    def impl(self, x, axis_name, scatter_dimension, axis_size, tiled, axis_index_groups=None):
        axes = _names(axis_name)
        if _spmd(axes) is None:
            _check_bound(axes)

        def per_group(members):
            vals = [np.asarray(v) for _, v in members]
            total = PSum.combine(vals)
            n = len(vals)
            if tiled:
                return list(np.split(total, n, axis=scatter_dimension))
            return [np.take(total, i, axis=scatter_dimension) for i in range(n)]
        return _rt.collective("reduce_scatter", axes, _where(), np.asarray(x), per_group,
                              index_groups=axis_index_groups)

    def vma_rule(self, avals, axis_name, **params):
        """Inside shard_map the result varies over the collective's axes (and the
        operand's)."""
        from jaxlite._src.sharding.vma import axes_tuple
        return [set(avals[0].vma) | set(axes_tuple(axis_name))]

    def abstract_eval(self, x, axis_name, scatter_dimension, axis_size, tiled, axis_index_groups=None):
        check_sum_states("psum_scatter", x, _names(axis_name))
        _check_bound(_names(axis_name))
        shape = list(x.shape)
        k = scatter_dimension
        if tiled:
            if shape[k] % axis_size:
                raise ValueError(f"psum_scatter operand dimension {k} of size {shape[k]} is not "
                                 f"divisible by the axis size {axis_size}.")
            shape[k] //= axis_size
        else:
            if shape[k] != axis_size:
                raise ValueError(f"psum_scatter operand dimension {k} must have the axis size "
                                 f"{axis_size}, got {shape[k]}.")
            del shape[k]
        return ShapedArray(shape, x.dtype, x.weak_type)

    def jvp(self, primals, tangents, **params):
        return self.bind(primals[0], **params), self.bind(u.instantiate(tangents[0]), **params)

    def transpose(self, ct, x, axis_name, scatter_dimension, axis_size, tiled, axis_index_groups=None):
        if u.is_zero(ct):
            return [None]
        return [all_gather_p.bind(ct, axis_name=axis_name, all_gather_dimension=scatter_dimension,
                                  axis_size=axis_size, tiled=tiled,
                         axis_index_groups=axis_index_groups)]

    def batch_collective(self, trace, vals, dims, axis_name, scatter_dimension, axis_size,
                         tiled, axis_index_groups=None):
        _no_vmapped_groups(axis_index_groups)
        _one_vmapped_axis("reduce_scatter", axis_name, "psum_scatter over 'i' then over 'j'")
        from jaxlite._src.prims.shape import reshape_p
        (x,), (d,) = vals, dims
        n = trace.axis_size
        x = bdim_at_front(x, d, n)           # (members, ...operand)
        k = scatter_dimension + 1
        if tiled:                            # split the dimension into (members, block)
            shape = list(u.aval(x).shape)
            shape[k:k + 1] = [n, shape[k] // n]
            x = reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None, sharding=None)
        total = sum_members(x, 0, n)   # (the members in order, as the threads add them)
        return moveaxis(total, k - 1, 0), 0

    def batch(self, size, args, dims, axis_name, scatter_dimension, axis_size, tiled, axis_index_groups=None):
        x = moveaxis(args[0], dims[0], 0)
        return self.bind(x, axis_name=axis_name, scatter_dimension=scatter_dimension + 1,
                         axis_size=axis_size, tiled=tiled,
                         axis_index_groups=axis_index_groups), 0


class PPermute(Primitive):
    """Send each member's operand to another: ``perm`` is a tuple of (source, dest) pairs;
    members nobody sends to get zeros."""
    name = "ppermute"
    collective = True
    no_fold = True     # its value depends on the device running it

    def impl(self, x, axis_name, perm):
        axes = _names(axis_name)
        if _spmd(axes) is None:
            _check_bound(axes)
        src_of = {d: s for s, d in perm}

        def per_group(members):
            vals = [np.asarray(v) for _, v in members]
            return [vals[src_of[i]] if i in src_of else np.zeros_like(vals[i])
                    for i in range(len(vals))]
        return _rt.collective("ppermute", axes, _where(), np.asarray(x), per_group)

    def vma_rule(self, avals, axis_name, **params):
        """Inside shard_map the result varies over the collective's axes (and the
        operand's)."""
        from jaxlite._src.sharding.vma import axes_tuple
        return [set(avals[0].vma) | set(axes_tuple(axis_name))]

    def sharding_rule(self, avals, **params):
        """Moves whole operands between the devices of its axes: dimensions keep their
        layout."""
        return [tuple(range(avals[0].ndim))]

    def abstract_eval(self, x, axis_name, perm):
        _check_bound(_names(axis_name), "pvary" if vma.current() is not None else "ppermute")
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def batch_collective(self, trace, vals, dims, axis_name, perm):
        _one_vmapped_axis("ppermute", axis_name, "a ppermute over each name")
        from jaxlite._src.prims.shape import concatenate_p, slice_p
        size = trace.axis_size
        (x,), (d,) = vals, dims
        x = bdim_at_front(x, d, size)
        shape = tuple(u.aval(x).shape)
        src_of = {dst: src for src, dst in perm}
        zero = None
        parts = []
        for i in range(size):
            if i in src_of:
                s = src_of[i]
                parts.append(slice_p.bind(x, start_indices=(s,) + (0,) * (len(shape) - 1),
                                          limit_indices=(s + 1,) + shape[1:], strides=None))
            else:
                zero = zero if zero is not None else u.zeros(ShapedArray((1,) + shape[1:],
                                                                         u.aval(x).dtype))
                parts.append(zero)
        return concatenate_p.bind(*parts, dimension=0), 0

    def jvp(self, primals, tangents, **params):
        return self.bind(primals[0], **params), self.bind(u.instantiate(tangents[0]), **params)

    def batch(self, size, args, dims, **params):
        # permuting over another named axis moves whole batched operands alike
        return self.bind(args[0], **params), dims[0]

    def transpose(self, ct, x, axis_name, perm):
        if u.is_zero(ct):
            return [None]
        return [self.bind(ct, axis_name=axis_name, perm=tuple((d, s) for s, d in perm))]


class AxisIndex(Primitive):
    """This member's index along the named axis."""
    name = "axis_index"
    collective = True
    no_fold = True     # its value depends on the device running it
    batches_axis_tuples = True   # the vmap rule counts row-major over a tuple of names

    def impl(self, axis_name):
        axes = _names(axis_name)
        c = _spmd(axes)
        if c is None:
            _check_bound(axes)
        return np.int32(c.axis_index(axes))

    def vma_rule(self, avals, axis_name):
        """Inside shard_map the index varies over its axes."""
        from jaxlite._src.sharding.vma import axes_tuple
        return [set(axes_tuple(axis_name))]

    def abstract_eval(self, axis_name):
        _check_bound(_names(axis_name), "axis_index")
        return ShapedArray((), np.int32, False)

    def batch_collective(self, trace, vals, dims, axis_name):
        from jaxlite._src.prims.shape import iota_p
        names = _names(axis_name)
        idx = iota_p.bind(dtype=np.dtype(np.int32), shape=(trace.axis_size,), dimension=0,
                          sharding=None)
        if len(names) == 1:
            return idx, 0
        # the index along a tuple of axes counts row-major over them: this trace's axis
        # has the stride of the axes after it; the others come from the enclosing traces
        k = names.index(trace.axis_name)
        sizes = [trace.axis_size if n == trace.axis_name else axis_size(n) for n in names]
        stride = math.prod(sizes[k + 1:])
        if stride != 1:
            idx = u.mul(idx, u.const(idx, stride))
        for j, other in enumerate(names):
            if j != k:
                term = self.bind(axis_name=other)
                st = math.prod(sizes[j + 1:])
                if st != 1:
                    term = u.mul(term, u.const(term, st))
                idx = u.add(idx, u.bcast(term, (trace.axis_size,)))
        return idx, 0


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _no_vmapped_groups(groups):
    if groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap collectives. "
                                  "Please open a feature request!")


def _one_vmapped_axis(name, axis_name, hint, jax_has_it=False):
    """vmap's rules of the collectives below move data along one axis: over a tuple of
    names they would gather or send in the wrong order, so they refuse (JAX does too)."""
    names = _names(axis_name)
    if len(names) > 1:
        raise NotImplementedError(
            f"{name} over several axis names {names} inside vmap is not supported"
            f"{' yet' if jax_has_it else ' (nor is it in JAX)'}. Apply it one name at a time, "
            f"e.g. {hint}; under pmap or shard_map (devices, not vmap) a tuple of names "
            f"works.")


class AllToAll(Primitive):
    """Member i splits its operand along ``split_axis`` into one chunk per member, sends chunk
    j to member j, and concatenates what it receives along ``concat_axis`` (in member order;
    without ``tiled`` the split axis is removed and the received chunks are stacked)."""
    name = "all_to_all"
    collective = True
    no_fold = True     # its value depends on the device running it

    def impl(self, x, axis_name, split_axis, concat_axis, axis_index_groups=None,
             tiled=False):
        axes = _names(axis_name)
        if _spmd(axes) is None:
            _check_bound(axes)

        def per_group(members):
            vals = [np.asarray(v) for _, v in members]
            n = len(vals)
            chunks = [np.split(v, n, axis=split_axis) for v in vals]
            out = []
            for i in range(n):
                parts = [chunks[j][i] for j in range(n)]
                out.append(np.concatenate(parts, axis=concat_axis))
            return out
        return _rt.collective("all_to_all", axes, _where(), np.asarray(x), per_group,
                              index_groups=axis_index_groups)

    def vma_rule(self, avals, axis_name, **params):
        """Inside shard_map the result varies over the collective's axes (and the
        operand's)."""
        from jaxlite._src.sharding.vma import axes_tuple
        return [set(avals[0].vma) | set(axes_tuple(axis_name))]

    def abstract_eval(self, x, axis_name, split_axis, concat_axis, axis_index_groups=None,
                      tiled=False):
        _check_bound(_names(axis_name))
        n = len(axis_index_groups[0]) if axis_index_groups else axis_size(axis_name)
        shape = list(x.shape)
        if shape[split_axis] % n:
            raise ValueError(f"all_to_all: the split axis {split_axis} of size "
                             f"{shape[split_axis]} is not divisible by the axis size {n}.")
        shape[split_axis] //= n
        shape[concat_axis] *= n
        return ShapedArray(shape, x.dtype, x.weak_type)

    def jvp(self, primals, tangents, **params):
        return self.bind(primals[0], **params), self.bind(u.instantiate(tangents[0]), **params)

    def transpose(self, ct, x, axis_name, split_axis, concat_axis, **params):
        if u.is_zero(ct):
            return [None]
        return [self.bind(ct, axis_name=axis_name, split_axis=concat_axis,
                          concat_axis=split_axis, **params)]

    def batch_collective(self, trace, vals, dims, axis_name, split_axis, concat_axis,
                         axis_index_groups=None, tiled=False):
        _no_vmapped_groups(axis_index_groups)
        _one_vmapped_axis("all_to_all", axis_name, "an all_to_all over each name",
                          jax_has_it=True)
        from jaxlite._src.prims.shape import reshape_p
        (x,), (d,) = vals, dims
        n = trace.axis_size
        x = bdim_at_front(x, d, n)               # (sources j, ...operand)
        shape = list(u.aval(x).shape)
        s = split_axis + 1                       # split into (destination i, chunk)
        shape[s:s + 1] = [n, shape[s] // n]
        x = reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None, sharding=None)
        x = moveaxis(x, s, 0)                    # (i, j, ...operand with chunks)
        k = concat_axis + 1
        x = moveaxis(x, 1, k)                    # sources just before the concat axis
        shape = list(u.aval(x).shape)
        shape[k:k + 2] = [shape[k] * shape[k + 1]]
        x = reshape_p.bind(x, new_sizes=tuple(shape), dimensions=None, sharding=None)
        return x, 0

    def batch(self, size, args, dims, axis_name, split_axis, concat_axis, **params):
        x = moveaxis(args[0], dims[0], 0)
        return self.bind(x, axis_name=axis_name, split_axis=split_axis + 1,
                         concat_axis=concat_axis + 1, **params), 0


class PVary(Primitive):
    """``pvary[axes]`` (``lax.pcast(x, axes, to='varying')``): inside shard_map, mark a
    value as varying over manual ``axes`` (its type gains them). The identity on values,
    and so is its transpose: jaxlite sums the cotangents of a value replicated over some
    axes where it enters shard_map (``ShardMap.transpose``)."""
    name = "pvary"

    def impl(self, x, axes):
        if _rt.current() is None and not env_axes():
            raise ValueError("pvary should be called under jax.shard_map. (lax.pcast(x, axes, "
                             "to='varying') marks a value inside a shard_map body as varying "
                             "over manual mesh axes.)")
        return x

    def abstract_eval(self, x, axes):
        if not env_axes():
            self.impl(None, axes)
        _check_bound(axes, "pvary")
        return ShapedArray(x.shape, x.dtype, x.weak_type)

    def vma_rule(self, avals, axes):
        """The value varies over ``axes`` too (it must not already)."""
        if set(axes) & set(avals[0].vma):
            raise ValueError(f"Unsupported pcast from=varying, to='varying'. The value of type "
                             f"{avals[0].str_short(False)} already varies over "
                             f"{tuple(a for a in axes if a in avals[0].vma)}.")
        return [set(avals[0].vma) | set(axes)]

    def jvp(self, primals, tangents, axes):
        from jaxlite._src.prims import ad_util as u
        t = tangents[0]
        return self.bind(primals[0], axes=axes), \
            (t if u.is_zero(t) else self.bind(t, axes=axes))

    def transpose(self, ct, x, axes):
        from jaxlite._src.prims import ad_util as u
        if u.is_zero(ct):
            return [None]
        return [ct]

    def batch(self, size, args, dims, axes):
        return self.bind(args[0], axes=axes), dims[0]

    def lower_py(self, ctx, ins, axes):
        return ins[0]


psum_p, pmax_p, pmin_p = PSum(), PMax(), PMin()
pvary_p = PVary()
all_to_all_p = AllToAll()
all_gather_p, ppermute_p, axis_index_p = AllGather(), PPermute(), AxisIndex()
reduce_scatter_p = ReduceScatter()
AxisIndex.jvp = NOT_DIFFERENTIABLE   # integer-valued
