"""Where device threads meet: the SPMD context of a running per-device program and the
rendezvous behind every collective.

``run_spmd(mesh_devices, axis_names, fn, args_per_device)`` runs one program on every device
of a mesh. Each device thread gets an ``SpmdContext`` (its mesh coordinates and a shared
``Rendezvous``). A collective call deposits the device's operand; the last device to arrive
computes the results for every group at once, and each device takes its own.

jaxlite never hangs in a collective: a wait is bounded (``JAXLITE_COLLECTIVE_TIMEOUT``
seconds, default 60), a device that raises or finishes without reaching the collective
releases the others at once, and the error names the collective, its axes, the user's line
and which devices arrived.

When the mesh spans processes (jax.distributed), only this process's devices run here; the
last local arrival at a collective makes the process's one MPI exchange (runtime/mpi.py):
reductions whose groups span every process reduce the local members first, everything else
gathers the local operands, and every process then computes the groups it takes part in;
collectives whose groups all lie within single processes (an axis of local devices) need no
MPI at all.
"""
from __future__ import annotations

import functools
import math
import os
import threading
import time

import numpy as np

from jaxlite._src.runtime import mpi as _mpi
from jaxlite._src.runtime.devices import run_on_devices

__all__ = ["SpmdContext", "current", "run_spmd", "CollectiveError", "collective"]

_tls = threading.local()


def _timeout():
    try:
        return float(os.environ.get("JAXLITE_COLLECTIVE_TIMEOUT", "60"))
    except ValueError:
        return 60.0


class CollectiveError(RuntimeError):
    """A collective could not complete: not every device of its group arrived."""


class _Released(CollectiveError):
    """Raised on the devices waiting in a collective when another device failed: the
    caller sees that device's own error instead (``_jaxlite_secondary``)."""
    _jaxlite_secondary = True


class Rendezvous:
    """The meeting point of the devices running one SPMD program."""

    def __init__(self, n, labels, members=None):
        self.n = n
        self.labels = labels          # printable name of each participant
        self.members = list(range(n)) if members is None else members   # who runs here
        self.cond = threading.Condition()
        self.slots = {}               # seq -> {participant: (value, meta)}
        self.results = {}             # seq -> {participant: result}
        self.finished = set()         # participants whose program returned
        self.failed = None            # (participant, exception)

    def fail(self, who, exc):
        with self.cond:
            if self.failed is None:
                self.failed = (who, exc)
            self.cond.notify_all()

    def finish(self, who):
        with self.cond:
            self.finished.add(who)
            self.cond.notify_all()

    def exchange(self, who, seq, value, meta, compute):
        """Deposit ``value`` for collective number ``seq``; ``compute(values)`` (run once, by
        the last arrival) maps {participant: value} to {participant: result}."""
        if self.n == 1:              # alone here: nobody to meet on this process
            return compute({who: value})[who]
        with self.cond:
            slot = self.slots.setdefault(seq, {})
            slot[who] = (value, meta)
            if len(slot) == self.n:
                metas = {m for _, m in slot.values()}
                if len(metas) > 1:
                    err = CollectiveError(_mismatch_message(slot, self.labels))
                    self.results[seq] = err
                else:
                    try:
                        self.results[seq] = compute({k: v for k, (v, _) in slot.items()})
                    except BaseException as e:  # noqa: BLE001
                        # the computing device raises the error; the others are released
                        self.results[seq] = _Released(
                            f"{meta[0]} over axes {meta[1]} (at {meta[2]}) failed on "
                            f"{self.labels[who]}: {type(e).__name__}: {e}")
                        self.cond.notify_all()
                        raise
                self.cond.notify_all()
            else:
                deadline = time.monotonic() + _timeout()
                while seq not in self.results:
                    if self.failed is not None:
                        w, e = self.failed
                        raise _Released(
                            f"{meta[0]} over axes {meta[1]} (at {meta[2]}) was abandoned "
                            f"because {self.labels[w]} raised {type(e).__name__}: {e}")
                    if self.finished:
                        arrived = sorted(slot)
                        raise CollectiveError(self._missing(meta, arrived, ""))
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise CollectiveError(self._missing(
                            meta, sorted(slot), f"did not arrive within {_timeout():g} s "
                            "(set JAXLITE_COLLECTIVE_TIMEOUT to wait longer)"))
                    self.cond.wait(min(left, 1.0))
            res = self.results[seq]
            if isinstance(res, BaseException):
                slot.pop(who, None)
                if not slot:
                    self.results.pop(seq, None)
                    self.slots.pop(seq, None)
                raise res
            out = res.pop(who)
            if not res:
                del self.results[seq]
                del self.slots[seq]
            return out

    def _missing(self, meta, arrived, why):
        name, axes, where = meta
        got = [self.labels[i] for i in arrived]
        done = [self.labels[i] for i in sorted(self.finished) if i not in arrived]
        running = [self.labels[i] for i in self.members
                   if i not in arrived and i not in self.finished]
        parts = [f"{name} over axes {axes} at {where}: {len(got)} of {self.n} devices "
                 f"arrived ({', '.join(got)})"]
        if done:
            parts.append(f"{', '.join(done)} finished the program without reaching it")
        if running and why:
            parts.append(f"{', '.join(running)} {why}")
        return ("; ".join(parts) + ". Every device must reach the same collectives in the same "
                "order (a collective inside a branch that only some devices take cannot "
                "complete).")


