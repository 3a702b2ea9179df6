"""Optional numba loops for the random kernels (``xla_numba``): the Threefry-2x32 hash and
XLA:CPU's float32 math, bit for bit the same as the NumPy kernels but several times faster.
Whether numba serves a sample is ``cpu_math.accel``'s ski-rental choice; once it is taken,
the loops serve samples of every size.
"""
from __future__ import annotations

import threading
import warnings

from jaxlite._src.cpu_math.accel import NUMBA_MIN, RENT, RENT_WARM, charge, decided, ready, \
    timer

__all__ = ["NUMBA_MIN", "RENT", "RENT_WARM", "numba_module", "hash_iota_kernel", "charge",
           "timer", "decided"]

_loaded = {}
_lock = threading.Lock()


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


def numba_module(n=0):
    """The ``xla_numba`` module if numba is to serve a sample of ``n`` elements, else None
    (numba missing or turned off, or not chosen yet and the sample small)."""
    if not ready(n):
        return None
    if "module" not in _loaded:
        with _lock:
            if "module" not in _loaded:
                _loaded["module"] = _load()
    return _loaded["module"]


def hash_iota_kernel(n):
    """The compiled ``hash_iota(k0, k1, start, out0, out1)`` for a sample of ``n``
    elements, or None (use the NumPy hash)."""
    mod = numba_module(n)
    return None if mod is None else mod.hash_iota
