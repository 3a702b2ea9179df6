"""One BLAS thread per device while several devices compute at once.

NumPy's BLAS (OpenBLAS) runs its own thread pool. When N device threads call it at the same
time, N pools fight over the cores and a matmul gets several times slower than on one device.
While more than one device executes, jaxlite sets the BLAS pools to one thread each (the
devices are the parallelism) and restores them afterwards, through threadpoolctl.
"""
from __future__ import annotations

import threading

__all__ = ["single_threaded_blas"]

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
