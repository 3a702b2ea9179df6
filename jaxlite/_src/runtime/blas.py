"""NumPy's BLAS threads: one per device while several devices compute, and never more than
the cores other processes leave free.

NumPy's BLAS (OpenBLAS) runs its own thread pool. When N device threads call it at the same
time, N pools fight over the cores and a matmul gets several times slower than on one device.
While more than one device executes, jaxlite sets the BLAS pools to one thread each (the
devices are the parallelism) and restores them afterwards, through threadpoolctl.

The same fight happens with other processes: OpenBLAS's threads wait for each other by
spinning, so on a machine whose cores are busy elsewhere (a test runner's other workers,
a second training job) a matmul its pool splits in two can take 20-40 times as long as on
one thread. ``adapt()``, called before each large matmul, looks at most every quarter
second at how much CPU the rest of the machine used since the last look (Linux
``/proc/stat``, minus this process's own time) and gives BLAS only the cores left free.
"""
from __future__ import annotations

import os
import threading
import time

__all__ = ["single_threaded_blas", "adapt", "ADAPT_MIN_MACS"]

# a matmul with fewer multiply-adds than this runs on one BLAS thread anyway
ADAPT_MIN_MACS = 1 << 20
_PERIOD = 0.25

_lock = threading.Lock()
_state = {"depth": 0, "libs": None, "saved": None}


def _libs():
    if _state["libs"] is None:
        try:
            from threadpoolctl import ThreadpoolController
            _state["libs"] = [c for c in ThreadpoolController().lib_controllers
                              if c.user_api == "blas"]
        except Exception:  # noqa: BLE001 - no threadpoolctl or no BLAS found: leave BLAS be
            _state["libs"] = []
    return _state["libs"]


class single_threaded_blas:
    """Context manager: BLAS uses one thread inside (re-entrant, thread-safe)."""
    __slots__ = ()

    def __enter__(self):
        with _lock:
            if _state["depth"] == 0:
                libs = _libs()
                _state["saved"] = [c.num_threads for c in libs]
                for c in libs:
                    if c.num_threads != 1:
                        c.set_num_threads(1)
            _state["depth"] += 1

    def __exit__(self, *exc):
        with _lock:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                for c, n in zip(_libs(), _state["saved"] or ()):
                    if n != 1:
                        c.set_num_threads(n)
        return False


class _Contention:
    """How many BLAS threads the cores other processes leave free allow (see the module
    docstring); only on Linux, where /proc/stat tells."""

    def __init__(self):
        self.next = 0.0
        self.last = None           # (wall, machine busy seconds, own cpu seconds)
        self.cpus = os.cpu_count() or 1
        self.want = None           # the BLAS pool's own size, read at the first look
        self.now = None            # the thread count set last
        self.ok = os.path.exists("/proc/stat") and self.cpus > 1

    @staticmethod
    def _busy():
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()[1:]
        ticks = [int(x) for x in fields]
        idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
        return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    def look(self, t):
        self.next = t + _PERIOD
        if _state["depth"]:               # devices run: BLAS is at one thread for now
            return
        libs = _libs()
        if not libs:
            self.ok = False
            return
        if self.want is None:
            self.want = max(c.num_threads for c in libs)
            self.now = self.want
        own = sum(os.times()[:2])
        busy = self._busy()
        last, self.last = self.last, (t, busy, own)
        if last is None or t - last[0] <= 0:
            return
        others = max(0.0, (busy - last[1]) - (own - last[2])) / (t - last[0])
        n = max(1, min(self.want, int(self.cpus - others + 0.25)))
        if n != self.now:
            with _lock:
                if _state["depth"] == 0:      # not while devices hold BLAS at one thread
                    for c in libs:
                        c.set_num_threads(n)
                    self.now = n


_contention = _Contention()


def adapt():
    """Before a large matmul: fit BLAS's thread count to the cores free right now (cheap:
    one clock read, and a look at /proc/stat at most every quarter second)."""
    c = _contention
    if c.ok:
        t = time.monotonic()
        if t >= c.next:
            try:
                c.look(t)
            except (OSError, ValueError, IndexError):
                c.ok = False
