"""Tier 2 of the compiler: elementwise clusters of a jaxpr fused into kernels.

The pass groups maximal clusters of elementwise equations over one shape (elementwise
primitives, ``convert_element_type``, ``select_n``, ``clamp`` and scalar
``broadcast_in_dim``; rank-0 operands and literals ride along as scalars) and lowers each
cluster one of two ways:

* **numba loop** (when numba is installed and not turned off with ``JAXLITE_NUMBA=0``): one
  pass over the elements computing the whole cluster in registers. Only for ops whose scalar
  code is exactly NumPy's (IEEE arithmetic, sqrt, comparisons, selection, float casts) on
  float32/float64/int32/int64/bool, compiled without fastmath: the results equal tier 1 bit
  for bit. Sums over leading axes of a cluster's value ride along (added row by row, NumPy's
  order for them). Rank-0 clusters go to numba only around an op tier 1 runs through a
  Python impl (division). Kernels: ``numba_kernels.py`` (disk cache, exactness rules).
* **loops** (numba): a loop primitive whose body is scalar code (``scan`` of a scalar body)
  becomes one compiled loop instead of a Python loop over a compiled body; the primitive
  writes the loop (its ``numba_loop`` method), ``numba_kernels.py`` the body's scalar code.
* **NumPy chunks** otherwise (transcendentals keep NumPy's SIMD loops, other dtypes keep
  NumPy's ufuncs): the cluster runs over cache-sized chunks (``CHUNK`` elements) writing
  into preallocated ``out=`` buffers, threaded over chunks for large arrays. Each op is the
  same NumPy call tier 1 makes, so the results are identical as well; with numba, each run
  of two or more numba-exact ufunc ops inside a chunk is one numba loop instead (one pass
  over the chunk; ``_numba_runs``), the transcendentals around it staying in NumPy's SIMD
  loops (the 50-op chain over 10M float32: 10% faster). Clusters smaller than
  ``2 * CHUNK`` elements gain nothing from chunking and stay op by op (their numba-able parts
  still go to numba).

Other reductions are not fused: a fused sum would add in another order than NumPy's
pairwise sum. Before grouping, an elementwise op read only by later elementwise ops of its
shape sinks to just before them (``_sink``), so it joins their cluster.
"""
from __future__ import annotations

import functools
import itertools
import linecache
import math
import os
import threading

import numpy as np

from jaxlite._src.compiler.codegen import LowerCtx, lower_jaxpr, _src_comment
from jaxlite._src.compiler.array_loops import array_loop_kernel, eqn_kernel
from jaxlite._src.compiler.numba_kernels import (
    FLOAT_KINDS, LoopKernel, NumbaGroup, chunk_run_kernel, emit_numba_group, loop_kernel,
    numba_expr_ok, numba_module)
from jaxlite._src.core.ir import ClosedJaxpr, Eqn, Literal, Var
from jaxlite._src.prims.base import Elementwise
from jaxlite._src.prims.conversion import clamp_p, convert_element_type_p, select_n_p
from jaxlite._src.prims.reductions import reduce_sum_p
from jaxlite._src.prims.shape import broadcast_in_dim_p

__all__ = ["lower_tier2", "plan", "Cluster", "LoopKernel", "numba_module", "CHUNK"]

CHUNK = 1 << 16                 # elements per chunk of a NumPy-chunked cluster
NUMPY_MIN = 2 * CHUNK           # smaller NumPy clusters stay op by op
# A numba call costs ~2 us, a NumPy op on a small array ~0.5-1 us: small clusters of fewer
# ops stay op by op. From NUMBA_MIN_SIZE elements a NumPy op costs ~2 us and more (allocation
# and a pass over memory per op), and two ops are worth a kernel.
NUMBA_MIN_OPS = 4
NUMBA_MIN_SIZE = 1024
THREAD_MIN = 1 << 20            # clusters this large run their chunks on several threads
THREADS = int(os.environ.get("JAXLITE_FUSION_THREADS", "0")) or min(os.cpu_count() or 1, 8)

_kernel_ids = itertools.count()

# ----------------------------------------------------------------------------- clustering


_plain_cache = {}


def _plain(dt):
    """Whether ``dt`` is a NumPy number/bool dtype (not float0, keys or records)."""
    ok = _plain_cache.get(dt)
    if ok is None:
        ok = _plain_cache[dt] = (isinstance(dt, np.dtype) and dt.kind in "biufcV"
                                 and dt.names is None)
    return ok


