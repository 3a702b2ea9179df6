"""Optional numba kernel for the Threefry-2x32 hash of large samples.

The NumPy hash (``kernels.hash_iota``) spends ~110 ufunc passes per chunk; when numba is
installed, one compiled loop computes the same 20 rounds per element about 3.5x faster
(uint32 arithmetic emulated in uint64 with explicit masks, since numba widens uint32).
It only serves samples of at least ``NUMBA_MIN`` elements, so small programs never import
numba; ``JAXLITE_NUMBA=0`` turns it off. Compiled code is cached on disk by numba.
"""
from __future__ import annotations

import os
import threading

__all__ = ["NUMBA_MIN", "hash_iota_kernel"]

NUMBA_MIN = 1 << 22
_ON = os.environ.get("JAXLITE_NUMBA", "1") != "0"
_state = {}
_lock = threading.Lock()


def _build():
    import numba
    import numpy as np

    u64 = np.uint64
    mask = u64(0xFFFFFFFF)

    @numba.njit(inline="always")
    def mix(a, b, r):
        # a += b; b = rotl32(b, r) ^ a
        a = (a + b) & mask
        b = (((b << u64(r)) | (b >> u64(32 - r))) & mask) ^ a
        return a, b

    @numba.njit(nogil=True, cache=True)
    def hash_iota(k0, k1, start, out0, out1):
        """Threefry-2x32 of the counts (0, start + j) under the key (k0, k1) into
        out0[j], out1[j]."""
        a0, a1 = u64(k0), u64(k1)
        a2 = (a0 ^ a1 ^ u64(0x1BD11BDA)) & mask
        ks = (a0, a1, a2)
        for j in range(out0.shape[0]):
            b = (u64(start + j) + a1) & mask
            a = (a0 + b) & mask
            b = (((b << u64(13)) | (b >> u64(19))) & mask) ^ a   # round 1 (add done above)
            a, b = mix(a, b, 15)
            a, b = mix(a, b, 26)
            a, b = mix(a, b, 6)
            a = (a + a1) & mask
            b = (b + a2 + u64(1)) & mask
            for g in range(1, 5):
                if g % 2:
                    a, b = mix(a, b, 17)
                    a, b = mix(a, b, 29)
                    a, b = mix(a, b, 16)
                    a, b = mix(a, b, 24)
                else:
                    a, b = mix(a, b, 13)
                    a, b = mix(a, b, 15)
                    a, b = mix(a, b, 26)
                    a, b = mix(a, b, 6)
                a = (a + ks[(g + 1) % 3]) & mask
                b = (b + ks[(g + 2) % 3] + u64(g + 1)) & mask
            out0[j] = a
            out1[j] = b

    return hash_iota


def hash_iota_kernel(n):
    """The compiled ``hash_iota(k0, k1, start, out0, out1)`` for a sample of ``n``
    elements, or None (small sample, numba missing or turned off: use the NumPy hash)."""
    if n < NUMBA_MIN or not _ON:
        return None
    if "kernel" not in _state:
        with _lock:
            if "kernel" not in _state:
                try:
                    _state["kernel"] = _build()
                except ImportError:
                    _state["kernel"] = None
    return _state["kernel"]
