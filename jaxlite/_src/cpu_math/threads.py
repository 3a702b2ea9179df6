"""Worker threads for elementwise kernels over large arrays (NumPy and numba release the
GIL in their loops): one per core, shared by ``cpu_math`` and the random kernels."""
from __future__ import annotations

import contextvars
import os
import threading
from concurrent.futures import ThreadPoolExecutor

__all__ = ["CHUNK", "PARALLEL_MIN", "parallel_chunks", "in_worker", "workers"]

CHUNK = 1 << 15            # elements per chunk: a few 128 KiB buffers stay in L2
PARALLEL_MIN = 1 << 18     # below this many elements one thread is faster
_pool = [None]
_pool_lock = threading.Lock()
_NCPU = os.cpu_count() or 1
_tls = threading.local()


def _executor():
    if _pool[0] is None:
        with _pool_lock:
            if _pool[0] is None:
                _pool[0] = ThreadPoolExecutor(max_workers=_NCPU,
                                              thread_name_prefix="jaxlite-math")
    return _pool[0]


def parallel_chunks(run, n, chunk=CHUNK):
    """Call ``run(lo, hi)`` over ``[0, n)``: in one call for small ``n``, else split in
    chunk-aligned ranges across one worker thread per core."""
    if n < PARALLEL_MIN or _NCPU == 1 or getattr(_tls, "worker", False):
        run(0, n)
        return

    def work(lo, hi):
        _tls.worker = True
        run(lo, hi)

    # each worker runs in a copy of the caller's context: NumPy's ``errstate`` lives in a
    # context variable, so a kernel called under ``errstate(all="ignore")`` stays silent
    # in the workers too (a fresh pool thread would warn on a division by zero)
    per = -(-n // (_NCPU * chunk)) * chunk
    futs = [_executor().submit(contextvars.copy_context().run, work, s, min(s + per, n))
            for s in range(0, n, per)]
    for f in futs:
        f.result()


def workers():
    """How many worker threads ``parallel_chunks`` splits large ranges across."""
    return _NCPU


def in_worker():
    """Whether the calling thread is one of the workers."""
    return getattr(_tls, "worker", False)