def _mismatch_message(slot, labels):
    lines = [f"  {labels[k]}: {m[0]} over axes {m[1]} at {m[2]}" for k, (_, m) in
             sorted(slot.items())]
    return ("Devices reached different collectives at the same point of the program (all "
            "devices must run the same collectives in the same order):\n" + "\n".join(lines))


class SpmdContext:
    """What a device thread knows while it runs its part of an SPMD program."""

    def __init__(self, rendezvous, who, axis_names, axis_sizes, coords, layout=None):
        self.rendezvous = rendezvous
        self.layout = layout              # _Layout of a mesh spanning processes, else None
        self.who = who                    # flat index of this device in the mesh
        self.axis_names = axis_names
        self._axis_set = frozenset(axis_names)
        self.axis_sizes = axis_sizes
        self.coords = coords              # this device's mesh coordinates
        self.seq = 0

    def axis_index(self, names):
        """This device's index along the (flattened, major first) axes ``names``."""
        idx = 0
        for n in names:
            k = self.axis_names.index(n)
            idx = idx * self.axis_sizes[k] + self.coords[k]
        return idx

    def axis_size(self, names):
        return math.prod(self.axis_sizes[self.axis_names.index(n)] for n in names)

    def group_key(self, coords, names):
        """The coordinates that identify ``coords``' group for a collective over ``names``."""
        return tuple(c for n, c in zip(self.axis_names, coords) if n not in names)

    def has_axes(self, names):
        return self._axis_set.issuperset(names)


def current():
    """The SPMD context of the calling device thread (None outside per-device programs)."""
    return getattr(_tls, "ctx", None)


def collective(name, axes, where, value, per_group, reduce=None, index_groups=None):
    """Run a collective from the current device thread.

    ``per_group(members)`` gets the list of (axis index, value) of one group (ordered by axis
    index) and returns the list of results in the same order. When the mesh spans processes,
    the members of other processes take part through MPI (runtime/mpi.py); ``reduce`` =
    (op, combine) marks a reduction ('sum'/'max'/'min', ``combine(values)`` of a list of
    operand lists), which then reduces the local members first and moves one partial result
    per process. ``index_groups`` (JAX's ``axis_index_groups``) splits each group further
    into the listed sets of axis indices, each member numbered by its place in its set."""
    ctx = _tls.ctx
    seq = ctx.seq = ctx.seq + 1
    layout = ctx.layout
    if layout is not None and ctx.rendezvous.n == 1:   # one device here: straight to MPI
        # a small reduction met at this call site before: its prepared exchange at once
        hit = layout.direct.get((name, axes, where)) if reduce is not None and \
            index_groups is None else None
        if hit is not None and hit[0] == [(a.shape, a.dtype) for a in value]:
            try:
                return hit[1](value, seq)
            except _mpi.ProcessTimeout as e:
                raise CollectiveError(str(e)) from None
        who = ctx.who
        return _cross_process(ctx, layout, (name, tuple(axes), where), {who: value},
                              per_group, reduce, _tls.all_coords, index_groups)[who]
    meta = (name, tuple(axes), where)
    all_coords = _tls.all_coords

    def compute(values):
        if layout is not None:
            return _cross_process(ctx, layout, meta, values, per_group, reduce, all_coords,
                                  index_groups)
        return _compute_groups(ctx, axes, values, per_group, all_coords,
                               index_groups=index_groups)
    return ctx.rendezvous.exchange(ctx.who, ctx.seq, value, meta, compute)


