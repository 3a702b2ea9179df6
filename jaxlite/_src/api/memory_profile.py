"""``jax.profiler.device_memory_profile``: the live arrays' device memory as a gzipped pprof
profile (``pprof --web profile.prof``), as JAX returns it.

JAX attributes each buffer to the Python stack that allocated it; jaxlite does not record
allocation stacks, so each sample's "stack" is one frame naming the buffer's type (e.g.
``float32[100,10]``), labelled with its device. Sample values are (allocations, bytes).
"""
from __future__ import annotations

import gc
import gzip
import time

from jaxlite._src.runtime.array import ArrayImpl

__all__ = ["device_memory_profile", "save_device_memory_profile"]


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(num: int, value) -> bytes:
    """One protobuf field: an int (varint), bytes/str (length-delimited) or a list of ints
    (packed)."""
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, list):
        value = b"".join(_varint(v) for v in value)
    return _varint((num << 3) | 2) + _varint(len(value)) + value


class _Strings:
    def __init__(self):
        self.table = [""]
        self.index = {"": 0}

    def __call__(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.table)
            self.table.append(s)
        return i


def device_memory_profile(backend=None) -> bytes:
    """A gzipped pprof profile of the device memory held by live arrays (one sample per
    buffer: allocation count and bytes, by buffer type and device)."""
    s = _Strings()
    funcs, samples = {}, []
    # (type(), not isinstance: a weakref proxy to a dead object among them would raise)
    for arr in [o for o in gc.get_objects() if issubclass(type(o), ArrayImpl)]:
        try:
            if arr.is_deleted():
                continue
            shards = arr.addressable_shards
        except Exception:   # noqa: BLE001  (an array being torn down)
            continue
        name = arr.aval.str_short(short_dtypes=False)
        fid = funcs.setdefault(name, len(funcs) + 1)
        for sh in shards:
            dev = f"{sh.device.platform}:{sh.device.id}"
            samples.append((fid, int(sh.data.nbytes), dev))
    msg = bytearray()
    msg += _field(1, _field(1, s("allocations")) + _field(2, s("count")))
    msg += _field(1, _field(1, s("space")) + _field(2, s("bytes")))
    for fid, nbytes, dev in samples:
        label = _field(1, s("device")) + _field(2, s(dev))
        msg += _field(2, _field(1, [fid]) + _field(2, [1, nbytes]) + _field(3, label))
    for name, fid in funcs.items():
        msg += _field(4, _field(1, fid) + _field(4, _field(1, fid)))
        msg += _field(5, _field(1, fid) + _field(2, s(name)) + _field(3, s(name)))
    for t in s.table:
        msg += _field(6, t)
    msg += _field(9, time.time_ns())
    return gzip.compress(bytes(msg))


def save_device_memory_profile(filename, backend=None) -> None:
    """Write ``device_memory_profile()`` to ``filename``."""
    with open(filename, "wb") as f:
        f.write(device_memory_profile(backend))