def _unit_bcast(s, shape):
    """Whether an operand of shape ``s`` broadcasts to ``shape`` through size-1 dimensions
    only (``add(x:f32[64,64], b:f32[1,64])``)."""
    return len(s) == len(shape) and s != shape and all(a == b or a == 1
                                                       for a, b in zip(s, shape))


def _bcast_eqn(eqn):
    """Whether an operand of ``eqn`` broadcasts through size-1 dimensions (numba clusters
    index it; NumPy chunks cannot slice it, so they leave such ops out)."""
    shape = eqn.outvars[0].aval.shape
    return any(a.aval.shape != shape and a.aval.shape != () for a in eqn.invars)


def outer_product(eqn):
    """For an outer product tier 1 computes as a broadcast multiply (``DotGeneral.
    outer_product``): its number of columns, else None."""
    f = getattr(eqn.primitive, "outer_product", None)
    return None if f is None else f(eqn)


def fusible(eqn) -> bool:
    """Whether ``eqn`` is an elementwise equation a cluster may hold: one output of a
    non-empty shape (or rank 0: clusters of scalars) whose operands have that shape, are
    rank-0, or (elementwise primitives) broadcast to it through size-1 dimensions. (Cheap:
    it runs over every equation at the first compile.)"""
    prim = eqn.primitive
    if getattr(prim, "outer_product", None) is not None:
        return outer_product(eqn) is not None and 0 not in eqn.outvars[0].aval.shape
    if not (isinstance(prim, Elementwise) or prim in _STRUCTURAL) or prim.effectful or \
            prim.multiple_results or len(eqn.outvars) != 1 or \
            not getattr(prim, "fuses_as_its_name", True):
        return False
    out = eqn.outvars[0].aval
    shape = out.shape
    if 0 in shape or not _plain(out.dtype):
        return False
    elementwise = isinstance(prim, Elementwise)
    for a in eqn.invars:
        av = a.aval
        if not _plain(av.dtype) or (av.shape != shape and av.shape != () and not (
                elementwise and _unit_bcast(av.shape, shape))):
            return False
    if prim is broadcast_in_dim_p:
        return eqn.invars[0].aval.shape == () and eqn.params.get("sharding") is None
    if prim is convert_element_type_p:
        return eqn.params.get("sharding") is None
    return True


_STRUCTURAL = (convert_element_type_p, select_n_p, clamp_p, broadcast_in_dim_p)


class Cluster:
    """A group of elementwise equations over one shape, emitted as one kernel call at the
    position of its last equation. ``inputs``/``outputs`` are filled by ``finish``."""

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.size = math.prod(self.shape)
        self.eqns = []
        self.open = True
        self.inputs = []
        self.outputs = []
        self.mode = None
        self.reductions = []   # (reduce_sum equation, number of leading axes it sums)
        self.aliases = {}      # input -> the value it relayouts (``_fold_unit_relayouts``)
        self.inner_numba = False   # NumPy chunks: runs of numba-exact ops as numba loops

    def finish(self, used_outside):
        produced = set()
        seen = set()
        self.inputs = []
        for e in self.eqns:
            for a in e.invars:
                if isinstance(a, Literal):
                    continue
                if a not in produced and a not in seen:
                    seen.add(a)
                    self.inputs.append(a)
            produced.add(e.outvars[0])
        members = {id(e) for e in self.eqns}
        self.outputs = [e.outvars[0] for e in self.eqns
                        if used_outside(e.outvars[0], members)]

    def results(self):
        """The variables it binds: its outputs, then its reductions' results."""
        return self.outputs + [r.outvars[0] for r, _ in self.reductions]

    @property
    def allocates_outputs(self):
        """Whether its results (of rank >= 1) are fresh buffers and it keeps no reference to
        its inputs (a numba kernel's), so a later ufunc may write into a dying one
        (``codegen.reuse_plan_items``)."""
        return self.mode == "numba"

    def io(self):
        """(variables it reads, variables it binds as Python names) in the function."""
        return [self.aliases.get(v, v) for v in self.inputs], self.results()

    def emit(self, ctx, lines):
        if self.mode == "numba":
            _emit_numba(self, ctx, lines)
        else:
            _emit_numpy(self, ctx, lines)


