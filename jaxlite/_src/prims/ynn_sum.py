"""The order in which XLA:CPU (jaxlib 0.10.2) sums an operand of 4096 or more float32 or
float64 elements: a "ynn_fusion" that calls YNNPACK's reduce (github google/XNNPACK,
``ynnpack/kernels/reduce/sum.h``, ``ynnpack/subgraph/reduce.cc``), checked bit for bit
against jaxlib 0.10.2 on many shapes (tests/test_sum_order.py).

YNNPACK's float sum kernels are the same on every x86-64 (its "consistent" reductions: the
k1 kernel works on vectors of 64 bytes whatever the processor's vector width; a kn
kernel's lanes are columns, so its width does not change any column's order), so no
choice by CPU features is needed.

- The **k1** kernel sums a contiguous run of ``k`` elements (``_k1``) with vectors of
  ``L = 64 / itemsize`` lanes: blocks of ``4 L`` elements (the last zero-padded) give per
  lane ``((0 + a0) + a1) + a2) + a3``; groups of 4 blocks are added into a level-1
  accumulator (blocks after the last whole group go one by one when a clock of ``L`` per
  block is a multiple of 16), which is added with Kahan's compensation into the last
  level every 256 of the clock (every 1024 elements); the flush at the end adds the
  remainder the same way; the lanes are then added by halves (lane i + lane i + L/2 ...).
- The **kn** kernel sums ``k`` rows of contiguous columns (``_kn``): each column the same
  tree with blocks of 4 rows, groups of 4 blocks, Kahan every 64 blocks; ``k <= 4`` rows
  are added directly.
- The reduced axes: the innermost run of reduced axes that is contiguous in memory goes
  to one kernel call (k1 when it includes the innermost axis, else kn); the other reduced
  axes are looped over in row-major order, each call adding its result into the output
  (from 0).
- A large operand is first cut into tiles (``_splits``: YNNPACK's ``make_split_factors``
  as it was before its July 2026 reduction alignments, which jaxlib 0.10.2 matches: a
  tile of 128 KiB handed out innermost axis first); when a reduced axis is cut, each
  tile is reduced into a partial result and the partials are reduced again.

Speed: the NumPy kernels here (a few strided NumPy adds per element and a Python loop
over Kahan steps, one per 1024 elements of a row, batched over rows and tiles) take about
10-25x NumPy's ``sum`` on large arrays. They stay the reference; ``ynn_sum_nb`` has their
numba twins (the same operations in the same order, compared bit for bit by
tests/test_sum_order.py), which serve once ``cpu_math.accel`` has chosen numba (its
ski-rental choice: the time spent here in NumPy is charged to it). With them, eager
``jnp.sum`` of 10^6 or 4M elements takes about NumPy's time; what remains above it is
Python: ~5 us a call (4096 elements: ~19 us against jaxlite's ~14 us dispatch), and
~25-40 us for the tiling loop and ``_kernel_reduce``'s transposes of a sum over some
axes of a (512, 256) operand (~2.3x np.sum). Tier 2 calls the compiled kernels from its own
numba code (``numba_sum``), the tiling planned once when the program is built.
"""
import itertools
import math
import threading
import warnings

import numpy as np

from jaxlite._src.cpu_math import accel

TILE_BYTES = 32768 * 4
_loaded = {}
_lock = threading.Lock()


def _compiled(n):
    """The ``ynn_sum_nb`` module if numba is to serve a sum of ``n`` elements, else None
    (numba missing, turned off, failing, or not chosen yet)."""
    if not accel.ready(n):
        return None
    mod = _loaded.get("nb", False)
    if mod is False:
        with _lock:
            if "nb" not in _loaded:
                try:
                    from jaxlite._src.prims import ynn_sum_nb as mod
                except Exception as e:  # noqa: BLE001 - numba's failure: NumPy's kernels serve
                    warnings.warn(f"jaxlite: loading the compiled YNNPACK sum kernels failed "
                                  f"({type(e).__name__}: {e}); using the NumPy kernels (same "
                                  "results, slower)", RuntimeWarning, stacklevel=3)
                    mod = None
                _loaded["nb"] = mod
            mod = _loaded["nb"]
    return mod


