"""Arrays split over several devices: one NumPy buffer per device.

A ``ShardedArray`` is an ``ArrayImpl`` whose data lives in per-device buffers (in the order of
its sharding's device assignment). Replicas share one read-only buffer, so replicating an
array over 8 devices costs no memory. Code that needs the whole value reads ``_value``, which
assembles the shards once (a fully replicated array hands out its buffer without copying).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.runtime.array import ArrayImpl, Shard, _Deleted, single_device_sharding

__all__ = ["ShardedArray", "from_global", "from_buffers", "shard_buffers"]


class ShardedArray(ArrayImpl):
    """A concrete array whose shards live on several devices (see the module docstring)."""
    __slots__ = ("_aval", "_bufs", "_whole", "_shards")

    def __init__(self, aval, sharding, bufs, whole=None):
        mesh = getattr(sharding, "mesh", None)
        if mesh is not None and mesh.explicit_axes:
            # split over Explicit mesh axes: the sharding is part of the array's type
            from jaxlite._src.sharding.shardings import aval_sharding
            aval = ShapedArray(aval.shape, aval.dtype, aval.weak_type,
                               sharding=aval_sharding(sharding, len(aval.shape)))
        elif aval.sharding is not None:
            aval = ShapedArray(aval.shape, aval.dtype, aval.weak_type)
        self._aval = aval
        self.weak_type = aval.weak_type
        self._sharding = sharding
        self._bufs = bufs
        self._whole = whole
        self._shards = None

    # the whole value, assembled on first use
    @property
    def _value(self):
        w = self._whole
        if w is None:
            bufs = self._bufs
            if type(bufs) is _Deleted:
                return bufs
            w = self._whole = _assemble(self._aval, self._sharding, bufs)
        return w

    @property
    def aval(self):
        return self._aval

    @property
    def shape(self):
        return self._aval.shape

    @property
    def dtype(self):
        return self._aval.dtype

    @property
    def ndim(self):
        return len(self._aval.shape)

    @property
    def size(self):
        return self._aval.size

    @property
    def itemsize(self):
        return self._aval.dtype.itemsize

    @property
    def nbytes(self):
        return self._aval.size * self._aval.dtype.itemsize

    @property
    def sharding(self):
        return self._sharding

    @property
    def committed(self):
        return True

    def _check_live(self):
        if type(self._bufs) is _Deleted:
            raise RuntimeError(self._bufs.msg)

    def _shard_buffers(self):
        """{device: buffer} of the shards this process holds."""
        self._check_live()
        return {d: b for d, b in zip(self._sharding._device_assignment, self._bufs)
                if b is not None}

    @property
    def is_fully_addressable(self):
        """Whether every shard lives in this process (False for arrays spanning processes
        under jax.distributed)."""
        return all(b is not None for b in self._bufs) if type(self._bufs) is list else True

    @property
    def addressable_shards(self):
        """One Shard per device of this process (the same list on every call, as JAX)."""
        self._check_live()
        shards = self._shards
        if shards is None:
            shape = self._aval.shape
            ir = self._sharding._indices_and_replicas(shape)
            w = self.weak_type
            shards = self._shards = [
                Shard(d, ir[d][0], ArrayImpl(b, w, single_device_sharding(d)), ir[d][1])
                for d, b in zip(self._sharding._device_assignment, self._bufs)
                if b is not None]
        return shards

    @property
    def global_shards(self):
        """One Shard per device of every process (``data`` None for other processes')."""
        if self.is_fully_addressable:
            return self.addressable_shards
        local = {s.device: s for s in self.addressable_shards}
        ir = self._sharding._indices_and_replicas(self._aval.shape)
        return [local.get(d) or Shard(d, ir[d][0], None, ir[d][1])
                for d in self._sharding._device_assignment]

    def on_device_size_in_bytes(self):
        """Bytes the array occupies over all its devices (each replica counted, as JAX counts
        them, although jaxlite's replicas share one buffer)."""
        self._check_live()
        return sum(b.nbytes for b in self._bufs if b is not None)

    def unsafe_buffer_pointer(self):
        """Not defined for an array split over several devices (as in JAX)."""
        from jaxlite._src.core.errors import JaxRuntimeError
        raise JaxRuntimeError("INVALID_ARGUMENT: UnsafeBufferPointer() is supported only for "
                              "unsharded arrays.")

    def is_deleted(self):
        """Whether ``delete()`` was called."""
        return type(self._bufs) is _Deleted

    def delete(self):
        """Release the buffers; later uses raise RuntimeError as in JAX."""
        if type(self._bufs) is not _Deleted:
            d = _Deleted(self._aval.shape, self._aval.dtype)
            from jaxlite._src.sharding.shardings import aval_sharding
            s = aval_sharding(self._sharding, self.ndim)
            if s is not None:   # JAX names the shape as jax.typeof prints it
                a = ShapedArray(self._aval.shape, self._aval.dtype, sharding=s)
                d.msg = f"Array has been deleted with shape={a.str_short(False)}."
            self._bufs = d
            self._whole = None
            self._shards = None

    def clone(self):
        """A copy of the array with fresh buffers (replicas still sharing one)."""
        self._check_live()
        copies = {}
        for b in self._bufs:
            if b is not None and id(b) not in copies:
                c = copies[id(b)] = b.copy()
                c.flags.writeable = False
        bufs = [None if b is None else copies[id(b)] for b in self._bufs]
        s = self._sharding
        if hasattr(s, "spec") and len(s.spec) < self.ndim:   # JAX's copy names every dim
            s = s.update(spec=s.spec._normalized_spec_for_aval(self.ndim))
        return ShardedArray(self._aval, s, bufs)

    def _spans_processes(self):
        return not self.is_fully_addressable and not self._sharding.is_fully_replicated

    def __repr__(self):
        if self._spans_processes():   # JAX prints only the type of such an array
            weak = ", weak_type=True" if self.weak_type else ""
            return f"Array(shape={self.shape}, dtype={self.dtype.name}{weak})"
        return ArrayImpl.__repr__(self)

    def __str__(self):
        return repr(self) if self._spans_processes() else ArrayImpl.__str__(self)

    def __format__(self, spec):
        return repr(self) if self._spans_processes() else ArrayImpl.__format__(self, spec)

    def __reduce__(self):
        return (from_global, (np.asarray(self._value), self.weak_type, self._sharding))

    def __deepcopy__(self, memo):
        return self.clone()

    def __iter__(self):
        return ArrayImpl.__iter__(ArrayImpl(self._value, self.weak_type))


NON_ADDRESSABLE = ("Fetching value for `jax.Array` that spans non-addressable (non process "
                  "local) devices is not possible. You can use "
                  "`jax.experimental.multihost_utils.process_allgather` to print the global "
                  "array or use `.addressable_shards` method of jax.Array to inspect the "
                  "addressable (process local) shards.")


def _assemble(aval, sharding, bufs):
    ir = sharding._indices_and_replicas(aval.shape)
    devs = sharding._device_assignment
    local = [(d, b) for d, b in zip(devs, bufs) if b is not None]
    if sharding._tile_cached(len(aval.shape)).shape[-1] == len(devs) and local:
        return local[0][1]                                  # fully replicated
    if len(local) < len(devs):
        # this process may still hold every block (replicated over the other processes)
        have = {_key(ir[d][0]) for d, _ in local}
        if have != {_key(ir[d][0]) for d in devs}:
            raise RuntimeError(NON_ADDRESSABLE)
    out = np.empty(aval.shape, aval.dtype)
    done = set()
    for d, b in local:
        idx = ir[d][0]
        k = _key(idx)
        if k not in done:
            done.add(k)
            out[idx] = b
    out.flags.writeable = False
    return out


def _key(idx):
    return tuple((sl.start, sl.stop) for sl in idx)


def from_global(value, weak_type, sharding, owned=True):
    """An array with ``sharding`` whose shards are the blocks of the NumPy ``value``.

    Every device gets a C-contiguous buffer, as a real device would (a NumPy kernel on a
    strided view costs up to a third more): blocks that are contiguous in ``value`` stay
    views of it when ``owned`` (``value`` belongs to the caller's new array and is never
    written to again), the others are copied (each distinct block once: replicas share it).
    With ``owned=False`` (the caller's NumPy data) every block is copied, one copy in all."""
    if sharding.num_devices == 1:
        if not owned:
            value = np.array(value, copy=True)
        return ArrayImpl(value, weak_type, sharding)
    if owned and value.flags.writeable and value.base is None:
        value.flags.writeable = False
    aval = ShapedArray(value.shape, value.dtype, weak_type)
    slots, idxs = _block_plan(sharding, value.shape)
    views = True
    uniq = []
    for idx in idxs:
        b = value[idx]
        if not owned or not b.flags.c_contiguous:
            b = np.array(b, order="C", copy=True)
            b.flags.writeable = False
            views = False
        uniq.append(b)
    bufs = [None if k is None else uniq[k] for k in slots]
    if None in slots:
        views = False
    whole = value if owned and views else (
        bufs[0] if len(uniq) == 1 and bufs[0] is not None else None)
    return ShardedArray(aval, sharding, bufs, whole=whole)


def _block_plan(sharding, shape):
    """(for each device of ``sharding``'s assignment, the number of its distinct block or
    None for another process's device; the index of each distinct block), cached on the
    sharding per shape."""
    me = _local_process()
    cache = sharding.__dict__.setdefault("_block_plans", {})
    key = (shape, me)
    hit = cache.get(key)
    if hit is not None:
        return hit
    ir = sharding._indices_and_replicas(shape)
    where, slots, idxs = {}, [], []
    for d in sharding._device_assignment:
        if me is not None and d.process_index != me:
            slots.append(None)      # another process's shard (jax.distributed)
            continue
        idx = ir[d][0]
        k = where.setdefault(tuple((sl.start, sl.stop) for sl in idx), len(idxs))
        if k == len(idxs):
            idxs.append(idx)
        slots.append(k)
    hit = cache[key] = (slots, idxs)
    return hit


def _local_process():
    """This process's index when several processes run (jax.distributed), else None."""
    from jaxlite._src.runtime import devices
    return devices.process_index() if devices.process_count() > 1 else None


def from_buffers(aval, sharding, bufs):
    """An array with ``sharding`` made of per-device buffers (in device-assignment order;
    None for the devices of other processes)."""
    if sharding.num_devices == 1:
        return ArrayImpl(bufs[0], aval.weak_type, sharding)
    return ShardedArray(aval, sharding, list(bufs))


def shard_buffers(x):
    """{device: NumPy buffer} of a concrete array's shards."""
    return x._shard_buffers()