def _group(eqns, pred, rider=None):
    """Split ``eqns`` (in program order) into plain equations and clusters of those
    satisfying ``pred``; a cluster is closed once an equation outside it reads one of its
    values, so emitting it at its last equation keeps every dependence. An equation
    satisfying ``rider`` (a sum a numba loop may compute) reading an open cluster's value
    does not close it: it is placed right after the cluster, whose later readers of the
    rider's result close it."""
    owner = {}
    open_by_shape = {}
    clusters = []
    last = {}
    riders = {}
    for i, e in enumerate(eqns):
        if rider is not None and isinstance(e.invars[0] if e.invars else None, Var):
            c = owner.get(e.invars[0])
            if c is not None and c.open and rider(e):
                riders.setdefault(id(c), []).append(e)
                owner[e.outvars[0]] = c
                continue
        fus = pred(e)
        shape = tuple(e.outvars[0].aval.shape) if fus else None
        for a in e.invars:
            c = owner.get(a) if isinstance(a, Var) else None
            if c is not None and c.open and not (fus and c.shape == shape):
                c.open = False
                open_by_shape.pop(c.shape, None)
        if not fus:
            continue
        c = open_by_shape.get(shape)
        if c is None:
            c = open_by_shape[shape] = Cluster(shape)
            clusters.append(c)
        c.eqns.append(e)
        owner[e.outvars[0]] = c
        last[id(c)] = i
    emit_at = {last[id(c)]: c for c in clusters}
    member = {id(e) for c in clusters for e in c.eqns}
    member.update(id(e) for rs in riders.values() for e in rs)
    items = []
    for i, e in enumerate(eqns):
        if id(e) not in member:
            items.append(e)
        elif i in emit_at:
            c = emit_at[i]
            items.append(c)
            items.extend(riders.get(id(c), ()))
    return items


def plan(jaxpr, numba_ok=None):
    """The tier-2 plan of ``jaxpr``: its equations in order, elementwise clusters replaced by
    ``Cluster`` objects (each with its lowering mode). ``numba_ok`` defaults to whether numba
    is available."""
    if numba_ok is None:
        numba_ok = numba_module() is not None
    uses = {}
    for e in jaxpr.eqns:
        for a in e.invars:
            if isinstance(a, Var):
                uses.setdefault(a, []).append(e)
    outvars = {a for a in jaxpr.outvars if isinstance(a, Var)}

    def used_outside(v, members):
        if v in outvars:
            return True
        return any(id(e) not in members for e in uses.get(v, ()))

    out = []
    for item in _group(_sink(jaxpr.eqns, uses, outvars), fusible,
                       _leading_sum if numba_ok else None):
        if not isinstance(item, Cluster):
            loop = loop_kernel(item) if numba_ok else None
            if loop is None and numba_ok:   # (a body over arrays)
                loop = array_loop_kernel(item)
            out.append(item if loop is None else loop)
            continue
        if not item.shape:   # scalars: only around ops tier 1 runs through a Python impl
            out.extend(_scalar_kernels(item, numba_ok, used_outside))
            continue
        min_ops = 2 if item.size >= NUMBA_MIN_SIZE else NUMBA_MIN_OPS
        if numba_ok and _ops(item.eqns) >= min_ops and all(map(numba_expr_ok, item.eqns)):
            item.mode = "numba"
        elif len(item.eqns) > 1 and item.size >= NUMPY_MIN:
            if any(map(_bcast_eqn, item.eqns)):   # chunks of the ops without broadcasts
                parts = _chunked_parts(item, used_outside)
                for p in parts:
                    if isinstance(p, Cluster):
                        p.inner_numba = numba_ok
                out.extend(parts)
                continue
            item.mode = "numpy"
            item.inner_numba = numba_ok
        elif numba_ok:   # small and mixed: its numba-able parts still fuse
            out.extend(_subclusters(item.eqns, numba_expr_ok, "numba", used_outside,
                                    functools.partial(_worth_a_kernel, min_ops=min_ops)))
            continue
        else:
            out.extend(item.eqns)
            continue
        item.finish(used_outside)
        out.append(item)
    out = _attach_reductions(out, uses, outvars)
    if numba_ok:   # (equations whose impl is costly Python, not joined to a loop above)
        out = [k if type(it) is Eqn and (k := eqn_kernel(it)) is not None else it
               for it in out]
    return _fold_unit_relayouts(_group_numba(out, uses, outvars), uses, outvars)


def _own_twin(e):
    """Whether ``e``'s primitive has a numba twin of its own for it (XLA's math)."""
    f = getattr(e.primitive, "numba_scalar", None)
    return f is not None and f(e) is not None