def _compute_groups(ctx, axes, values, per_group, all_coords, keep=None, index_groups=None):
    groups = {}
    place = _places(index_groups) if index_groups else None
    for who, v in values.items():
        c = all_coords[who]
        key, idx = ctx.group_key(c, axes), _index_of(ctx, c, axes)
        if place is not None:
            g, idx = place[idx]
            key = (key, g)
        groups.setdefault(key, []).append((idx, who, v))
    out = {}
    for members in groups.values():
        if keep is not None and not any(w in keep for _, w, _ in members):
            continue
        members.sort(key=lambda t: t[0])
        res = per_group([(i, v) for i, _, v in members])
        for (_, who, _), r in zip(members, res):
            if keep is None or who in keep:
                out[who] = r
    return out


@functools.lru_cache(maxsize=256)
def _places(index_groups):
    """{axis index: (its set's number, its place in the set)} of ``axis_index_groups``."""
    return {i: (g, k) for g, members in enumerate(index_groups) for k, i in enumerate(members)}


class _Layout:
    """Where the participants of a mesh spanning processes live."""

    def __init__(self, devices, me):
        self.proc = [d.process_index for d in devices]
        self.nproc = max(self.proc) + 1
        self.me = me
        self.counts = [self.proc.count(p) for p in range(self.nproc)]
        self.local = [w for w, p in enumerate(self.proc) if p == me]
        self.of_process = [[w for w, q in enumerate(self.proc) if q == p]
                           for p in range(self.nproc)]
        self.plans = {}
        self.ones = (1,) * self.nproc
        self._spans = {}
        self._local_groups = {}
        # {(name, axes, user line): (operand types, prepared reduction)} of the small
        # reductions (no axis_index_groups) of one device per process (collective's
        # shortcut)
        self.direct = {}

    def local_groups(self, ctx, axes, all_coords):
        """[(group key, this process's members in axis-index order)] of a collective over
        ``axes``, the groups in key order (the same order in every process)."""
        hit = self._local_groups.get(axes)
        if hit is None:
            groups = {}
            for who in self.local:
                c = all_coords[who]
                groups.setdefault(ctx.group_key(c, axes), []).append(
                    (_index_of(ctx, c, axes), who))
            hit = self._local_groups[axes] = [
                (k, [w for _, w in sorted(groups[k])]) for k in sorted(groups)]
        return hit

    def spans(self, ctx, axes, all_coords):
        """(every group of a collective over ``axes`` has members in every process, every
        group lies within one process)."""
        hit = self._spans.get(axes)
        if hit is None:
            procs = {}
            for who, c in enumerate(all_coords):
                procs.setdefault(ctx.group_key(c, axes), set()).add(self.proc[who])
            hit = self._spans[axes] = (all(len(p) == self.nproc for p in procs.values()),
                                       all(len(p) == 1 for p in procs.values()))
        return hit


def _cross_process(ctx, layout, meta, values, per_group, reduce, all_coords, index_groups):
    first = values[layout.local[0]]
    listed = isinstance(first, list)
    ops = first if listed else (first,)
    # (per call site, not per position in the program: a collective in a loop body is one)
    key = (meta, index_groups, tuple([(a.shape, a.dtype) for a in ops]))
    plan = layout.plans.get(key)
    if plan is None:
        plan = layout.plans[key] = _plan_cross(ctx, layout, meta, ops, listed,
                                               None if index_groups else reduce, all_coords)
    site, hierarchical, mpi_ok, local_only, fast = plan
    seq = ctx.seq
    if fast is not None:    # one device here and a small reduction: one prepared exchange
        try:
            return fast(values, seq)
        except _mpi.ProcessTimeout as e:
            raise CollectiveError(str(e)) from None
    if local_only:      # every group lies within one process: the devices here suffice
        return _compute_groups(ctx, meta[1], values, per_group, all_coords,
                               index_groups=index_groups)
    try:
        if hierarchical:
            return _reduce_across(ctx, layout, meta[1], values, reduce, site, seq,
                                  all_coords, mpi_ok)
        mine = [values[w] if listed else [values[w]] for w in layout.local]
        per_proc = _gather_entries(layout, mine, site, seq)
    except _mpi.ProcessTimeout as e:
        raise CollectiveError(str(e)) from None
    everyone = {}
    for p, entries in enumerate(per_proc):
        for w, v in zip(layout.of_process[p], entries):
            everyone[w] = v if listed else v[0]
    out = _compute_groups(ctx, meta[1], everyone, per_group, all_coords, keep=set(values),
                          index_groups=index_groups)
    if per_proc.shared:     # results must not keep the shared window's memory
        owned = _mpi.shared_owned
        out = {w: [owned(a) for a in r] if listed else owned(r) for w, r in out.items()}
    return out


