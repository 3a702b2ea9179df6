"""Compiled (numba) twins of ``ynn_sum``'s kernels ``_k1`` and ``_kn``: the same float
operations in the same order, one row (k1) or one row of columns (kn) at a time, so bit
for bit the NumPy version's results (tests/test_sum_order.py compares them).

This module imports numba, so only ``ynn_sum._compiled`` imports it, and only once
``cpu_math.accel`` has chosen numba. numba's defaults keep the order: no ``fastmath`` (no
reassociation: the lanes stay lanes), no literal floats in the arithmetic (a float32
operand stays float32); its disk cache (``cache=True``) keeps the compiled loops between
processes.
"""
from __future__ import annotations

import numba
import numpy as np

_jit = numba.njit(nogil=True, cache=True, error_model="numpy")


@_jit
def _kahan(acc2, err, a, zero):
    """YNNPACK's ``kahan_sum`` on every lane: ``acc2 += a`` compensated by ``err`` (a
    non-finite error is dropped)."""
    for i in range(acc2.shape[0]):
        y = a[i] - err[i]
        t = acc2[i] + y
        e = (t - acc2[i]) - y
        acc2[i] = t
        err[i] = e if np.isfinite(e) else zero


@_jit
def _group(bl, gi, g):
    """``g`` = group ``gi`` of 4 blocks of ``bl`` (blocks, 4, lanes): per lane the blocks'
    sums ``((a0 + a1) + a2) + a3`` added one after another (lanes innermost, over a
    reshaped view: LLVM vectorizes it)."""
    b0 = 4 * gi
    for i in range(bl.shape[2]):
        g[i] = ((bl[b0, 0, i] + bl[b0, 1, i]) + bl[b0, 2, i]) + bl[b0, 3, i]
    for b in range(b0 + 1, b0 + 4):
        for i in range(bl.shape[2]):
            g[i] = g[i] + (((bl[b, 0, i] + bl[b, 1, i]) + bl[b, 2, i]) + bl[b, 3, i])


@_jit
def k1(y, out):
    """``out[r]`` = the sum of row ``r`` of ``y`` (rows, k; C-contiguous) in the k1
    kernel's order (``ynn_sum._k1``)."""
    rows, k = y.shape
    lanes = 64 // y.itemsize
    blk = 4 * lanes
    full = k // blk
    groups = full // 4
    per = 256 // blk
    q = groups // per
    zero = np.zeros(1, y.dtype)[0]
    acc2 = np.zeros(lanes, y.dtype)
    err = np.zeros(lanes, y.dtype)
    acc1 = np.zeros(lanes, y.dtype)
    acc0 = np.zeros(lanes, y.dtype)
    s = np.zeros(lanes, y.dtype)
    g = np.zeros(lanes, y.dtype)
    for r in range(rows):
        yr = y[r]
        bl = yr[:full * blk].reshape(full, 4, lanes)
        acc2[:] = zero
        err[:] = zero
        for p in range(q):
            for j in range(per):
                _group(bl, p * per + j, g)
                if j == 0:
                    for i in range(lanes):
                        s[i] = g[i]
                else:
                    for i in range(lanes):
                        s[i] = s[i] + g[i]
            _kahan(acc2, err, s, zero)
        acc1[:] = zero
        for gi in range(q * per, groups):
            _group(bl, gi, g)
            for i in range(lanes):
                acc1[i] = acc1[i] + g[i]
        clock = blk * groups
        acc0[:] = zero
        for b in range(4 * groups, full):
            o = b * blk
            for i in range(lanes):
                w = ((yr[o + i] + yr[o + lanes + i]) + yr[o + 2 * lanes + i]) \
                    + yr[o + 3 * lanes + i]
                acc0[i] = acc0[i] + w
            clock += lanes
            if clock % 16 == 0:
                for i in range(lanes):
                    acc1[i] = acc1[i] + acc0[i]
                acc0[:] = zero
        rem = k - full * blk
        if rem:
            o = full * blk
            for i in range(lanes):
                t = yr[o + i] if i < rem else zero
                for b in range(1, 4):
                    t = t + (yr[o + b * lanes + i] if b * lanes + i < rem else zero)
                acc0[i] = acc0[i] + t
        for i in range(lanes):
            s[i] = acc1[i] + acc0[i]
        _kahan(acc2, err, s, zero)
        h = lanes // 2
        while h:
            for i in range(h):
                acc2[i] = acc2[i] + acc2[i + h]
            h //= 2
        out[r] = acc2[0]