def _ops(eqns):
    """How many NumPy operations tier 1 spends on ``eqns``: one each, ``NUMBA_MIN_OPS`` for
    an equation with a numba twin of its own (XLA's math, emulated in NumPy by several)."""
    return sum(NUMBA_MIN_OPS if _own_twin(e) else 1 for e in eqns)


def _worth_a_kernel(sub, min_ops):
    """Whether a numba-able run of a mixed cluster is worth a kernel call: ``min_ops`` ops,
    or one op of ``NUMBA_MIN_SIZE`` elements or more reading an operand through size-1
    broadcasting (NumPy's broadcast loops run row by row: a bias row added to a (64, 64)
    block costs ~4 us, twice a plain add; the loop nest adds it in ~1 us)."""
    return _ops(sub.eqns) >= min_ops or (sub.size >= NUMBA_MIN_SIZE and
                                        any(map(_bcast_eqn, sub.eqns)))


def _chunked_parts(c, used_outside):
    """The plan of a big cluster holding ops with size-1 broadcasts: its runs of two or
    more ops without them as NumPy-chunked clusters, the rest op by op."""
    return _subclusters(c.eqns, lambda e: not _bcast_eqn(e), "numpy", used_outside,
                        lambda sub: len(sub.eqns) > 1)


def _subclusters(eqns, ok, mode, used_outside, take):
    """``eqns`` regrouped by ``ok``: each run that ``take`` accepts becomes a finished
    cluster of ``mode``, the other runs' equations stay op by op."""
    out = []
    for sub in _group(eqns, ok):
        if isinstance(sub, Cluster) and take(sub):
            sub.mode = mode
            sub.finish(used_outside)
            out.append(sub)
        elif isinstance(sub, Cluster):
            out.extend(sub.eqns)
        else:
            out.append(sub)
    return out


def _impl_call(eqn):
    """Whether tier 1 runs ``eqn`` through its primitive's Python ``impl`` (float ``div``,
    with its ``np.errstate``: ~5 us on a scalar, against ~1 us for a ufunc call)."""
    if not isinstance(eqn.primitive, Elementwise):
        return False
    try:
        return eqn.primitive.lower_py(LowerCtx(), ["x"] * len(eqn.invars),
                                      **eqn.params) is None
    except Exception:  # noqa: BLE001 - (a lowering needing more than names: not an impl)
        return False


def _scalar_kernels(c, numba_ok, used_outside):
    """The plan of a cluster of rank-0 equations: its numba-able runs of two or more ops
    holding an op tier 1 runs through a Python impl become numba kernels (one call instead
    of that impl); the rest stays op by op (a NumPy call on a scalar costs less than a
    numba call)."""
    if not numba_ok:
        return c.eqns
    return _subclusters(c.eqns, numba_expr_ok, "numba", used_outside,
                        lambda sub: len(sub.eqns) >= 2 and any(map(_impl_call, sub.eqns)))


def _sink(eqns, uses, outvars):
    """``eqns`` with each elementwise equation read only by later elementwise equations of
    its shape moved to just before the first of them, when its operands live until there
    anyway (``1 - tanh(h)``, computed in the forward pass for the backward one, then joins
    the backward cluster instead of running alone). Values do not change: tier 2 never
    writes into a live buffer."""
    pos = {id(e): i for i, e in enumerate(eqns)}
    last = {}
    for i, e in enumerate(eqns):
        for a in e.invars:
            if isinstance(a, Var):
                last[a] = i
    at = {}
    for i, e in enumerate(eqns):
        if not fusible(e) or e.outvars[0] in outvars:
            continue
        readers = uses.get(e.outvars[0])
        shape = e.outvars[0].aval.shape
        if not readers or not all(fusible(r) and r.outvars[0].aval.shape == shape
                                  for r in readers):
            continue
        first = min(pos[id(r)] for r in readers)
        if first > i + 1 and all(last[a] >= first for a in e.invars if isinstance(a, Var)):
            at.setdefault(first, []).append(e)
    if not at:
        return eqns
    moved = {id(e) for es in at.values() for e in es}
    out = []
    for i, e in enumerate(eqns):
        out.extend(at.get(i, ()))
        if id(e) not in moved:
            out.append(e)
    return out


