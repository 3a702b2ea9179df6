"""LAPACK's real geev over a whole stack of matrices in one compiled loop (issue 19, item 5).

``eig``'s eigenvalues-only path calls SciPy's ``geev`` once per matrix; for a stack of small
matrices (``vmap(eigvals)`` over (128, 3, 3)) the Python call per matrix costs far more than
the decomposition. This module calls the same LAPACK routine (``sgeev``/``dgeev`` from
``scipy.linalg.cython_lapack``, the library SciPy's wrapper calls, with the same jobs,
matrix layout and workspace size, so the same bits) from a numba loop over the stack. For
matrices up to ``_SMALL_N`` the loop calls geev's own steps (gebal, gehd2, lahqr) as geev
would, skipping its and hseqr's workspace queries (a fifth of a 3 x 3 matrix's time); a
matrix geev would scale, or whose lahqr does not converge, takes the whole geev call.

numba must compile the loop once per process (it cannot be cached on disk: it calls a
function pointer), which takes a good fraction of a second, so the loop is built on a
background thread the first time a stack of at least ``MIN_BATCH`` real matrices is
decomposed; calls made meanwhile use the per-matrix path. ``JAXLITE_NUMBA=0`` turns it off.

The loop releases the GIL, so a stack of ``SPLIT_MIN`` matrices or more is split in two: a
worker thread decomposes the second half while the calling thread does the first (each
matrix is the same geev call either way, so the same values). Should the worker not have
started by the time the caller is done (a busy machine), the caller takes the second half
back and runs it itself. On a machine whose other cores are busy (1-minute load average at
least the core count minus a half, read at most once a second) the stack runs in one loop:
there a second thread only waits for a core.
"""
from __future__ import annotations

import os
import queue
import threading
import time

import numpy as np

from jaxlite._src.runtime import build_threads

__all__ = ["stack_geev", "MIN_BATCH", "SPLIT_MIN", "ready"]

MIN_BATCH = 8
# Matrices up to this size skip geev's workspace queries: its steps are called one by one
# (below every LAPACK's crossovers: hseqr calls lahqr below 15 (11 in older LAPACKs), gehrd
# its unblocked gehd2 below 32)
_SMALL_N = 11
SPLIT_MIN = 32           # stacks this large run in two threads (when 2+ cores are ours)
_ON = os.environ.get("JAXLITE_NUMBA", "1") != "0"
_kernels = {}            # "s" / "d" -> compiled loop, or None when it cannot be built
_lock = threading.Lock()
_threads = []