def _kahan(acc, err, a):
    """YNNPACK's ``kahan_sum``: ``acc += a`` compensated by ``err`` (a non-finite error
    is dropped)."""
    y = a - err
    t = acc + y
    e = (t - acc) - y
    if not np.isfinite(e).all():
        e = np.where(np.isfinite(e), e, e.dtype.type(0))
    return t, e


def _add4(v):
    """``((v0 + v1) + v2) + v3`` over axis 2 of ``v`` (a zero from the kernel's start
    changes only a ``-0.0``, which the Kahan step's ``+0.0`` start turns into ``0.0``
    anyway). Three adds of strided views are faster than a reduce over the short axis."""
    return ((v[:, :, 0] + v[:, :, 1]) + v[:, :, 2]) + v[:, :, 3]


def _k1(y):
    """Sums of the rows of ``y`` (rows, k) in the k1 kernel's order."""
    rows, k = y.shape
    dt = y.dtype
    lanes = 64 // dt.itemsize
    blk = 4 * lanes
    full = k // blk
    local = _add4(y[:, :full * blk].reshape(rows, full, 4, lanes))
    groups = full // 4
    acc0g = _add4(local[:, :4 * groups].reshape(rows, groups, 4, lanes))
    acc2, err, acc1 = _levels(acc0g, 256 // (4 * lanes), lanes)
    clock = 4 * lanes * groups
    acc0 = np.zeros((rows, lanes), dt)
    for b in range(4 * groups, full):
        acc0 = acc0 + local[:, b]
        clock += lanes
        if clock % 16 == 0:
            acc1 = acc1 + acc0
            acc0 = np.zeros((rows, lanes), dt)
    if k % blk:
        tail = np.zeros((rows, blk), dt)
        tail[:, :k - full * blk] = y[:, full * blk:]
        acc0 = acc0 + np.add.reduce(tail.reshape(rows, 4, lanes), axis=1)
    acc2, err = _kahan(acc2, err, acc1 + acc0)
    x = acc2
    while x.shape[1] > 1:
        h = x.shape[1] // 2
        x = x[:, :h] + x[:, h:]
    return x[:, 0]


def _levels(acc0g, per, lanes):
    """Level 1 (sums of ``per`` groups from 0) added into the Kahan level, and what is
    left in level 1 after the last whole ``per`` groups."""
    rows, groups = acc0g.shape[:2]
    dt = acc0g.dtype
    q = groups // per
    acc2 = np.zeros((rows, lanes), dt)
    err = np.zeros((rows, lanes), dt)
    if q:
        v = acc0g[:, :q * per].reshape(rows, q, per, lanes)
        sums = v[:, :, 0]
        for j in range(1, per):         # (one add after another)
            sums = sums + v[:, :, j]
        for p in np.moveaxis(sums, 1, 0):
            acc2, err = _kahan(acc2, err, p)
    acc1 = np.zeros((rows, lanes), dt)
    for j in range(q * per, groups):
        acc1 = acc1 + acc0g[:, j]
    return acc2, err, acc1


def _kn(y):
    """Sums over axis 1 of ``y`` (rows, k, n) in the kn kernel's order."""
    rows, k, n = y.shape
    dt = y.dtype
    if k <= 4:      # (the rows added into the output directly)
        return np.add.accumulate(y, axis=1)[:, -1] + dt.type(0)
    full = k // 4
    local = _add4(y[:, :full * 4].reshape(rows, full, 4, n))
    groups = full // 4
    acc0g = _add4(local[:, :4 * groups].reshape(rows, groups, 4, n))
    acc2, err, acc1 = _levels(acc0g, 16, n)
    acc0 = np.zeros((rows, n), dt)
    for b in range(4 * groups, full):
        acc0 = acc0 + local[:, b]
    if k % 4:
        acc0 = acc0 + np.add.accumulate(y[:, full * 4:], axis=1)[:, -1]
    acc2, err = _kahan(acc2, err, acc1 + acc0)
    return acc2


def _run(shape, strides, item, axes):
    """YNNPACK's split of one reduce node over ``axes`` of an operand of ``shape`` and
    ``strides`` (bytes; element size ``item``): the innermost run of reduced axes that is
    contiguous in memory (one kernel call; ``inner``: it includes the innermost axis, the
    k1 kernel, else kn), the other reduced axes (``outer``, looped over in row-major order)
    and the kept ones. None when every reduced axis has size 1."""
    run, inner = [], None
    for a in range(len(shape) - 1, -1, -1):
        if shape[a] == 1:
            continue
        if a not in axes:
            if run:
                break
            continue
        if not run:
            inner = strides[a] == item
            run.append(a)
        elif strides[a] == strides[run[-1]] * shape[run[-1]]:
            run.append(a)
        else:
            break
    if not run:
        return None
    run = run[::-1]
    return (inner, run, [a for a in axes if a not in run],
            [a for a in range(len(shape)) if a not in axes])


def _layout(shape, plan):
    """The transposition and sizes of a reduce node's kernel call (``_run``'s ``plan``):
    k1: rows of the run (``perm``: kept + outer + run; (rows, kr)); kn: the run's rows of
    the innermost kept columns (lead + outer + run + cols; (rows, kr, nc)); ``m`` the
    outer axes' size (each result adds ``m`` kernel results, one after another)."""
    inner, run, outer, kept = plan
    m = math.prod(shape[a] for a in outer)
    kr = math.prod(shape[a] for a in run)
    if inner:
        return kept + outer + run, (-1, kr), m
    cols = [a for a in kept if a > run[-1]]
    lead = [a for a in kept if a < run[-1]]
    return lead + outer + run + cols, (-1, kr, math.prod(shape[a] for a in cols)), m


def _kernel_reduce(x, axes, nb=None):
    """One YNNPACK reduce node without tiling: ``x`` (any strides) summed over ``axes`` (by
    the compiled kernels of module ``nb`` if given)."""
    dt = x.dtype
    plan = _run(x.shape, x.strides, dt.itemsize, axes)
    if plan is None:
        return np.sum(x, axis=tuple(axes), dtype=dt) + dt.type(0)
    out_shape = tuple(x.shape[a] for a in plan[3])
    perm, shape, m = _layout(x.shape, plan)
    y = np.transpose(x, perm).reshape(shape)
    if nb is not None:
        out = np.empty(math.prod(out_shape), dt)
        (nb.k1_rows if plan[0] else nb.kn_rows)(np.ascontiguousarray(y), m, out)
        return out.reshape(out_shape)
    if plan[0]:
        t = _k1(y).reshape(-1, m)
    else:
        t = _kn(y).reshape(-1, m, shape[2])
        t = np.moveaxis(t, 1, -1).reshape(-1, m)
    return (np.add.accumulate(t, axis=1)[:, -1] + dt.type(0)).reshape(out_shape)


def _splits(shape, tile):
    """YNNPACK's tile (``make_split_factors``, as in jaxlib 0.10.2): a tile of
    ``TILE_BYTES`` handed out innermost axis first, each axis taking what is left."""
    splits, so_far = [], 1
    for e in shape[::-1]:
        s = max(1, min(tile // so_far, e))
        splits.append(s)
        so_far *= s
    return splits[::-1]


def ynn_sum(x, axes, compiled=None):
    """``x`` (float32/float64) summed over ``axes`` (sorted) in the order of XLA:CPU's
    YNNPACK reduce: by the numba kernels once ``accel`` has chosen numba (``compiled``
    True/False forces them or NumPy's), else by the NumPy kernels (time charged to
    ``accel``)."""
    x = np.asarray(x)
    nb = _compiled(x.size) if compiled is None else \
        (_compiled(1 << 62) if compiled else None)
    if nb is not None:
        return _ynn_sum(x, axes, nb)
    with accel.timer():
        return _ynn_sum(x, axes, None)


def _ynn_sum(x, axes, nb):
    """``ynn_sum`` by the kernels of ``nb`` (None: NumPy's). The tiles along a cut axis are
    reduced together: the axis is viewed as (tiles, tile) (the shorter last tile on its
    own), the tiles' axis kept."""
    x = np.ascontiguousarray(x)
    axes = tuple(axes)
    splits = _splits(x.shape, -(-TILE_BYTES // x.dtype.itemsize))
    cut = [a for a in axes if splits[a] < x.shape[a]]
    if nb is not None and len(axes) == x.ndim and cut in ([], [0]):
        out = np.empty(1, x.dtype)
        nb.whole_sum(x.reshape(-1), splits[0] * (x.size // x.shape[0]) if cut else x.size,
                     out)
        return out.reshape(())
    if not cut:
        return _kernel_reduce(x, axes, nb)
    full = {a: x.shape[a] // splits[a] for a in cut}
    part = np.empty(tuple(-(-x.shape[a] // splits[a]) if a in cut else 1 if a in axes
                          else x.shape[a] for a in range(x.ndim)), x.dtype)
    pieces = [(False, True) if x.shape[a] % splits[a] else (False,) for a in cut]
    for ragged in itertools.product(*pieces):
        rag = dict(zip(cut, ragged))
        src, dst, shape, red = [], [], [], []
        for a, e in enumerate(x.shape):
            if a not in rag:
                src.append(slice(None))
                dst.append(0 if a in axes else slice(None))
                if a in axes:
                    red.append(len(shape))
                shape.append(e)
                continue
            f, s = full[a], splits[a]
            src.append(slice(f * s, None) if rag[a] else slice(0, f * s))
            dst.append(slice(f, f + 1) if rag[a] else slice(0, f))
            shape += [1, e - f * s] if rag[a] else [f, s]
            red.append(len(shape) - 1)
        v = x[tuple(src)].reshape(shape)        # (splitting an axis: a view, same strides)
        part[tuple(dst)] = _kernel_reduce(v, red, nb)
    return _kernel_reduce(part, axes, nb)


def numba_sum(code, x, aval, axes, out):
    """Tier 2's code (``compiler/numba_bodies.ArrayCode`` ``code``) of ``x`` (of ``aval``,
    C-contiguous) summed over ``axes`` in YNNPACK's order: the numba kernels of
    ``ynn_sum_nb`` called from the program's own numba function, the tiling planned here
    once. None (tier 1's ``ynn_sum``) where the tiling cuts a reduced axis of a partial
    sum; a whole-operand sum whose tiles cut only axis 0 is ``whole_sum``."""
    shape, dt = tuple(aval.shape), np.dtype(aval.dtype)
    axes = tuple(sorted(axes))
    splits = _splits(shape, -(-TILE_BYTES // dt.itemsize))
    cut = [a for a in axes if splits[a] < shape[a]]
    whole = len(axes) == len(shape)
    strides = [dt.itemsize * math.prod(shape[d + 1:]) for d in range(len(shape))]
    plan = _run(shape, strides, dt.itemsize, axes)
    if (cut and not (whole and cut == [0])) or plan is None:
        return None
    code.need_import("from jaxlite._src.prims.ynn_sum_nb import k1_rows, kn_rows, whole_sum")
    res = code.out_buffer(out)
    flat = code.flat(res, out)
    size = math.prod(shape)
    if whole and (cut or (plan[0] and not plan[2])):
        tile = splits[0] * (size // shape[0]) if cut else size
        code.emit(f"whole_sum({code.flat(x, aval)}, {tile}, {flat})")
        return code.out_value(res, out)
    perm, lay, m = _layout(shape, plan)
    lay = (size // math.prod(lay[1:]),) + lay[1:]
    y = code.fresh("y")
    if list(perm) == sorted(perm):
        code.emit(f"{y} = {x}.reshape({lay})")
    else:
        code.emit(f"{y} = np.ascontiguousarray({x}.reshape({shape}).transpose("
                  f"{tuple(perm)})).reshape({lay})")
    code.emit(f"{'k1_rows' if plan[0] else 'kn_rows'}({y}, {m}, {flat})")
    return code.out_value(res, out)