def _leading_sum(eqn):
    """For a ``reduce_sum`` a numba loop computes with NumPy's bits, the number of leading
    axes it sums, else None. NumPy sums the leading axes of a C-ordered array row after row
    into zeros (its pairwise summation is for a contiguous reduced axis), so a loop adding
    the rows in order gives the same result, when each row has at least two elements and
    the sum keeps the float dtype (every other reduction stays NumPy's)."""
    if eqn.primitive is not reduce_sum_p or eqn.params.get("out_sharding") is not None:
        return None
    x = eqn.invars[0]
    if not isinstance(x, Var) or x.aval.dtype not in FLOAT_KINDS or \
            eqn.outvars[0].aval.dtype != x.aval.dtype:
        return None
    axes = tuple(sorted(eqn.params["axes"]))
    k = len(axes)
    if not k or axes != tuple(range(k)) or k >= x.aval.ndim or \
            math.prod(x.aval.shape[k:]) < 2:
        return None
    if reduce_sum_p.xla_order(x.aval.shape, x.aval.dtype, axes) and \
            (max(x.aval.shape[a] for a in axes) > reduce_sum_p.TREE_WINDOW or
             math.prod(x.aval.shape) >= reduce_sum_p.YNN_MIN_SIZE):
        return None     # (XLA's tree of windows or YNNPACK's blocked order: tier 1's;
                        # otherwise XLA's order is the rows added one by one into
                        # zeros, as this loop does)
    return k


def _attach_reductions(items, uses, outvars):
    """Leading-axis sums (``_leading_sum``) of a numba cluster's value join that cluster:
    its loop adds each row into the sum as it computes it, instead of a NumPy reduction
    reading the array again. The value stays an output only if something else reads it."""
    producer = {}
    for it in items:
        if isinstance(it, Cluster) and it.mode == "numba":
            for v in it.outputs:
                producer[v] = it
    if not producer:
        return items
    out = []
    for it in items:
        if type(it) is Eqn:
            c = producer.get(it.invars[0]) if it.invars else None
            k = _leading_sum(it) if c is not None else None
            if k is not None and all(k == kk for _, kk in c.reductions):
                c.reductions.append((it, k))
                continue
        out.append(it)
    for c in set(producer.values()):
        if c.reductions:
            red = {id(r) for r, _ in c.reductions}
            members = {id(e) for e in c.eqns}
            c.outputs = [v for v in c.outputs if v in outvars or any(
                id(e) not in red and id(e) not in members for e in uses.get(v, ()))]
    return out


def lower_tier2(closed: ClosedJaxpr, name: str = "fn", numba_ok=None):
    """Lower an (optimised) closed jaxpr with its elementwise clusters fused. Returns
    ``(compiled, n_clusters)``; ``n_clusters == 0`` means tier 2 has nothing to add."""
    if numba_ok is None:
        numba_ok = numba_module() is not None
    count = [0]

    def planner(jaxpr):   # the program's and its loop/call bodies' (counted together)
        items = plan(jaxpr, numba_ok)
        count[0] += sum(len(i.clusters) if isinstance(i, NumbaGroup) else
                        isinstance(i, (Cluster, LoopKernel)) for i in items)
        return items
    compiled = lower_jaxpr(closed, name, planner=planner)
    return (compiled, count[0]) if count[0] else (None, 0)


# ----------------------------------------------------------------------------- NumPy chunks

def _ufunc_of(eqn):
    """The NumPy ufunc tier 1 calls for ``eqn`` (then called with ``out=``), or None."""
    prim = eqn.primitive
    own = getattr(prim, "ufunc_for", None)
    if own is not None:   # (a primitive saying which dtypes one ufunc computes)
        return own(eqn)
    if isinstance(prim, Elementwise) and isinstance(prim.np_fn, np.ufunc) and \
            type(prim).lower_py is Elementwise.lower_py and not eqn.params and \
            getattr(np, prim.np_fn.__name__, None) is prim.np_fn:
        return prim.np_fn
    return None


def _compile_kernel(ctx, source, hint):
    filename = f"<jaxlite-tier2:{hint}:{next(_kernel_ids)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), ctx.globals)
    srcs = ctx.globals.setdefault("__kernel_sources__", [])
    srcs.append(source)