def _build(prefix):
    """Compile the loop over ``{prefix}geev`` (None when numba or the symbol is missing)."""
    try:
        import ctypes

        import numba
        from numba.extending import get_cython_function_address
        build_threads.shield_numba()
        get_cython_function_address("scipy.linalg.cython_lapack", prefix + "geev")
    except Exception:  # noqa: BLE001 - no numba / SciPy without cython_lapack: no loop
        return None
    p = ctypes.c_void_p

    def lapack(name, nargs):
        addr = get_cython_function_address("scipy.linalg.cython_lapack", prefix + name)
        return ctypes.CFUNCTYPE(None, *([p] * nargs))(addr)
    geev = lapack("geev", 14)
    try:   # geev's own steps, called one by one for small matrices (see _SMALL_N)
        gebal, gehd2, lahqr = lapack("gebal", 8), lapack("gehd2", 8), lapack("lahqr", 14)
        small_n = _SMALL_N
    except Exception:  # noqa: BLE001 - a SciPy without them: geev for every size
        gebal = gehd2 = lahqr = geev
        small_n = 0
    fi = np.finfo(np.float32 if prefix == "s" else np.float64)
    # geev scales a matrix whose largest |entry| is outside [sqrt(tiny) / eps, its inverse];
    # those (with a margin for rounding) take the whole geev call
    lo_norm = float(np.sqrt(fi.tiny) / fi.eps) * 4.0
    hi_norm = 1.0 / lo_norm

    @numba.njit(nogil=True)
    def loop(x, lwork, w):   # pragma: no cover - compiled (tests run it)
        nb, n = x.shape[0], x.shape[1]
        a = np.empty(n * n, x.dtype)
        work = np.empty(max(lwork, n, 1), x.dtype)
        vl = np.empty(1, x.dtype)
        vr = np.empty(1, x.dtype)
        job = np.array([78, 66], np.uint8)     # 'N': no eigenvectors; 'B': balance
        dims = np.array([n, 1, lwork, 0, 0, 0, 0], np.int32)   # n, ldv, lwork, info,
        wrk = np.empty(n, x.dtype)                              # ilo, ihi, false
        wik = np.empty(n, x.dtype)
        scale = np.empty(n, x.dtype)
        tau = np.empty(n, x.dtype)
        zero = x.dtype.type(0)
        for k in range(nb):
            anrm = zero
            for j in range(n):          # column-major copy (geev overwrites it)
                for i in range(n):
                    v = x[k, i, j]
                    if v != v or v - v != zero:
                        return -1       # NaN or inf: SciPy's wrapper decides
                    a[j * n + i] = v
                    anrm = max(anrm, abs(v))
            whole = n > small_n or (anrm != zero and not lo_norm < anrm < hi_norm)
            if not whole:
                # geev(jobvl='N', jobvr='N') of a matrix it does not scale is: gebal('B'),
                # gehrd (for n < 32 its unblocked gehd2), then hseqr('E', 'N'), which copies
                # the eigenvalues gebal isolated and (n below hseqr's crossover) calls lahqr
                # on rows ilo..ihi. The same calls here, so the same bits, without geev's
                # and hseqr's workspace queries (a fifth of the time of a 3 x 3 matrix)
                gebal(job[1:].ctypes, dims[0:].ctypes, a.ctypes, dims[0:].ctypes,
                      dims[4:].ctypes, dims[5:].ctypes, scale.ctypes, dims[3:].ctypes)
                gehd2(dims[0:].ctypes, dims[4:].ctypes, dims[5:].ctypes, a.ctypes,
                      dims[0:].ctypes, tau.ctypes, work.ctypes, dims[3:].ctypes)
                ilo, ihi = dims[4], dims[5]
                for i in range(n):   # (row ihi too: the answer when ilo == ihi, else
                    if i < ilo - 1 or i >= ihi - 1:   # lahqr overwrites it)
                        wrk[i] = a[i * n + i]
                        wik[i] = zero
                if ilo < ihi:
                    lahqr(dims[6:].ctypes, dims[6:].ctypes, dims[0:].ctypes, dims[4:].ctypes,
                          dims[5:].ctypes, a.ctypes, dims[0:].ctypes, wrk.ctypes, wik.ctypes,
                          dims[4:].ctypes, dims[5:].ctypes, vr.ctypes, dims[1:].ctypes,
                          dims[3:].ctypes)
                    if dims[3] != 0:
                        # lahqr did not converge (hseqr then tries its big-matrix solver):
                        # the whole geev call from the matrix as given
                        whole = True
                        for j in range(n):
                            for i in range(n):
                                a[j * n + i] = x[k, i, j]
            if whole:
                geev(job.ctypes, job.ctypes, dims[0:].ctypes, a.ctypes, dims[0:].ctypes,
                     wrk.ctypes, wik.ctypes, vl.ctypes, dims[1:].ctypes, vr.ctypes,
                     dims[1:].ctypes, work.ctypes, dims[2:].ctypes, dims[3:].ctypes)
                if dims[3] != 0:
                    return dims[3]
            for i in range(n):
                # SciPy's w = wr + 1j * wi, op by op: (0 + 1j) * (wi + 0j) is
                # (0 * wi - 1 * 0, 0 * 0 + 1 * wi); adding wr + 0j gives the same bits
                # (signed zeros included) as these float operations
                re = wrk[i] + (zero * wik[i] - zero)
                im = zero + (zero * zero + wik[i])
                w[k, i] = complex(re, im)
        return 0

    try:   # compile for C-contiguous stacks of this precision now
        dt = np.float32 if prefix == "s" else np.float64
        ct = np.complex64 if prefix == "s" else np.complex128
        loop(np.ones((1, 1, 1), dt), 4, np.empty((1, 1), ct))
    except Exception:  # noqa: BLE001 - compilation failed: keep the per-matrix path
        return None
    return loop


