"""Whether to use numba for the compiled twins of NumPy kernels (``cpu_math``'s XLA math,
the random kernels' loops): a ski-rental choice. numba costs ~0.2 s to import and ~0.5 s
more to set up its compiler the first time a process calls a compiled loop (the loops
themselves are compiled once per machine and then loaded from numba's disk cache in a few
ms each). A call on at least ``NUMBA_MIN`` elements decides at once; otherwise the time
spent in NumPy kernels is added up (``charge``) and numba is taken once that reaches
``RENT`` seconds. Small programs never import numba. When numba's compiler is already set
up in this process (tier 2 or the linalg loops ran a compiled loop), loading costs only
~50 ms, so the rent is then ``RENT_WARM``. ``JAXLITE_NUMBA=0`` turns numba off.
Kernels whose NumPy version is slow per element (the float64 ones calling the C library
element by element from Python, ~50-400 ns each) decide from ``NUMBA_MIN_SLOW`` elements:
one such call on 1M elements costs as much as loading numba.
"""
from __future__ import annotations

import os
import sys
import threading
import time

__all__ = ["NUMBA_MIN", "NUMBA_MIN_SLOW", "RENT", "RENT_WARM", "charge", "decided", "ready", "timer"]

NUMBA_MIN = 1 << 20
NUMBA_MIN_SLOW = 1 << 14
RENT = 0.5                 # seconds of NumPy kernels before numba is loaded anyway
RENT_WARM = 0.05           # the same once numba's compiler is set up in this process
_ON = os.environ.get("JAXLITE_NUMBA", "1") != "0"
_state = {"rent": 0.0}
_lock = threading.Lock()


def _numba_warm():
    """Whether numba's CPU target (its LLVM context) is already built in this process."""
    registry = sys.modules.get("numba.core.registry")
    target = getattr(registry, "cpu_target", None)
    return target is not None and "_toplevel_target_context" in vars(target)


def _importable():
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def ready(n=0, big=None):
    """Whether numba is to serve a call on ``n`` elements: installed, not turned off, and
    the choice made (a call on at least ``big`` elements, ``NUMBA_MIN`` by default, makes
    it at once, small ones once their rent is paid)."""
    if not _ON:
        return False
    got = _state.get("numba")
    if got is None:
        if n < (NUMBA_MIN if big is None else big) and _state["rent"] < (RENT_WARM if _numba_warm() else RENT):
            return False
        with _lock:
            if "numba" not in _state:
                _state["numba"] = _importable()
        got = _state["numba"]
    return got


def decided():
    """Whether this process has made its numba choice (numba taken, missing or turned
    off): before that, small calls run the NumPy kernels and pay rent."""
    return not _ON or "numba" in _state


def charge(seconds):
    """Add ``seconds`` spent in a NumPy kernel that numba could have run."""
    if _ON and "numba" not in _state:
        _state["rent"] += seconds


class timer:
    """``with timer():`` charges the time of the block (see ``charge``)."""
    __slots__ = ("t0",)

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        charge(time.perf_counter() - self.t0)
        return False