def _numba_runs(c):
    """({start: length}, {value: "array" or "scalar"}) of the runs of consecutive ops of a
    NumPy-chunked cluster (ufunc ops, and ops with numba twins of their own: XLA's math;
    worth two ufunc calls or more, ``_ops``) that numba computes exactly (``numba_expr_ok``) and whose operands are chunk
    arrays (the cluster's inputs of its shape, ufunc results) or scalars (rank-0 values,
    broadcasts of them, literals): each runs as one numba loop over the chunk, one pass
    over memory where the ufuncs made one each (the transcendentals between them stay in
    NumPy's SIMD loops)."""
    kind = {}    # value -> "array" | "scalar" (others: neither)
    for v in c.inputs:
        if not v.aval.shape:
            kind[v] = "scalar"
        elif tuple(v.aval.shape) == c.shape:
            kind[v] = "array"

    def ok_in(a):
        return isinstance(a, Literal) or kind.get(a) is not None

    runs, start = {}, None
    for j, e in enumerate(c.eqns + [None]):
        own = e is not None and _own_twin(e)
        good = e is not None and (own or _ufunc_of(e) is not None) and numba_expr_ok(e) \
            and tuple(e.outvars[0].aval.shape) == c.shape and all(map(ok_in, e.invars))
        if good and start is None:
            start = j
        elif not good and start is not None:
            if _ops(c.eqns[start:j]) >= 2:
                runs[start] = j - start
            start = None
        if e is None:
            break
        v = e.outvars[0]
        if e.primitive is broadcast_in_dim_p:
            a = e.invars[0]
            if isinstance(a, Literal) or kind.get(a) == "scalar":
                kind[v] = "scalar"
        elif (good or _ufunc_of(e) is not None) and tuple(v.aval.shape) == c.shape:
            kind[v] = "array"
    return runs, kind


def _chunk_buffer(v, out_names, free, temps, buf_of):
    """The chunk buffer ``v`` is written into: its output's, a free one of its dtype, or a
    new temporary (recorded as ``v``'s)."""
    if v in out_names:
        return out_names[v]
    pool = free.get(v.aval.dtype)
    if pool:
        dst = pool.pop()
    else:
        dst = f"t{len(temps)}"
        temps.append((dst, v.aval.dtype))
    buf_of[v] = [(dst, v.aval.dtype)]
    return dst


def _emit_chunk_run(c, j0, n, kind, ctx, names, last_use, buf_of, free, temps, out_names,
                    body):
    """The chunk body's call of the numba loop running ``c.eqns[j0:j0 + n]`` (a run of
    ``_numba_runs``): its results read later get chunk buffers (never one of its own
    operands': a loop writing where it reads does not vectorise), and the buffers of
    operands it reads last are freed after it."""
    eqns = c.eqns[j0:j0 + n]
    made = {e.outvars[0] for e in eqns}
    ins, seen = [], set()
    for e in eqns:
        for a in e.invars:
            if isinstance(a, Var) and a not in made and a not in seen:
                seen.add(a)
                ins.append(a)
    end = j0 + n
    outs = [e.outvars[0] for e in eqns
            if e.outvars[0] in out_names or last_use.get(e.outvars[0], -1) >= end]
    arr = [kind[a] == "array" for a in ins]
    kern, src = chunk_run_kernel(eqns, list(zip(ins, arr)), outs)
    dsts = []
    for v in outs:
        dst = _chunk_buffer(v, out_names, free, temps, buf_of)
        names[v] = dst
        dsts.append(dst)
    for a in ins:   # (operands read last here: their buffers are free after the call)
        if last_use.get(a, -1) < end and a in buf_of:
            for b, bdt in buf_of.pop(a):
                free.setdefault(bdt, []).append(b)
    kname = ctx.bind_global(kern, "nk")
    shown = ctx.globals.setdefault("__kernel_sources__", [])
    if src not in shown:
        shown.append(src)
    args = [names[a] if is_arr else f"{names[a]}[()]" for a, is_arr in zip(ins, arr)]
    ops = ", ".join(e.primitive.name for e in eqns)
    cm = _src_comment(eqns[0])
    body.append(f"    {kname}({', '.join(args + dsts)})  # numba loop ({ops})" +
                (f": {cm[4:]}" if cm else ""))