@_jit
def _cgroup(yr, base, g):
    """``g`` = per column of ``yr`` (k, n) the group of 4 blocks of 4 rows from row
    ``base``: each block ``((a0 + a1) + a2) + a3``, the blocks added one after another
    (columns innermost: vectorized)."""
    n = yr.shape[1]
    for c in range(n):
        g[c] = ((yr[base, c] + yr[base + 1, c]) + yr[base + 2, c]) + yr[base + 3, c]
    for o in range(base + 4, base + 16, 4):
        for c in range(n):
            g[c] = g[c] + (((yr[o, c] + yr[o + 1, c]) + yr[o + 2, c]) + yr[o + 3, c])


@_jit
def kn(y, out):
    """``out[r, c]`` = the sum of ``y[r, :, c]`` (``y``: rows, k, n) in the kn kernel's
    order (``ynn_sum._kn``)."""
    rows, k, n = y.shape
    full = k // 4
    groups = full // 4
    q = groups // 16
    zero = np.zeros(1, y.dtype)[0]
    acc2 = np.zeros(n, y.dtype)
    err = np.zeros(n, y.dtype)
    acc1 = np.zeros(n, y.dtype)
    acc0 = np.zeros(n, y.dtype)
    s = np.zeros(n, y.dtype)
    g = np.zeros(n, y.dtype)
    for r in range(rows):
        yr = y[r]
        if k <= 4:      # (the rows added into the output directly)
            for c in range(n):
                v = y[r, 0, c]
                for i in range(1, k):
                    v = v + y[r, i, c]
                out[r, c] = v + zero
            continue
        acc2[:] = zero
        err[:] = zero
        for p in range(q):
            for j in range(16):
                _cgroup(yr, (p * 16 + j) * 16, g)
                if j == 0:
                    for c in range(n):
                        s[c] = g[c]
                else:
                    for c in range(n):
                        s[c] = s[c] + g[c]
            _kahan(acc2, err, s, zero)
        acc1[:] = zero
        for gi in range(q * 16, groups):
            _cgroup(yr, gi * 16, g)
            for c in range(n):
                acc1[c] = acc1[c] + g[c]
        acc0[:] = zero
        for b in range(4 * groups, full):
            o = 4 * b
            for c in range(n):
                w = ((yr[o, c] + yr[o + 1, c]) + yr[o + 2, c]) + yr[o + 3, c]
                acc0[c] = acc0[c] + w
        if k % 4:
            o = full * 4
            for c in range(n):
                v = yr[o, c]
                for i in range(o + 1, k):
                    v = v + y[r, i, c]
                acc0[c] = acc0[c] + v
        for c in range(n):
            s[c] = acc1[c] + acc0[c]
        _kahan(acc2, err, s, zero)
        for c in range(n):
            out[r, c] = acc2[c]


@_jit
def k1_rows(y, m, out):
    """``out[r]`` (flat) = the kernel sums of rows ``r * m .. r * m + m - 1`` of ``y``
    (``k1``) added one after another, plus 0 (a reduce node whose outer reduced axes
    take ``m`` kernel calls per result: ``ynn_sum._kernel_reduce``)."""
    t = np.empty(y.shape[0], y.dtype)
    k1(y, t)
    zero = np.zeros(1, y.dtype)[0]
    for r in range(out.shape[0]):
        acc = t[r * m]
        for j in range(1, m):
            acc = acc + t[r * m + j]
        out[r] = acc + zero


@_jit
def kn_rows(y, m, out):
    """``k1_rows`` for the kn kernel: ``out[l * n + c]`` (flat) = the sums of column ``c``
    of ``y[l * m + j]`` (``kn``) over ``j`` added one after another, plus 0."""
    n = y.shape[2]
    t = np.empty((y.shape[0], n), y.dtype)
    kn(y, t)
    zero = np.zeros(1, y.dtype)[0]
    for r in range(y.shape[0] // m):
        for c in range(n):
            acc = t[r * m, c]
            for j in range(1, m):
                acc = acc + t[r * m + j, c]
            out[r * n + c] = acc + zero


@_jit
def whole_sum(flat, tile, out):
    """``out[0]`` = the sum of all of ``flat`` cut into tiles of ``tile`` elements: each
    tile's ``k1`` sum plus 0 (a result added into an output from 0), the partial sums
    summed again the same way (``ynn_sum._ynn_sum``'s whole-operand case)."""
    n = flat.shape[0]
    f = n // tile
    parts = np.empty(-(-n // tile), flat.dtype)
    if f:
        k1(flat[:f * tile].reshape((f, tile)), parts[:f])
    if f < parts.shape[0]:
        k1(flat[f * tile:].reshape((1, n - f * tile)), parts[f:])
    zero = np.zeros(1, flat.dtype)[0]
    if parts.shape[0] > 1:
        for i in range(parts.shape[0]):
            parts[i] = parts[i] + zero
        k1(parts.reshape((1, parts.shape[0])), parts[:1])
    out[0] = parts[0] + zero
