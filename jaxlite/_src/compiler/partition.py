"""The partitioner: sharded jit = one per-device program with explicit collectives.

Given a jaxpr and the shardings of its inputs (over one mesh), shardings are propagated
through the equations with each primitive's ``sharding_rule`` (which operand dimension
becomes which output dimension): elementwise ops, transposes, broadcasts keep the layout;
a dimension that is summed away (``reduce_sum``, the contracted dimensions of
``dot_general``) while split becomes a local reduction plus a ``psum`` (``pmax``/``pmin`` for
max/min reductions); where two operands disagree, or a primitive has no rule, operands are
all-gathered. The per-device program is traced with those collectives in it and run by the
shard_map machinery. Every inserted collective is recorded with the user line of the
equation that needed it and the reason (``Partitioned.notes``).
"""
from __future__ import annotations

import itertools
import math
import os

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import aval_of_value
from jaxlite._src.core.ir import ClosedJaxpr, Literal
from jaxlite._src.core.source_info import NotedSourceInfo, SourceInfo, swap_source_override, \
    user_frame
from jaxlite._src.core.trace import Tracer, ctx
from jaxlite._src.compiler.backward import backward_layouts, first_split
from jaxlite._src.interpreters.staging import StagingTrace, trace_to_jaxpr
from jaxlite._src.prims.collectives import all_gather_p, axis_env, axis_index_p, psum_p, \
    pmax_p, pmin_p
from jaxlite._src.prims.dynamic_slice import dynamic_slice_p
from jaxlite._src.prims.shape import broadcast_in_dim_p
from jaxlite._src.prims import elementwise as ew
from jaxlite._src.sharding.mesh import Mesh
from jaxlite._src.sharding.partition_spec import PartitionSpec, entry_axes
from jaxlite._src.sharding import vma
from jaxlite._src.sharding.types import untyped
from jaxlite._src.sharding.shardings import NamedSharding, PositionalSharding, \
    SingleDeviceSharding

__all__ = ["partition", "Partitioned", "common_mesh", "sharding_hints"]

# The partitioner types a per-device result from the global program's (its shape divided by
# the blocks); with CHECK_KNOWN_TYPES it also runs the primitive's type rule and compares
# (tests turn it on: JAXLITE_CHECK_PARTITION=1).
KNOWN_TYPES = True
# backward propagation (compiler/backward.py) before the forward lowering
BACKWARD = os.environ.get("JAXLITE_PARTITION_BACKWARD", "1") != "0"
CHECK_KNOWN_TYPES = os.environ.get("JAXLITE_CHECK_PARTITION", "") not in ("", "0")

_Extended = dtypes.ExtendedDType

# Reductions over a split dimension: a local reduction, then the collective of the
# primitive's ``all_reduce`` computation (XLA's all-reduce names it by its combining op).
_ALL_REDUCE = {"add": psum_p, "maximum": pmax_p, "minimum": pmin_p}


class Partitioned:
    """A partitioned program: the per-device jaxpr, its mesh and the layouts of its inputs
    and outputs, and why each collective was inserted."""

    def __init__(self, body, mesh, in_specs, out_specs, notes, positional):
        self.body = body
        self.mesh = mesh
        self.in_specs = in_specs
        self.out_specs = out_specs
        self.notes = notes
        self.positional = positional
        # the extended dtype (key arrays) of each input and output whose data the program
        # takes and gives (None: no key array crosses the program's boundary as data)
        self.in_ext = self.out_ext = None

    def explain(self):
        """One line per inserted collective: the user line, the equation and the reason."""
        if not self.notes:
            return "no collectives: every device computes its block from its own data"
        return "\n".join(self.notes)


# -- a mesh all input shardings can be named on ------------------------------------------------

