"""Shardings: which device holds which slice of an array.

Every sharding reduces to one *tile array* per rank (``_tile(ndim)``): an object ndarray of
devices of shape ``(*pieces, replicas)`` where ``pieces[k]`` is the number of chunks dimension k
is cut into and the last axis lists the devices holding the same chunk (replicas).
``devices_indices_map`` — the one source of truth for which device holds which slice — and
every other query derive from it.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.runtime import devices as _devices
from jaxlite._src.sharding.mesh import Mesh, AbstractMesh, current_mesh
from jaxlite._src.sharding.partition_spec import PartitionSpec, entry_axes

__all__ = ["Sharding", "SingleDeviceSharding", "NamedSharding", "PositionalSharding",
           "chunk_slice", "tile_of", "sharding_from_tile"]


def chunk_slice(size, pieces, k):
    """The slice of chunk ``k`` when a dimension of ``size`` is cut into ``pieces`` chunks
    (ceil-sized chunks, the last ones possibly short, as XLA pads)."""
    if pieces == 1:
        return slice(None)
    c = -(-size // pieces)
    return slice(min(k * c, size), min((k + 1) * c, size), None)


def _object_array(items, shape):
    arr = np.empty(len(items), dtype=object)
    arr[:] = items
    return arr.reshape(shape)


class Sharding:
    """Base class of shardings. Subclasses define ``_tile(ndim)``, ``_device_assignment``,
    equality and repr; everything else is derived here."""
    memory_kind = "device"

    # -- what subclasses provide
    def _tile(self, ndim):
        raise NotImplementedError

    @property
    def _device_assignment(self):
        raise NotImplementedError

    # -- derived queries
    def _tile_cached(self, ndim):
        cache = self.__dict__.setdefault("_tiles", {})
        t = cache.get(ndim)
        if t is None:
            t = cache[ndim] = self._tile(ndim)
        return t

    @property
    def device_set(self):
        """The set of devices holding some part of arrays with this sharding."""
        return set(self._device_assignment)

    @property
    def num_devices(self):
        return len(self._device_assignment)

    @property
    def addressable_devices(self):
        pi = _devices.process_index()
        return {d for d in self._device_assignment if d.process_index == pi}

    @property
    def is_fully_addressable(self):
        pi = _devices.process_index()
        return all(d.process_index == pi for d in self._device_assignment)

    @property
    def is_fully_replicated(self):
        return self._tile_cached(self._rank_hint()).shape[-1] == self.num_devices

    def _rank_hint(self):
        return 0

    def check_rank(self, shape):
        """Raise JAX's error when arrays of ``shape`` cannot have this sharding."""
        self._tile_cached(len(shape))

    def _indices_and_replicas(self, shape):
        shape = tuple(int(s) for s in shape)
        cache = self.__dict__.setdefault("_idx", {})
        hit = cache.get(shape)
        if hit is not None:
            return hit
        tile = self._tile_cached(len(shape))
        pieces = tile.shape[:-1]
        where = {}
        for pos in np.ndindex(*pieces):
            idx = tuple(chunk_slice(shape[k], pieces[k], pos[k]) for k in range(len(shape)))
            for r, d in enumerate(tile[pos]):
                where[d] = (idx, r)
        hit = cache[shape] = {d: where[d] for d in self._device_assignment}
        return hit

    def devices_indices_map(self, global_shape):
        """For each device, the tuple of slices of an array of ``global_shape`` it holds."""
        return {d: ir[0] for d, ir in self._indices_and_replicas(global_shape).items()}

    def addressable_devices_indices_map(self, global_shape):
        """``devices_indices_map`` restricted to this process's devices."""
        pi = _devices.process_index()
        return {d: i for d, i in self.devices_indices_map(global_shape).items()
                if d.process_index == pi}

    def replica_ids(self, global_shape):
        """For each device, the replica number of the chunk it holds (0 for the first copy)."""
        return {d: ir[1] for d, ir in self._indices_and_replicas(global_shape).items()}

    def shard_shape(self, global_shape):
        """The shape of each shard of an array of ``global_shape``."""
        tile = self._tile_cached(len(global_shape))
        return tuple(-(-int(s) // p) for s, p in zip(global_shape, tile.shape[:-1]))

    def is_equivalent_to(self, other, ndim):
        """Whether ``other`` places arrays of rank ``ndim`` exactly as this sharding does."""
        if not isinstance(other, Sharding):
            return False
        if self._device_assignment != other._device_assignment and \
                set(self._device_assignment) != set(other._device_assignment):
            return False
        a, b = self._tile_cached(ndim), other._tile_cached(ndim)
        if a.shape != b.shape:
            return False
        return all(set(a[p]) == set(b[p]) for p in np.ndindex(*a.shape[:-1]))

    def with_memory_kind(self, kind):
        """This sharding in memory ``kind`` (CPU devices have one memory: 'device')."""
        if kind not in (None, "device", "pinned_host", "unpinned_host"):
            raise ValueError(f"Could not find memory addressable by device cpu. Device cpu "
                             f"can address the following memory kinds: device. Got "
                             f"memory kind: {kind}")
        return self


class SingleDeviceSharding(Sharding):
    """The whole array lives on one device."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device

    def _tile(self, ndim):
        return _object_array([self._device], (1,) * ndim + (1,))

    @property
    def _device_assignment(self):
        return (self._device,)

    @property
    def is_fully_replicated(self):
        return True

    def shard_shape(self, global_shape):
        return tuple(global_shape)

    def __repr__(self):
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"

    def __eq__(self, other):
        return isinstance(other, SingleDeviceSharding) and other._device == self._device

    def __hash__(self):
        return hash(("single", self._device))

    def __reduce__(self):
        return (SingleDeviceSharding, (self._device,))


class NamedSharding(Sharding):
    """Split an array over a ``Mesh``: dimension k over the mesh axes named in ``spec[k]``.

    Axes of the mesh not named in the spec hold replicas."""

    def __init__(self, mesh, spec=None, *, memory_kind=None):
        if spec is None:
            spec = PartitionSpec()
        if not isinstance(spec, PartitionSpec):
            if isinstance(spec, (tuple, list)):
                spec = PartitionSpec(*spec)
            else:
                raise TypeError("NamedSharding's spec must be a PartitionSpec, got "
                                f"{type(spec).__name__}")
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding's mesh must be a jax.sharding.Mesh, got "
                            f"{type(mesh).__name__}")
        for e in spec:
            for a in entry_axes(e):
                if a not in mesh.axis_names:
                    raise ValueError(f"Resource axis: {a} of {spec} is not found in mesh: "
                                     f"{tuple(mesh.axis_names)}.")
        self.mesh = mesh
        self.spec = spec
        if memory_kind not in (None, "device"):
            self.with_memory_kind(memory_kind)

    @property
    def _device_assignment(self):
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError("A NamedSharding over an AbstractMesh has no devices.")
        return tuple(self.mesh.devices.flat)

    def _rank_hint(self):
        return len(self.spec)

    @property
    def is_fully_replicated(self):
        sizes = self.mesh.shape
        return all(sizes[a] == 1 for e in self.spec for a in entry_axes(e))

    def _tile(self, ndim):
        if len(self.spec) > ndim:
            raise ValueError(
                f"One of device_put args was given the sharding of {self!r}, which implies "
                f"that it has a rank of at least {len(self.spec)}, but it is {ndim}")
        names = self.mesh.axis_names
        sizes = dict(zip(names, self.mesh.axis_sizes))
        entries = list(self.spec) + [None] * (ndim - len(self.spec))
        used = [entry_axes(e) for e in entries]
        flat_used = [a for u in used for a in u]
        rest = [a for a in names if a not in flat_used]
        order = [names.index(a) for a in flat_used + rest]
        devs = np.transpose(self.mesh.devices, order) if order else self.mesh.devices
        pieces = [math.prod(sizes[a] for a in u) for u in used]
        return devs.reshape(pieces + [math.prod(sizes[a] for a in rest)])

    def with_spec(self, spec):
        """The same mesh with another PartitionSpec."""
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        return NamedSharding(self.mesh, spec)

    def update(self, **kwargs):
        """A copy with ``mesh``/``spec`` replaced."""
        return NamedSharding(kwargs.get("mesh", self.mesh), kwargs.get("spec", self.spec))

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, memory_kind=device)"

    def __eq__(self, other):
        return (isinstance(other, NamedSharding) and self.mesh == other.mesh
                and self.spec == other.spec)

    def __hash__(self):
        return hash(("named", self.mesh, self.spec))

    def __reduce__(self):
        return (NamedSharding, (self.mesh, self.spec))


class PositionalSharding(Sharding):
    """The seed-era sharding (JAX 0.4.x): an ndarray of device sets, one per chunk position,
    congruent with the array's shape. ``reshape``/``transpose``/``T`` rearrange positions;
    ``replicate(axis)`` merges the positions along an axis into replica sets."""

    def __init__(self, devices, *, memory_kind=None):
        if isinstance(devices, PositionalSharding):
            self._ids = devices._ids
            return
        arr = np.asarray(devices, dtype=object) if not isinstance(devices, np.ndarray) \
            else devices
        if arr.dtype != object:
            arr = np.asarray(arr.tolist(), dtype=object)
        flat = list(arr.flat)
        if not flat:
            raise ValueError("PositionalSharding needs at least one device")
        self._ids = _object_array(flat, arr.shape + (1,))

    @classmethod
    def _from_tile(cls, tile):
        self = cls.__new__(cls)
        self._ids = tile
        return self

    @property
    def shape(self):
        return self._ids.shape[:-1]

    @property
    def ndim(self):
        return len(self.shape)

    def _rank_hint(self):
        return self.ndim

    @property
    def is_fully_replicated(self):
        return self._ids.shape[-1] == self.num_devices

    @property
    def _device_assignment(self):
        return tuple(sorted(self._ids.flat, key=lambda d: d.id)) \
            if self._ids.shape[-1] > 1 else tuple(self._ids.flat)

    def _tile(self, ndim):
        if ndim != self.ndim and self.is_fully_replicated:
            return self._ids.reshape((1,) * ndim + (self._ids.shape[-1],))
        if ndim != self.ndim:
            raise ValueError(
                f"Sharding {self!r} is only valid for values of rank {self.ndim}, but was "
                f"applied to a value of rank {ndim}")
        return self._ids

    def reshape(self, *shape):
        """The same device positions in another shape (as ndarray.reshape)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return PositionalSharding._from_tile(
            self._ids.reshape(tuple(shape) + (self._ids.shape[-1],)))

    def transpose(self, *axes):
        """Positions with axes permuted (as ndarray.transpose)."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        return PositionalSharding._from_tile(
            np.transpose(self._ids, tuple(axes) + (self.ndim,)))

    @property
    def T(self):
        return self.transpose()

    def replicate(self, axis=None, keepdims=True):
        """Merge positions along ``axis`` (all axes when None) into sets of replicas."""
        axes = tuple(range(self.ndim)) if axis is None else \
            ((axis,) if isinstance(axis, int) else tuple(axis))
        axes = tuple(a % self.ndim for a in axes)
        keep = [a for a in range(self.ndim) if a not in axes]
        t = np.transpose(self._ids, keep + list(axes) + [self.ndim])
        kept_shape = [self._ids.shape[a] for a in keep]
        t = t.reshape(kept_shape + [-1])
        # each replica set is listed in device-id order
        t = _object_array([d for pos in np.ndindex(*t.shape[:-1])
                           for d in sorted(t[pos], key=lambda d: d.id)], t.shape)
        if keepdims:
            shape = [1 if a in axes else self._ids.shape[a] for a in range(self.ndim)]
            t = t.reshape(shape + [t.shape[-1]])
        return PositionalSharding._from_tile(t)

    def __repr__(self):
        sets = np.empty(self.shape, dtype=object)
        for pos in np.ndindex(*self.shape):
            ids = sorted(d.id for d in self._ids[pos])
            sets[pos] = _DeviceSet(ids, self._ids[pos][0].platform.upper())
        body = np.array2string(sets, prefix="PositionalSharding(", separator=" ",
                               formatter={"all": str}, max_line_width=10**6)
        return f"PositionalSharding({body}, shape={self.shape})"

    __str__ = __repr__

    def __eq__(self, other):
        if not isinstance(other, PositionalSharding) or other._ids.shape != self._ids.shape:
            return False
        return all(set(a) == set(b) for a, b in zip(
            self._ids.reshape(-1, self._ids.shape[-1]),
            other._ids.reshape(-1, other._ids.shape[-1])))

    def __hash__(self):
        return hash(("positional", self._ids.shape,
                     tuple(frozenset(d.id for d in row)
                           for row in self._ids.reshape(-1, self._ids.shape[-1]))))

    def __reduce__(self):
        return (PositionalSharding._from_tile, (self._ids,))


class _DeviceSet:
    __slots__ = ("ids", "platform")

    def __init__(self, ids, platform):
        self.ids = ids
        self.platform = platform

    def __str__(self):
        return "{" + self.platform + " " + ", ".join(map(str, self.ids)) + "}"


def tile_of(sharding, ndim):
    """The tile array of ``sharding`` for arrays of rank ``ndim``."""
    return sharding._tile_cached(ndim)


def sharding_from_tile(tile, like, out_dims_from=None):
    """A sharding of the same kind as ``like`` whose tile array is ``tile``.

    For NamedSharding ``like`` (and tiles that come from its mesh), ``out_dims_from`` maps each
    output dimension to the PartitionSpec entry it takes (or None)."""
    ndim = tile.ndim - 1
    if isinstance(like, NamedSharding) and out_dims_from is not None:
        spec = PartitionSpec(*out_dims_from)
        while len(spec) and spec[-1] is None:
            spec = PartitionSpec(*spec[:-1])
        s = NamedSharding(like.mesh, spec)
        if s._tile_cached(ndim).shape == tile.shape:
            return s
    if tile.size == 1:
        return SingleDeviceSharding(tile.flat[0])
    if isinstance(like, PositionalSharding) or not isinstance(like, NamedSharding):
        return PositionalSharding._from_tile(tile)
    # A NamedSharding whose layout cannot be named over its mesh: a positional description.
    return PositionalSharding._from_tile(tile)


def resolve_sharding(s):
    """Turn what users pass as a sharding (a Sharding, a bare PartitionSpec under a mesh
    context) into a Sharding; None stays None."""
    if s is None or isinstance(s, Sharding):
        return s
    if isinstance(s, PartitionSpec):
        m = current_mesh()
        if m is None:
            raise ValueError(
                f"Using a bare PartitionSpec {s!r} requires a mesh context: use "
                f"NamedSharding(mesh, spec), or set one with `jax.set_mesh(mesh)` / "
                f"`with mesh:`.")
        return NamedSharding(m, s)
    if isinstance(s, _devices.CpuDevice):
        return SingleDeviceSharding(s)
    raise TypeError(f"Expected a Sharding, a Device or a PartitionSpec, got {s!r} of type "
                    f"{type(s).__name__}")