def _start(prefix):
    with _lock:
        if prefix in _kernels:
            return
        _kernels[prefix] = None      # (until built: the per-matrix path)

        def work():
            k = _build(prefix)
            with _lock:
                _kernels[prefix] = k
        _threads.append(build_threads.start(work, f"jaxlite-{prefix}geev"))


def ready(prefix, wait=False):
    """Whether the loop over ``{prefix}geev`` is compiled (``wait``: start it and wait)."""
    if wait:
        _start(prefix)
        for t in list(_threads):
            t.join()
    return _kernels.get(prefix) is not None


def stack_geev(flat, typecode, lwork):
    """The eigenvalues ``w`` (complex, (k, n)) of every matrix of the real stack ``flat``
    (k, n, n), as SciPy's ``geev(flat[k], lwork=lwork, compute_vl=0, compute_vr=0)`` gives
    ``wr + 1j * wi``; None when the loop is not built (yet), some entry is not finite, or
    geev reports a failure for some matrix."""
    if not _ON or typecode not in "sd" or flat.shape[0] < MIN_BATCH:
        return None
    loop = _kernels.get(typecode)
    if loop is None:
        if typecode not in _kernels:
            _start(typecode)
        return None
    flat = np.ascontiguousarray(flat)
    w = np.empty(flat.shape[:2], np.complex64 if typecode == "s" else np.complex128)
    lwork = int(lwork)
    if flat.shape[0] >= SPLIT_MIN and _CORES > 1 and _idle_core():
        h = flat.shape[0] // 2
        task = _Task(loop, flat[h:], lwork, w[h:])
        _worker().put(task)
        first = loop(flat[:h], lwork, w[:h])
        if first != 0 or task.result() != 0:
            return None
        return w
    if loop(flat, lwork, w) != 0:
        return None
    return w


try:
    _CORES = len(os.sched_getaffinity(0))
except (AttributeError, OSError):   # (no affinity API on this platform)
    _CORES = os.cpu_count() or 1


_load = [0.0, -1.0]       # (1-minute load average, time read)


def _idle_core():
    """Whether a core is likely free for the second half (load average below cores - 0.5;
    True where the platform has no load average)."""
    now = time.monotonic()
    if now - _load[1] > 1.0:
        try:
            _load[0] = os.getloadavg()[0]
        except (AttributeError, OSError):
            _load[0] = 0.0
        _load[1] = now
    return _load[0] < _CORES - 0.5


class _Task:
    """Half a stack for the worker; whoever claims it first (worker or caller) runs it."""
    __slots__ = ("args", "claimed", "done", "value", "lock")

    def __init__(self, *args):
        self.args = args
        self.claimed = False
        self.value = None
        self.done = threading.Event()
        self.lock = threading.Lock()

    def claim(self):
        with self.lock:
            if self.claimed:
                return False
            self.claimed = True
            return True

    def run(self):
        loop, *args = self.args
        try:
            self.value = loop(*args)
        except Exception:  # noqa: BLE001 - reported as a failure: the per-matrix path decides
            self.value = -1
        self.done.set()

    def result(self):
        """The loop's return value, run here if the worker has not claimed it yet."""
        if self.claim():
            self.run()
        else:
            self.done.wait()
        return self.value


_queue = []


def _worker():
    """The queue of the (daemon) worker thread, started at first use."""
    if not _queue:
        with _lock:
            if not _queue:
                q = queue.SimpleQueue()

                def serve():
                    while True:
                        task = q.get()
                        if task.claim():
                            task.run()
                threading.Thread(target=serve, daemon=True, name="jaxlite-geev-half").start()
                _queue.append(q)
    return _queue[0]