def _named_on(sharding, mesh, ndim):
    """A PartitionSpec over ``mesh`` placing rank-``ndim`` arrays as ``sharding`` does (None:
    an uncommitted value, replicated)."""
    if sharding is None:
        return PartitionSpec()
    if isinstance(sharding, NamedSharding) and sharding.mesh == mesh:
        return sharding.spec
    if sharding.is_fully_replicated and set(sharding._device_assignment) == \
            set(mesh.devices.flat):
        return PartitionSpec()
    names = mesh.axis_names
    choices = [()] + [p for r in range(1, len(names) + 1)
                      for p in itertools.permutations(names, r)]
    for combo in itertools.product(choices, repeat=ndim):
        used = [a for c in combo for a in c]
        if len(used) != len(set(used)):
            continue
        spec = PartitionSpec(*[c if len(c) > 1 else (c[0] if c else None) for c in combo])
        if NamedSharding(mesh, spec).is_equivalent_to(sharding, ndim):
            return spec
    return None


def common_mesh(shardings, ndims):
    """(mesh, specs, positional) naming every sharding on one mesh, or None."""
    named = [s for s in shardings if isinstance(s, NamedSharding)]
    positional = any(isinstance(s, PositionalSharding) for s in shardings)
    placed = [(s, nd) for s, nd in zip(shardings, ndims) if s is not None]
    if not placed:
        return None
    cands = []
    if named:
        cands.append(named[0].mesh)
    # meshes made from the most finely split sharding's tile
    for s, nd in sorted(placed, key=lambda t: -t[0]._tile_cached(t[1]).size
                        // t[0]._tile_cached(t[1]).shape[-1]):
        tile = s._tile_cached(nd)
        shape = [p for p in tile.shape if p > 1] or [tile.size]
        cands.append(Mesh(tile.reshape(shape), tuple(f"_d{k}" for k in range(len(shape)))))
        break
    for mesh in cands:
        specs = [_named_on(s, mesh, nd) for s, nd in zip(shardings, ndims)]
        if all(sp is not None for sp in specs):
            return mesh, specs, positional
    return None


# -- specs as tuples of axis tuples ------------------------------------------------------------

def _dims(spec, ndim):
    parts = list(spec) + [None] * (ndim - len(spec))
    return tuple(entry_axes(p) for p in parts[:ndim])


def _spec(dims):
    parts = [d if len(d) > 1 else (d[0] if d else None) for d in dims]
    while parts and parts[-1] is None:
        parts.pop()
    return PartitionSpec(*parts)


class _Builder:
    """Traces the per-device program equation by equation."""

    def __init__(self, mesh):
        self.mesh = mesh
        self.sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
        self.notes = []
        self.desired = {}      # var -> the layout a later step will move it to
        # results typed from the program's own types (not by running type rules again)
        self.known_types = KNOWN_TYPES
        self._starts = {}      # (trace, axes, block size) -> this device's block offset
        self.rules = {}        # equation -> its primitive's sharding_rule answer

    def desired_layout(self, var):
        """The layout a later equation (a sharding constraint) or the program's
        ``out_shardings`` will move ``var`` to (None: nothing asks): a primitive that can
        produce that layout directly (a random sample drawn block by block) does so."""
        return self.desired.get(var)

    def _note_desired(self, jaxpr):
        for e in jaxpr.eqns:
            hook = getattr(e.primitive, "operand_layouts", None)
            if hook is None:
                continue
            for v, want in zip(e.invars, hook(e)):
                if want is None or type(v) is Literal:
                    continue
                d = self.mesh_dims(e.primitive, want[0], want[1])
                if d is not None:
                    self.desired.setdefault(v, d)

    def mesh_dims(self, prim, sharding, ndim):
        """``sharding`` as per-dimension axis tuples on this program's mesh (None if it
        cannot be named there)."""
        spec = _named_on(sharding, self.mesh, ndim)
        return None if spec is None else _dims(spec, ndim)

    def factor(self, axes):
        return math.prod(self.sizes[a] for a in axes)

    # collectives on local blocks
    def gather(self, x, dims, k, why, src):
        axes = dims[k]
        n = self.factor(axes)
        note = f"all_gather dimension {k} over {axes}: {why() if callable(why) else why}"
        x = self.collective(all_gather_p, note, src, x, axis_name=axes,
                            axis_index_groups=None, all_gather_dimension=k, axis_size=n,
                            tiled=True)
        return x, dims[:k] + ((),) + dims[k + 1:]

    def collective(self, prim, note, src, *args, **params):
        """Bind collective ``prim`` in the per-device program, recording ``note`` (why it
        is there) in the program's notes and beside its line of generated code."""
        self.notes.append(f"{src}: {note}")
        if not isinstance(src, SourceInfo):    # (a program output: no equation's line)
            return prim.bind(*args, **params)
        prev = swap_source_override(NotedSourceInfo(src, note))
        try:
            return prim.bind(*args, **params)
        finally:
            swap_source_override(prev)

    def split(self, x, dims, k, axes, why, src):
        """Keep this device's block of replicated dimension k (no communication)."""
        shape = aval_of_value(x).shape
        n = self.factor(axes)
        block = shape[k] // n
        key = (ctx.trace, tuple(axes), block)      # (one index per program and block size)
        start = self._starts.get(key)
        if start is None:
            idx = axis_index_p.bind(axis_name=axes if len(axes) > 1 else axes[0])
            start = self._starts[key] = ew.mul_p.bind(idx, np.int32(block))
        zero = np.int32(0)
        starts = [start if j == k else zero for j in range(len(shape))]
        sizes = tuple(block if j == k else s for j, s in enumerate(shape))
        y = None
        if self.known_types:     # (the block's type is known: no type rule to run)
            y = self._stage_known(dynamic_slice_p, [x] + starts, dict(slice_sizes=sizes),
                                  aval_of_value(x).update(shape=sizes), (), user_frame(2))
        if y is None:
            y = dynamic_slice_p.bind(x, *starts, slice_sizes=sizes)
        return y, dims[:k] + (tuple(axes),) + dims[k + 1:]

    def replicate(self, x, dims, why, src):
        for k in range(len(dims)):
            if dims[k]:
                x, dims = self.gather(x, dims, k, why, src)
        return x, dims

    def local_aval(self, aval, dims):
        """The per-device block aval of ``aval`` laid out as ``dims``."""
        return aval.update(shape=tuple(s // self.factor(a) for s, a in zip(aval.shape, dims)))

    def sub_program(self, closed, in_dims, out_want=None, why="", src=None):
        """Partition ``closed`` (a body of control flow) for operands laid out as
        ``in_dims``: (the per-device ClosedJaxpr, its outputs' layouts). ``out_want`` (a
        layout or None per output) moves those outputs to the given layouts, as a loop's
        carry must come back as it went in."""
        store = {}

        def body(*blocks):
            outs = self.run(closed.jaxpr, closed.consts, list(zip(blocks, in_dims)))
            res, lays = [], []
            for k, (x, d) in enumerate(outs):
                want = None if out_want is None else out_want[k]
                if want is not None and d != want:
                    x, d = self.relayout(x, d, want, why, src)
                res.append(x)
                lays.append(d)
            store["lays"] = lays
            return res
        j, _, consts = trace_to_jaxpr(body, [self.local_aval(a, d) for a, d in
                                             zip(closed.in_avals, in_dims)])
        return ClosedJaxpr(j, consts), store["lays"]

    def settle_carry(self, closed, in_dims, start, n):
        """Layouts for a loop's carry (``in_dims[start:start + n]``, the first ``n``
        outputs of body ``closed``): a replicated dimension the body's result comes out
        split is split on the way in too (a local slice), as GSPMD lets the loop body's
        sharding flow into its carry."""
        mark = len(self.notes)
        _, lays = self.sub_program(closed, in_dims)
        del self.notes[mark:]          # a trial: its collectives are not in the program
        out = []
        for c, lay in zip(in_dims[start:start + n], lays[:n]):
            new, used = list(c), {a for axes in c for a in axes}
            for k, (ck, lk) in enumerate(zip(c, lay)):
                if not ck and lk and not set(lk) & used:
                    new[k] = lk
                    used |= set(lk)
            out.append(tuple(new))
        return out

    def split_to(self, x, dims, want, why, src):
        """Split whole ``x`` (layout ``dims``) to ``want`` by local slices."""
        for k, axes in enumerate(want):
            if axes:
                x, dims = self.split(x, dims, k, axes, why, src)
        return (x, dims)

    def relayout(self, x, dims, want, why, src):
        """Move ``x`` from layout ``dims`` to ``want``."""
        for k in range(len(dims)):
            if dims[k] != want[k] and dims[k]:
                x, dims = self.gather(x, dims, k, why, src)
        for k in range(len(dims)):
            if dims[k] != want[k]:
                x, dims = self.split(x, dims, k, want[k], why, src)
        return x, dims

    # one equation
    def eqn(self, eqn, ins):
        prim, params = eqn.primitive, eqn.params
        src = eqn.source_info
        h = _hooks(prim)
        if h.partition is not None:
            res = h.partition(self, eqn, ins, self.mesh_dims)
            if res is not None:    # (None: the hook does not apply; partition generically)
                return res
        if h.inline_param is not None:
            # a call (inner jit, custom derivative body): its equations are partitioned in
            # place, as the compiler inlines them
            closed = params[h.inline_param]
            return self.run(closed.jaxpr, closed.consts, ins)
        vals, layouts = [v for v, _ in ins], [d for _, d in ins]
        out_avals = [v.aval for v in eqn.outvars]
        multiple = prim.multiple_results
        if not any(any(d) for d in layouts):
            # every operand whole on every device: so is every result, typed as in the
            # program (unless the primitive has its own rule)
            if not multiple and self.known_types:
                y = self._stage_known(prim, vals, params, out_avals[0], (), src)
                if y is not None:
                    return [(y, ((),) * out_avals[0].ndim)]
        avals = [a.aval for a in eqn.invars]
        rule = h.rule
        dims_map = None
        same_rank = not multiple or len({a.ndim for a in out_avals}) == 1
        if rule is not None and (same_rank or h.leading_batch):
            if eqn in self.rules:      # (asked by the backward pass already)
                dims_map = self.rules[eqn]
            else:
                try:
                    dims_map = rule(avals, **params)
                except Exception:  # noqa: BLE001 - no usable rule: replicate
                    dims_map = None
        if dims_map is None:
            if any(any(d) for d in layouts):
                why = f"{prim.name} has no sharding rule, so it runs on whole operands"
                ins2 = [self.replicate(v, d, why, src) for v, d in ins]
                vals = [v for v, _ in ins2]
            outs = prim.bind(*vals, **params)
            outs = outs if multiple else [outs]
            return [(o, ((),) * o.aval.ndim) for o in outs]
        out_aval = out_avals[0]
        # output layout: the first operand's split of each output dimension wins
        out, used = first_split(layouts, dims_map, out_aval.ndim)
        # (a result dimension its blocks would not divide evenly is computed whole)
        out = [a if not a or out_aval.shape[k] % self.factor(a) == 0 else ()
               for k, a in enumerate(out)]
        used = {a for axes in out for a in axes}
        # dimensions the primitive needs whole on every device (a slice, a sort or cumsum
        # axis, ...): computed gathered, then the output gets the layout XLA gives it
        whole = h.whole_dims
        final = None
        if whole is not None:
            final = list(out)
            for m, ks in zip(dims_map, whole(avals, **params)):
                for k in ks:
                    if m[k] is not None:
                        out[m[k]] = ()
            if h.resplit_dims is not None:
                keep = h.resplit_dims(eqn)
                final = [f if out[k] or k in keep else () for k, f in enumerate(final)]
        reducer = _ALL_REDUCE.get(h.all_reduce)
        pending = None
        contracted = [tuple(d[k] for k, od in enumerate(m) if od is None)
                      for d, m in zip(layouts, dims_map)]
        if reducer is not None and any(any(c) for c in contracted):
            # split contracted dimensions: local reduction + collective, when every operand
            # splits its contracted dimensions the same way and on axes the output leaves
            cs = [c for c in contracted]
            ok = len({c for c in cs}) == 1 and not any(set(a) & used for a in cs[0])
            if ok:
                pending = tuple(a for c in cs[0] for a in c)
        new_vals, new_dims = [], []
        for v, d, m in zip(vals, layouts, dims_map):
            want = tuple((out[od] if od is not None else
                          (d[k] if pending is not None else ())) for k, od in enumerate(m))
            if d != want:
                def why(prim=prim, want=want, d=d, out=tuple(out)):
                    return (f"{prim.name} needs operand layout {_spec(want)} (it has "
                            f"{_spec(d)}) to match its output {_spec(out)}")
                v, d = self.relayout(v, d, want, why, src)
            new_vals.append(v)
            new_dims.append(d)
        if h.local_params is not None:
            params = h.local_params(params, [tuple(self.factor(a) for a in d)
                                             for d in new_dims],
                                    tuple(self.factor(a) for a in out), out_aval)
        y = None
        if not multiple and final is None and self.known_types:
            y = self._stage_known(prim, new_vals, params, out_aval, out, src)
        if y is None:
            y = prim.bind(*new_vals, **params)
        if multiple:
            if same_rank:
                return [self._resplit(o, out, final, src, prim) for o in y]
            return [self._resplit(o, _fit(out, a, out_aval), None if final is None else
                                  _fit(final, a, out_aval), src, prim)
                    for o, a in zip(y, out_avals)]
        if final is not None:
            return [self._resplit(y, out, final, src, prim)]
        if pending:
            (y,) = self.collective(reducer, f"{reducer.name} over {pending}: {prim.name} "
                                   f"reduces a dimension split over {pending}; each device "
                                   "reduces its block", src, y, axes=pending,
                                   axis_index_groups=None)
        return [(y, tuple(out))]

    def _stage_known(self, prim, vals, params, out_aval, out, src):
        """Stage the per-device equation with its result type known: the global result's
        with each dimension divided by the number of blocks it is split into (None when
        that does not apply: a value not being traced, typed or key operands, uneven
        blocks; the primitive is then bound and its type rule run)."""
        trace = ctx.trace
        if type(trace) is not StagingTrace or vma.current() is not None or \
                getattr(out_aval, "sharding", None) is not None or \
                isinstance(out_aval.dtype, _Extended):
            return None
        traced = False
        for v in vals:
            if isinstance(v, Tracer):
                if v._trace is not trace:
                    return None
                a = v.var.aval
                if getattr(a, "sharding", None) is not None or isinstance(a.dtype, _Extended):
                    return None
                traced = True
            elif isinstance(getattr(v, "dtype", None), _Extended):
                return None
        if not traced and prim.fold is not None:
            return None      # (constant operands: the primitive may fold them)
        shape = []
        for s, axes in zip(out_aval.shape, out):
            n = self.factor(axes) if axes else 1
            if s % n:
                return None
            shape.append(s // n)
        aval = out_aval.update(shape=tuple(shape)) if any(out) else out_aval
        if CHECK_KNOWN_TYPES:
            want = prim.abstract_eval(*[aval_of_value(v) for v in vals], **params)
            # (weak types may differ: a literal operand is read as a NumPy value, where
            # the program's type keeps its weak type)
            if (want.shape, want.dtype) != (aval.shape, aval.dtype):
                raise AssertionError(f"partitioner: {prim.name} gives {want.str_short()} "
                                     f"per device, not {aval.str_short()} ({params})")
        return trace.stage_known(prim, vals, params, aval, src)

    def _resplit(self, y, out, final, src, prim):
        """Split output ``y`` (layout ``out``) to ``final`` where its sizes divide evenly
        (no communication: each device keeps its block)."""
        dims = tuple(out)
        if final is None:
            return (y, dims)
        shape = aval_of_value(y).shape
        for k, axes in enumerate(final):
            if axes and not dims[k] and shape[k] % self.factor(axes) == 0:
                y, dims = self.split(y, dims, k, axes, f"{prim.name} keeps its operand's "
                                     "layout (computed on whole dimensions)", src)
        return (y, dims)

    def run(self, jaxpr, consts, ins):
        """Partition the equations of ``jaxpr`` on operands ``ins`` ((block, layout) per
        input); returns (block, layout) per output."""
        env = {v: x for v, x in zip(jaxpr.invars, ins)}
        self._note_desired(jaxpr)
        # backward propagation: values the forward pass would leave whole but whose uses all
        # take them split are computed on blocks, and a whole operand an equation takes split
        # is given to it as this device's block (a local slice, once per value and layout)
        early, per_use = backward_layouts(jaxpr, [d for _, d in ins], self.desired,
                                          self.factor, self.rules) \
            if BACKWARD and not self.mesh.explicit_axes else ({}, {})
        # (over Explicit axes a value's layout is its type's: nothing is free to choose)
        for v, want in early.items():
            self.desired.setdefault(v, want)
        for v, c in zip(jaxpr.constvars, consts):
            c = _whole(c)
            env[v] = (c, ((),) * np.ndim(c))
        blocks = {}

        def take(i, k, a, o):
            want = per_use.get((i, k))
            if want is None or any(o[1]):
                return o
            got = blocks.get((a, want))
            if got is None:
                got = blocks[(a, want)] = self.split_to(o[0], o[1], want, "", None)
            return got

        def read(a):
            if type(a) is Literal:
                return (a.val, ((),) * a.aval.ndim)
            return env[a]
        prev = swap_source_override(None)
        try:
            for i, eqn in enumerate(jaxpr.eqns):
                swap_source_override(eqn.source_info)
                args = [read(a) for a in eqn.invars]
                if per_use:
                    args = [take(i, k, a, o) if type(a) is not Literal else o
                            for k, (a, o) in enumerate(zip(eqn.invars, args))]
                outs = self.eqn(eqn, args)
                for v, o in zip(eqn.outvars, outs):
                    env[v] = o
        finally:
            swap_source_override(prev)
        return [read(v) for v in jaxpr.outvars]



class _Hooks:
    """A primitive's partitioning rules, looked up once per primitive."""
    __slots__ = ("partition", "inline_param", "rule", "leading_batch", "whole_dims",
                 "local_params", "resplit_dims", "all_reduce")

    def __init__(self, prim):
        self.partition = getattr(prim, "partition", None)
        self.inline_param = getattr(prim, "inline_param", "jaxpr") if \
            getattr(prim, "inlinable", False) else None
        self.rule = getattr(prim, "sharding_rule", None)
        self.leading_batch = getattr(prim, "leading_batch_results", False)
        self.whole_dims = getattr(prim, "whole_dims", None)
        self.local_params = getattr(prim, "local_params", None)
        # the result dimensions computed whole that are split again as the operand was
        # (None: all that divide evenly)
        self.resplit_dims = getattr(prim, "resplit_dims", None)
        # a reduction over a split dimension: local reductions, then an all-reduce of this
        # computation ("add": psum)
        self.all_reduce = getattr(prim, "all_reduce", None)


_hooks_of = {}


def _hooks(prim):
    h = _hooks_of.get(prim)
    if h is None:
        h = _hooks_of[prim] = _Hooks(prim)
    return h


def _whole(c):
    """A constant of the per-device program as one whole value on every device (an array
    split over devices, or keys over such data, gathered once here)."""
    from jaxlite._src.core import dtypes
    from jaxlite._src.runtime.array import ArrayImpl
    dt = getattr(c, "dtype", None)
    if dt is not None and dtypes.is_extended(dt) and not isinstance(c, ArrayImpl):
        data = dt.to_physical(c)
        if getattr(getattr(data, "_sharding", None), "num_devices", 1) > 1:
            return dt.from_physical(ArrayImpl(np.asarray(data), False))
        return c
    if isinstance(c, ArrayImpl) and getattr(c, "_sharding", None) is not None and \
            c._sharding.num_devices > 1:
        return np.asarray(c)
    return c


def _fit(layout, aval, first):
    """The layout of a result of rank other than the first result's (``first``), whose
    leading dimensions are the first result's (a factorization's batch dimensions): the
    first result's splits of the leading dimensions of the same size."""
    return tuple(layout[k] if k < len(layout) and k < first.ndim and
                 aval.shape[k] == first.shape[k] else () for k in range(aval.ndim))


def sharding_hints(jaxpr):
    """(sharding, rank) pairs the program's equations ask for by themselves (a sharding
    constraint's, a shard_map's layouts: a primitive's ``sharding_hints``)."""
    out = []
    for e in jaxpr.eqns:
        hints = getattr(e.primitive, "sharding_hints", None)
        if hints is not None:
            out.extend(hints(e))
    return out


def partition(closed, in_shardings, out_shardings=None):
    """Partition ``closed`` for inputs placed by ``in_shardings`` (one per input); returns a
    Partitioned, or None when the shardings cannot be named on one mesh."""
    in_ext = [a.dtype if dtypes.is_extended(a.dtype) else None for a in closed.in_avals]
    out_ext = [a.dtype if dtypes.is_extended(a.dtype) else None for a in closed.out_avals]
    if any(out_ext) or any(e is not None and s is not None
                           for e, s in zip(in_ext, in_shardings)):
        # key arrays leave the program or come split over devices: partition its physical
        # form (keys as their data, whose trailing key dimensions stay whole); the caller
        # passes keys' data and wraps results again (``Partitioned.in_ext/out_ext``)
        from jaxlite._src.compiler.physical import physicalize
        closed = physicalize(closed)
    else:
        # (key arguments of a program returning arrays are read whole by every device)
        in_shardings = [None if e is not None else s for e, s in zip(in_ext, in_shardings)]
        in_ext = out_ext = None
    jaxpr = closed.jaxpr
    ndims = [v.aval.ndim for v in jaxpr.invars]
    hinted = sharding_hints(jaxpr)
    cm = common_mesh(list(in_shardings) + [s for s in (out_shardings or []) if s is not None]
                     + [s for s, _ in hinted],
                     ndims + [a.ndim for a, s in zip(closed.out_avals, out_shardings or [])
                              if s is not None] + [n for _, n in hinted])
    if cm is None:
        return None
    mesh, specs, positional = cm
    in_specs = specs[:len(ndims)]
    want_out = iter(specs[len(ndims):])
    out_want = [None if s is None else next(want_out) for s in (out_shardings or
                                                                [None] * len(jaxpr.outvars))]
    b = _Builder(mesh)
    for v, want in zip(jaxpr.outvars, out_want):
        if want is not None and type(v) is not Literal:
            b.desired[v] = _dims(want, v.aval.ndim)
    local_avals = []
    for v, sp in zip(jaxpr.invars, in_specs):
        d = _dims(sp, v.aval.ndim)
        local_avals.append(v.aval.update(shape=tuple(s // b.factor(a)
                                                     for s, a in zip(v.aval.shape, d))))
    store = {}

    def body(*blocks):
        ins = [(x, _dims(sp, v.aval.ndim)) for v, x, sp in zip(jaxpr.invars, blocks, in_specs)]
        outs = b.run(jaxpr, closed.consts, ins)
        res, layouts = [], []
        for (x, d), want in zip(outs, out_want):
            if want is not None and _dims(want, len(d)) != d:
                x, d = b.relayout(x, d, _dims(want, len(d)), "out_shardings asks for "
                                  f"{want}", "jit output")
            if isinstance(x, (np.ndarray, np.generic, int, float)):
                x = broadcast_in_dim_p.bind(np.asarray(x), shape=np.shape(x),
                                            broadcast_dimensions=tuple(range(np.ndim(x))),
                                            sharding=None)
            res.append(x)
            layouts.append(d)
        store["out"] = layouts
        return res

    with axis_env(mesh), untyped():
        j, tconsts, consts = trace_to_jaxpr(body, local_avals)
    if tconsts:
        return None
    out_specs = [_spec(d) for d in store["out"]]
    if mesh.explicit_axes:
        # over Explicit axes a result's sharding comes from its type (one entry per
        # dimension), or is the one asked for
        out_specs = [want if want is not None and _dims(want, len(d)) == d else
                     PartitionSpec(*(list(s) + [None] * (len(d) - len(s))))
                     for s, d, want in zip(out_specs, store["out"], out_want)]
    part = Partitioned(ClosedJaxpr(j, consts), mesh, [PartitionSpec(*s) for s in in_specs],
                       out_specs, b.notes, positional)
    part.in_ext, part.out_ext = in_ext, out_ext
    return part


def output_sharding(part, spec, ndim):
    """The Sharding of an output laid out by ``spec``: a NamedSharding on the program's mesh,
    or, when the inputs were PositionalShardings, the PositionalSharding of that layout."""
    s = NamedSharding(part.mesh, spec)
    if not part.positional:
        return s
    tile = s._tile_cached(ndim)
    if tile.size == 1:
        return SingleDeviceSharding(tile.flat[0])
    return PositionalSharding._from_tile(tile)
