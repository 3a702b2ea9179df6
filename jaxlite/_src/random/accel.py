"""Optional numba loops for the random kernels (``xla_numba``): the Threefry-2x32 hash and
XLA:CPU's float32 math, bit for bit the same as the NumPy kernels but several times faster.

numba costs ~0.2 s to import and ~0.5 s more to set up its compiler the first time a process
calls a compiled loop (the loops themselves are compiled once per machine and then loaded
from numba's disk cache in a few ms each), so it is a ski-rental choice like the normal
table's: a sample of at least ``NUMBA_MIN`` elements loads it at once; otherwise the time
spent in the NumPy kernels is added up (``charge``) and numba is loaded once that reaches
``RENT`` seconds. Small programs never import numba. When numba's compiler is already set up
in this process (tier 2 or the linalg loops ran a compiled loop), loading the loops from the
disk cache costs only ~50 ms, so the rent is then ``RENT_WARM``. Once loaded, the loops serve
samples of every size. ``JAXLITE_NUMBA=0`` turns numba off (the NumPy kernels serve everything).
"""
from __future__ import annotations

import os
import sys
import threading
import time
import warnings

__all__ = ["NUMBA_MIN", "RENT", "RENT_WARM", "numba_module", "hash_iota_kernel", "charge",
           "timer", "decided"]

NUMBA_MIN = 1 << 20
RENT = 0.5                 # seconds of NumPy kernels before numba is loaded anyway
RENT_WARM = 0.05           # the same once numba's compiler is set up in this process
_ON = os.environ.get("JAXLITE_NUMBA", "1") != "0"
_state = {"rent": 0.0}
_lock = threading.Lock()
_UNSET = object()


def _load():
    try:
        from jaxlite._src.random import xla_numba as mod
    except ImportError:
        return None
    if mod.constants_crc() != mod._CONSTANTS_CRC:
        warnings.warn("jaxlite.random: xla_numba's constants fingerprint is stale (a "
                      "kernel coefficient changed); using the NumPy kernels",
                      RuntimeWarning, stacklevel=3)
        return None
    return mod


def _numba_warm():
    """Whether numba's CPU target (its LLVM context) is already built in this process."""
    registry = sys.modules.get("numba.core.registry")
    target = getattr(registry, "cpu_target", None)
    return target is not None and "_toplevel_target_context" in vars(target)


def numba_module(n=0):
    """The ``xla_numba`` module if numba is to serve a sample of ``n`` elements, else None
    (numba missing or turned off, or not loaded yet and the sample small)."""
    if not _ON:
        return None
    mod = _state.get("module", _UNSET)
    if mod is _UNSET:
        if n < NUMBA_MIN and _state["rent"] < (RENT_WARM if _numba_warm() else RENT):
            return None
        with _lock:
            if "module" not in _state:
                _state["module"] = _load()
        mod = _state["module"]
    return mod


def decided():
    """Whether this process has made its numba choice (loops loaded, or numba missing or
    turned off): before that, small samples run the NumPy kernels and pay rent."""
    return not _ON or "module" in _state


def charge(seconds):
    """Add ``seconds`` spent in a NumPy kernel that numba could have run."""
    if _ON and "module" not in _state:
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


def hash_iota_kernel(n):
    """The compiled ``hash_iota(k0, k1, start, out0, out1)`` for a sample of ``n``
    elements, or None (use the NumPy hash)."""
    mod = numba_module(n)
    return None if mod is None else mod.hash_iota