class _Gathered(list):
    """Every process's entries; ``shared``: views into the shared-memory window."""
    shared = False


def _gather_entries(layout, mine, site, seq):
    """Every process's list of per-device operand lists (``mine``: this process's): one
    gathered message, or through shared memory for big ones when every process has as many
    devices here."""
    flat = [a for entry in mine for a in entry]
    nbytes = sum(a.nbytes for a in flat)
    if nbytes > _GATHER_BYTES and len(set(layout.counts)) == 1 and \
            _mpi.shared_available(nbytes):
        per_proc = _mpi.shared_gather(flat, site, seq)
        if per_proc is not None:
            k = len(mine[0])
            out = _Gathered([vals[i:i + k] for i in range(0, len(vals), k)]
                            for vals in per_proc)
            out.shared = True
            return out
    return _Gathered(_mpi.allgather_arrays(mine, layout.counts, site, seq))


def _plan_cross(ctx, layout, meta, ops, listed, reduce, all_coords):
    """(the mpi.Site, reduce locally first?, MPI reduces the dtypes?, groups all within one
    process?, prepared exchange or None) of one collective call site (cached per site and
    operand types)."""
    name, axes, where = meta
    shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in ops)
    what = f"{name} over axes {axes} at {where}"
    site = _mpi.Site(f"{what} on {shapes}", what)
    span_all, local_only = layout.spans(ctx, axes, all_coords)
    hierarchical = reduce is not None and listed and span_all
    mpi_ok = hierarchical and all(_mpi_reducible(a.dtype, reduce[0]) for a in ops)
    fast = None
    groups = layout.local_groups(ctx, axes, all_coords) if hierarchical else ()
    nbytes = sum(a.nbytes for a in ops)
    if len(groups) == 1 and len(groups[0][1]) == 1 and (nbytes <= _GATHER_BYTES or (
            not mpi_ok and not _mpi.shared_available(nbytes))):
        fast = _small_reduction(groups[0][1][0], ops, layout, reduce[1], site, meta)
    return site, hierarchical, mpi_ok, local_only, fast


def _small_reduction(who, ops, layout, combine, site, meta):
    """The whole cross-process reduction of the one local device ``who`` (its operands
    shaped as ``ops``), prepared once per call site: one gathered message per process
    (fingerprint and operands), combined here in process order (the bits every process
    gets are the same). What ``_reduce_across`` does, minus its per-call planning."""
    gather = _mpi.prepared_allgather(ops, layout.nproc, site)

    def run(value, seq):
        return combine(gather(value, seq))

    def fast(values, seq):
        return {who: run(values[who], seq)}
    layout.direct[meta] = ([(a.shape, a.dtype) for a in ops], run)
    return fast


def _mpi_reducible(dt, op):
    """Whether MPI reduces dtype ``dt`` with ``op`` exactly as NumPy (float max/min take the
    gather path: MPI's MAX does not propagate NaN as pmax must)."""
    if dt.kind in "iu":
        return True
    return op == "sum" and dt in (np.float32, np.float64, np.complex64, np.complex128)


def _reduce_across(ctx, layout, axes, values, reduce, site, seq, all_coords, mpi_ok):
    op, combine = reduce
    groups = layout.local_groups(ctx, axes, all_coords)
    if len(groups) == 1 and len(groups[0][1]) == 1:
        # one device here (one process per device): its operands are the partials
        (who,) = groups[0][1]
        partials = [values[who]]
    else:
        partials = []
        for _, members in groups:
            vals = [values[w] for w in members]
            partials.append(vals[0] if len(vals) == 1 else combine(vals))
    flat = [a for part in partials for a in part]
    n = len(partials[0])
    out = {}
    nbytes = sum(a.nbytes for a in flat)
    per_proc = None
    if nbytes <= _GATHER_BYTES:
        # small: one message per process carries the partials and the fingerprint
        per_proc = [entries[0] for entries in
                    _mpi.allgather_arrays([flat], layout.ones, site, seq)]
    elif _mpi.shared_available(nbytes):
        # big, every process on this machine: through shared memory
        per_proc = _mpi.shared_gather(flat, site, seq)
    if per_proc is None and not mpi_ok:
        per_proc = [entries[0] for entries in
                    _mpi.allgather_arrays([flat], layout.ones, site, seq)]
    if per_proc is not None:
        # every process combines every process's partials in process order: all get the
        # same bits
        for g, (_, members) in enumerate(groups):
            res = combine([part[g * n:(g + 1) * n] for part in per_proc]
                          if len(groups) > 1 else per_proc)
            for who in members:
                out[who] = res
        return out
    red = _mpi.allreduce_arrays(flat, op, site, seq)
    for g, (_, members) in enumerate(groups):
        res = [np.asarray(r, dtype=a.dtype) for r, a in zip(red[g * n:(g + 1) * n],
                                                            partials[g])]
        for who in members:
            out[who] = res
    return out