def _emit_numpy(c: Cluster, ctx: LowerCtx, lines):
    """A chunked NumPy kernel: a body over one chunk (each op the call tier 1 makes, ufuncs
    writing into reused chunk buffers) and a driver looping over the chunks."""
    k = next(_kernel_ids)
    body_name, drv_name = f"_fk{k}_body", f"_fk{k}"
    names = {}
    params = []
    for i, v in enumerate(c.inputs):
        names[v] = f"i{i}"
        params.append(f"i{i}")
    out_names = {v: f"o{i}" for i, v in enumerate(c.outputs)}
    last_use = {}
    for j, e in enumerate(c.eqns):
        for a in e.invars:
            if isinstance(a, Var):
                last_use[a] = j
    for v in c.outputs:
        last_use[v] = len(c.eqns)   # never freed
    free = {}          # dtype -> [buffer names]
    buf_of = {}        # value -> [(temp buffer name, dtype)] it keeps alive
    temps = []         # (name, dtype)
    body = []
    sub = LowerCtx()
    sub.globals = ctx.globals
    sub._gid = ctx._gid
    runs, kind = _numba_runs(c) if c.inner_numba else ({}, {})
    skip = 0
    for j, e in enumerate(c.eqns):
        if skip:
            skip -= 1
            continue
        if j in runs:
            n_run = runs[j]
            _emit_chunk_run(c, j, n_run, kind, ctx, names, last_use, buf_of, free, temps,
                            out_names, body)
            skip = n_run - 1
            continue
        v = e.outvars[0]
        ins = []
        for a in e.invars:
            ins.append(ctx.literal(a) if isinstance(a, Literal) else names[a])
        dying = []
        for a in e.invars:
            if isinstance(a, Var) and last_use.get(a) == j and a in buf_of:
                dying += buf_of.pop(a)
        prim = e.primitive
        cm = _src_comment(e)
        uf = _ufunc_of(e)
        if uf is not None:   # the ufunc writes its own buffer: dying operands' are free
            for b, bdt in dying:
                free.setdefault(bdt, []).append(b)
        elif dying:          # other ops may return a view of an operand: keep them alive
            buf_of[v] = dying
        if prim is broadcast_in_dim_p:
            names[v] = ins[0]
            if v in out_names:
                body.append(f"    np.copyto({out_names[v]}, {ins[0]}){cm}")
            continue
        if uf is not None:
            dst = _chunk_buffer(v, out_names, free, temps, buf_of)
            own = getattr(prim, "ufunc_operands", None)   # (x ** 2 as x * x)
            args = ins if own is None else own(e, ins)
            body.append(f"    np.{uf.__name__}({', '.join(args)}, out={dst}){cm}")
            names[v] = dst
            continue
        expr = prim.lower_py(sub, ins, **e.params)
        if expr is None:
            f = functools.partial(prim.impl, **e.params) if e.params else prim.impl
            expr = f"{ctx.bind_global(f, 'impl_')}({', '.join(ins)})"
        loc = f"v{j}"
        body.append(f"    {loc} = {expr}{cm}")
        names[v] = loc
        if v in out_names:
            body.append(f"    np.copyto({out_names[v]}, {loc})")
    outs = [out_names[v] for v in c.outputs]
    tnames = [t for t, _ in temps]
    sig = ", ".join(params + outs + tnames)
    src = [f"def {body_name}({sig}):",
           f"    # one chunk of {len(c.eqns)} fused ops over {c.shape}"]
    src += body or ["    pass"]
    n = c.size
    chunked = [f"{p}[s:e]" if c.inputs[i].aval.shape else p for i, p in enumerate(params)]
    dt = {v: ctx.bind_global(v.aval.dtype, "dt") for v in c.outputs}
    tdt = [ctx.bind_global(d, "dt") for _, d in temps]
    threads = THREADS if n >= THREAD_MIN and THREADS > 1 else 1
    src += ["", f"def {drv_name}_range({', '.join(params + outs)}, lo, hi):",
            *[f"    {t} = np.empty({CHUNK}, {d})" for t, d in zip(tnames, tdt)],
            f"    for s in range(lo, hi, {CHUNK}):",
            f"        e = min(s + {CHUNK}, hi)",
            "        if e - s == " + str(CHUNK) + ":",
            f"            {body_name}({', '.join(chunked + [o + '[s:e]' for o in outs] + tnames)})",
            "        else:",
            f"            {body_name}({', '.join(chunked + [o + '[s:e]' for o in outs] + [t + '[:e - s]' for t in tnames])})",
            "", f"def {drv_name}({', '.join(params)}):"]
    for i, p in enumerate(params):
        if c.inputs[i].aval.shape:
            src.append(f"    {p} = np.ravel({p})")
    for v in c.outputs:
        src.append(f"    {out_names[v]} = np.empty({n}, {dt[v]})")
    if threads > 1:
        step = -(-n // (threads * CHUNK)) * CHUNK
        pool = ctx.bind_global(_pool, "pool")
        at = src.index(f"def {drv_name}({', '.join(params)}):")
        src[at:at] = [f"def {drv_name}_thread(err, *args):",
                      "    with np.errstate(**err):   # the caller's floating-point error mode",
                      f"        {drv_name}_range(*args)", ""]
        src += ["    _err = np.geterr()",
                f"    _futs = [{pool}().submit({drv_name}_thread, _err, "
                f"{', '.join(params + outs)}, lo, min(lo + {step}, {n})) "
                f"for lo in range(0, {n}, {step})]",
                "    for f in _futs:",
                "        f.result()"]
    else:
        src.append(f"    {drv_name}_range({', '.join(params + outs)}, 0, {n})")
    shape = c.shape
    src.append(f"    return ({''.join(f'{o}.reshape({shape}), ' for o in outs)})")
    _compile_kernel(ctx, "\n".join(src) + "\n", "numpy")
    call_ins = [ctx.var(v) for v in c.inputs]
    res = [ctx.var(v) for v in c.outputs]
    lines.append(f"    {', '.join(res)}{',' if len(res) == 1 else ''} = "
                 f"{drv_name}({', '.join(call_ins)})  # fused: {len(c.eqns)} ops, "
                 f"NumPy chunks of {CHUNK}" + (f" on {threads} threads" if threads > 1 else ""))


_pool_state = {}
_pool_lock = threading.Lock()


def _pool():
    p = _pool_state.get("pool")
    if p is None:
        with _pool_lock:
            p = _pool_state.get("pool")
            if p is None:
                from concurrent.futures import ThreadPoolExecutor
                p = _pool_state["pool"] = ThreadPoolExecutor(
                    THREADS, thread_name_prefix="jaxlite-fusion")
    return p


def _emit_numba(c: Cluster, ctx: LowerCtx, lines):
    emit_numba_group([c], ctx, lines)


def _fold_unit_relayouts(items, uses, outvars):
    """``items`` without the relayouts that only insert size-1 axes (``inserts_unit_axes``:
    a bias ``b.reshape((1, n))``) whose every reader is a numba kernel: a kernel reads its
    inputs flat (``ravel()``, row-major), and the flat elements of such a relayout are its
    operand's, so the kernel is handed the operand instead (``Cluster.aliases``)."""
    owner = {}
    for it in items:
        clusters = it.clusters if isinstance(it, NumbaGroup) else \
            [it] if isinstance(it, Cluster) and it.mode == "numba" else ()
        for c in clusters:
            for e in c.eqns:
                owner[id(e)] = c
    if not owner:
        return items
    folded = set()
    for it in items:
        if type(it) is not Eqn or len(it.outvars) != 1 or len(it.invars) != 1:
            continue
        p, (src,), (v,) = it.primitive, it.invars, it.outvars
        readers = uses.get(v, ())
        if p.inserts_unit_axes is None or not isinstance(src, Var) or v in outvars or \
                not readers or not src.aval.shape or not v.aval.shape or \
                src.aval.dtype != v.aval.dtype or \
                not all(id(r) in owner for r in readers) or not p.inserts_unit_axes(it):
            continue
        for r in readers:
            owner[id(r)].aliases[v] = src
        folded.add(id(it))
    return [it for it in items if id(it) not in folded] if folded else items


def _group_numba(items, uses, outvars):
    """``items`` with runs of adjacent numba clusters made ``NumbaGroup``s (one call). Each
    group learns which of its results something outside it reads (``read_outside``): a
    rank-0 result only its own later loops read needs no Python name."""
    out = []
    for it in items:
        if isinstance(it, Cluster) and it.mode == "numba":
            prev = out[-1] if out else None
            if isinstance(prev, Cluster) and prev.mode == "numba":
                prev = out[-1] = NumbaGroup([prev])
            if isinstance(prev, NumbaGroup) and prev.takes(it):
                prev.clusters.append(it)
                prev.outputs.update(it.results())
                continue
        out.append(it)
    for g in out:
        if isinstance(g, NumbaGroup):
            inside = {id(e) for c in g.clusters for e in c.eqns}
            inside.update(id(r) for c in g.clusters for r, _ in c.reductions)
            g.read_outside = {v for v in g.outputs if v in outvars or any(
                id(e) not in inside for e in uses.get(v, ()))}
    return out