# Reductions of at most this many bytes per process go as one gather (fingerprint included)
# and are combined locally; bigger ones through shared memory when every process is on this
# machine (runtime/mpi.py), else by a handshake and an Allreduce.
_GATHER_BYTES = 1 << 16


def _index_of(ctx, coords, names):
    idx = 0
    for n in names:
        k = ctx.axis_names.index(n)
        idx = idx * ctx.axis_sizes[k] + coords[k]
    return idx


def run_spmd(devices, mesh_shape, axis_names, fn, args_per_device):
    """Run ``fn(*args)`` on every device of a mesh (``devices`` flat, in mesh order) with an
    SPMD context, and return the per-device results. When the mesh spans processes
    (``jax.distributed``) only this process's devices run (the entries of
    ``args_per_device`` for the others are ignored, their results are None) and the
    collectives meet the other processes over MPI."""
    n = len(devices)
    coords = _coords(tuple(mesh_shape))
    outer = current()
    layout = _layout_of(devices)
    members = list(range(n)) if layout is None else layout.local
    labels = [f"device {d.id}" if layout is None else
              f"device {d.id} (process {d.process_index})" for d in devices]
    rv = Rendezvous(len(members), labels, members)

    def task(who, args):
        prev = getattr(_tls, "ctx", None), getattr(_tls, "all_coords", None)
        _tls.ctx = SpmdContext(rv, who, tuple(axis_names), tuple(mesh_shape), coords[who],
                               layout)
        _tls.all_coords = coords
        try:
            out = fn(*args)
        except BaseException as e:
            rv.fail(who, e)
            raise
        else:
            rv.finish(who)
            return out
        finally:
            _tls.ctx, _tls.all_coords = prev
    if outer is not None:
        raise NotImplementedError(
            "Nested per-device programs (pmap/shard_map inside pmap/shard_map) are not "
            "supported: map over several axes with one shard_map over a multi-axis mesh.")
    if layout is None:
        return run_on_devices(devices, task, [(i, a) for i, a in enumerate(args_per_device)])
    res = run_on_devices([devices[w] for w in members], task,
                         [(w, args_per_device[w]) for w in members])
    out = [None] * n
    for w, r in zip(members, res):
        out[w] = r
    return out


_layouts = {}
_mpi.on_shutdown.append(_layouts.clear)     # their prepared collectives die with the run


def _layout_of(devices):
    """The _Layout of a mesh whose devices live in several processes (None when they are all
    this process's)."""
    from jaxlite._src.runtime.devices import process_index, process_count
    if process_count() == 1:
        return None
    key = tuple((d.id, d.process_index) for d in devices)
    hit = _layouts.get(key)
    if hit is None:
        me = process_index()
        if all(d.process_index == me for d in devices):
            hit = False
        else:
            hit = _Layout(devices, me)
            missing = [p for p in range(process_count()) if p not in hit.proc]
            if missing or me not in hit.proc:
                raise ValueError(
                    f"A computation over devices {[d.id for d in devices]} spans processes "
                    f"{sorted(set(hit.proc))} but not process(es) "
                    f"{sorted(set(missing) | ({me} - set(hit.proc)))}: a mesh that spans "
                    f"processes must include devices of every process (use jax.devices() or "
                    f"jax.make_mesh for the global mesh).")
        _layouts[key] = hit
    return hit or None


@functools.lru_cache(maxsize=None)
def _coords(shape):
    return [divmod_coords(i, shape) for i in range(math.prod(shape))]


def divmod_coords(i, shape):
    """Row-major coordinates of flat index ``i`` in ``shape``."""
    out = []
    for s in reversed(shape):
        i, r = divmod(i, s)
        out.append(r)
    return tuple(reversed(out))
