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
from jaxlite._src.sharding.mesh import (Mesh, AbstractMesh, AxisType, context_mesh,
                                        _types_str)
from jaxlite._src.sharding.partition_spec import PartitionSpec, UNCONSTRAINED, entry_axes
from jaxlite._src.sharding.layout import Format

__all__ = ["Sharding", "SingleDeviceSharding", "NamedSharding", "PositionalSharding",
           "IndivisibleError", "DuplicateSpecError", "chunk_slice", "tile_of",
           "sharding_from_tile", "aval_sharding"]

_MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")


class IndivisibleError(ValueError):
    """A sharding splits some dimension into pieces that do not divide its size."""


class DuplicateSpecError(Exception):
    """A PartitionSpec maps one mesh axis to several array dimensions."""


def _check_memory_kind(kind):
    if kind is not None and kind not in _MEMORY_KINDS:
        raise ValueError(f"Could not find memory addressable by device cpu. Device cpu can "
                         f"address the following memory kinds: {', '.join(_MEMORY_KINDS)}. "
                         f"Got memory kind: {kind}")
    return kind if kind is not None else "device"


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
    def _addressable_device_assignment(self):
        """The devices of ``_device_assignment`` this process addresses, in that order (a
        private name of JAX's that checkpointing libraries read)."""
        pi = _devices.process_index()
        return tuple(d for d in self._device_assignment if d.process_index == pi)

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

    def _check_divisible(self, shape):
        """Raise JAX's IndivisibleError when the pieces do not divide ``shape``."""
        pieces = self._tile_cached(len(shape)).shape[:-1]
        for k, (n, p) in enumerate(zip(shape, pieces)):
            if n % p:
                raise IndivisibleError(
                    f"Sharding {self} implies that array axis {k} is partitioned {p} times, "
                    f"but the dimension size is {n} (full shape: {tuple(shape)}, "
                    f"per-dimension tiling factors: {list(pieces)} should evenly divide "
                    f"the shape)")

    def devices_indices_map(self, global_shape):
        """For each device, the tuple of slices of an array of ``global_shape`` it holds."""
        global_shape = tuple(int(s) for s in global_shape)
        self._check_divisible(global_shape)
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
        global_shape = tuple(int(s) for s in global_shape)
        self._check_divisible(global_shape)
        tile = self._tile_cached(len(global_shape))
        return tuple(s // p for s, p in zip(global_shape, tile.shape[:-1]))

    def _places_like(self, other, ndim):
        """Whether ``other`` puts the same chunks of rank-``ndim`` arrays on the same devices
        (device order and sharding kind aside)."""
        if not isinstance(other, Sharding):
            return False
        if self._device_assignment != other._device_assignment and \
                set(self._device_assignment) != set(other._device_assignment):
            return False
        a, b = self._tile_cached(ndim), other._tile_cached(ndim)
        if a.shape != b.shape:
            return False
        return all(set(a[p]) == set(b[p]) for p in np.ndindex(*a.shape[:-1]))

    def is_equivalent_to(self, other, ndim):
        """Whether ``other`` places arrays of rank ``ndim`` exactly as this sharding does, over
        the same device assignment (in the same order) and memory kind, as JAX decides."""
        if not isinstance(other, Sharding):
            return False
        return (tuple(self._device_assignment) == tuple(other._device_assignment)
                and self.memory_kind == other.memory_kind and self._places_like(other, ndim))

    def with_memory_kind(self, kind):
        """This sharding in memory ``kind`` (CPU devices have one memory: 'device')."""
        _check_memory_kind(kind)
        return self


class SingleDeviceSharding(Sharding):
    """The whole array lives on one device."""

    def __init__(self, device, *, memory_kind=None):
        self._device = device
        self._memory_kind = _check_memory_kind(memory_kind)

    @property
    def memory_kind(self):
        return self._memory_kind

    def with_memory_kind(self, kind):
        """The same device in memory ``kind``."""
        return SingleDeviceSharding(self._device, memory_kind=kind)

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
        return (f"SingleDeviceSharding(device={self._device!r}, "
                f"memory_kind={self._memory_kind})")

    def __eq__(self, other):
        return (isinstance(other, SingleDeviceSharding) and other._device == self._device
                and other._memory_kind == self._memory_kind)

    def __hash__(self):
        return hash(("single", self._device, self._memory_kind))

    def __reduce__(self):
        return (_single_device_sharding, (self._device, self._memory_kind))


def _single_device_sharding(device, memory_kind):
    return SingleDeviceSharding(device, memory_kind=memory_kind)


class NamedSharding(Sharding):
    """Split an array over a ``Mesh``: dimension k over the mesh axes named in ``spec[k]``.

    Axes of the mesh not named in the spec hold replicas. Over an ``AbstractMesh`` (the
    sharding of an aval, ``jax.typeof(x).sharding``) it has no devices and no memory kind."""

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
        _check_spec(mesh, spec)
        self.mesh = mesh
        self.spec = spec
        if isinstance(mesh, AbstractMesh) and memory_kind is None:
            self._memory_kind = None
        else:
            self._memory_kind = _check_memory_kind(memory_kind)

    @property
    def memory_kind(self):
        return self._memory_kind

    def _concrete(self, what):
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError(f"{what} is not implemented for `jax.sharding.AbstractMesh`.")

    @property
    def _device_assignment(self):
        da = self.__dict__.get("_da")
        if da is None:
            self._concrete("_device_assignment")
            da = self.__dict__["_da"] = tuple(self.mesh.devices.flat)
        return da

    @property
    def device_set(self):
        self._concrete("device_set")
        return set(self.mesh.devices.flat)

    @property
    def num_devices(self):
        return self.mesh.size

    @property
    def addressable_devices(self):
        self._concrete("addressable_devices")
        return Sharding.addressable_devices.fget(self)

    @property
    def is_fully_addressable(self):
        self._concrete("is_fully_addressable")
        return Sharding.is_fully_addressable.fget(self)

    def _rank_hint(self):
        return len(self.spec)

    @property
    def is_fully_replicated(self):
        sizes = self.mesh.shape
        return all(sizes[a] == 1 for e in self.spec for a in entry_axes(e))

    def _tile(self, ndim):
        spec = list(self.spec)
        if len(spec) > ndim:
            if any(e is not None for e in spec[ndim:]):
                raise ValueError(
                    f"Sharding {self} is only valid for values of rank at least "
                    f"{len(spec)}, but was applied to a value of rank {ndim}." +
                    (" For scalars the PartitionSpec should be P()" if ndim == 0 else ""))
            spec = spec[:ndim]
        names = self.mesh.axis_names
        sizes = dict(zip(names, self.mesh.axis_sizes))
        entries = spec + [None] * (ndim - len(spec))
        used = [entry_axes(e) for e in entries]
        flat_used = [a for u in used for a in u]
        rest = [a for a in names if a not in flat_used]
        order = [names.index(a) for a in flat_used + rest]
        devs = self.mesh.devices if isinstance(self.mesh, Mesh) else \
            np.arange(self.mesh.size).reshape(self.mesh.axis_sizes)
        devs = np.transpose(devs, order) if order else devs
        pieces = [math.prod(sizes[a] for a in u) for u in used]
        return devs.reshape(pieces + [math.prod(sizes[a] for a in rest)])

    def with_spec(self, spec):
        """The same mesh with another PartitionSpec (jaxlite; JAX spells it
        ``update(spec=...)``)."""
        return self.update(spec=spec)

    def with_memory_kind(self, kind):
        """This sharding in memory ``kind``."""
        return self.update(memory_kind=kind)

    def update(self, **kwargs):
        """A copy with ``mesh``/``spec``/``memory_kind`` replaced."""
        spec = kwargs.get("spec", self.spec)
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        return NamedSharding(kwargs.get("mesh", self.mesh), spec,
                             memory_kind=kwargs.get("memory_kind", self._memory_kind))

    def __repr__(self):
        mem = "" if self._memory_kind is None else f", memory_kind={self._memory_kind}"
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}{mem})"

    def __eq__(self, other):
        if not isinstance(other, NamedSharding):
            return False
        if self is other:
            return True
        return (self.spec == other.spec and self._memory_kind == other._memory_kind
                and (self.mesh is other.mesh or self.mesh == other.mesh))

    def __hash__(self):
        return hash(("named", self.mesh, self._memory_kind, self.spec))

    def __reduce__(self):
        return (_named_sharding, (self.mesh, self.spec, self._memory_kind))


def _named_sharding(mesh, spec, memory_kind):
    return NamedSharding(mesh, spec, memory_kind=memory_kind)


def _check_spec(mesh, spec):
    """JAX's checks of a NamedSharding's spec against its mesh."""
    counts = {}
    for e in spec:
        if e is None or e is UNCONSTRAINED:
            continue
        for a in (e if isinstance(e, tuple) else (e,)):
            counts[a] = counts.get(a, 0) + 1
    dup = [a for a, c in counts.items() if c > 1]
    if dup:
        raise DuplicateSpecError(
            f"A single NamedSharding spec specification can map every mesh axis to at most "
            f"one positional dimension, but {spec!r} has duplicate entries for "
            f"{', '.join(sorted(f'`{a}`' for a in dup))}")
    for e in spec:
        if e is None or e is UNCONSTRAINED:
            continue
        for a in (e if isinstance(e, tuple) else (e,)):
            if a not in mesh.axis_names:
                raise ValueError(f"Resource axis: {a} of {spec!r} is not found in mesh: "
                                 f"{tuple(mesh.axis_names)}.")
    if UNCONSTRAINED in spec and AxisType.Auto not in mesh.axis_types:
        raise ValueError(f"{spec!r} cannot contain `P.UNCONSTRAINED` when no mesh axis_types "
                         f"are `Auto`. Got mesh axis_types: {_types_str(mesh.axis_types)}")


def aval_sharding(sharding, ndim):
    """The sharding JAX keeps in an aval (``jax.typeof(x).sharding``): over the abstract
    mesh, the spec padded to ``ndim`` entries and naming only Explicit axes; None when the
    mesh has no Explicit axis (or ``sharding`` is not a NamedSharding)."""
    if not isinstance(sharding, NamedSharding) or not sharding.mesh.explicit_axes:
        return None
    cache = sharding.__dict__.setdefault("_aval_shardings", {})
    got = cache.get(ndim)
    if got is None:       # (jit looks it up for every sharded argument of every call)
        got = cache[ndim] = _aval_sharding(sharding, ndim)
    return got


def _aval_sharding(sharding, ndim):
    mesh = sharding.mesh
    explicit = set(mesh.explicit_axes)
    parts = []
    for e in list(sharding.spec)[:ndim] + [None] * (ndim - len(sharding.spec)):
        if e is None or e is UNCONSTRAINED:
            parts.append(None)
        elif isinstance(e, tuple):
            kept = tuple(a for a in e if a in explicit)
            parts.append(kept if kept else None)
        else:
            parts.append(e if e in explicit else None)
    return NamedSharding(mesh.abstract_mesh, PartitionSpec(*parts))


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

    memory_kind = None   # (JAX 0.4 shardings had no memory kind unless given one)

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
        h = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = hash((
                "positional", self._ids.shape,
                tuple(frozenset(d.id for d in row)
                      for row in self._ids.reshape(-1, self._ids.shape[-1]))))
        return h

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


def resolve_sharding(s, what="device_put"):
    """Turn what users pass as a sharding (a Sharding, a Device, a bare PartitionSpec under
    ``jax.set_mesh``, a ``Format`` of a layout and one of these) into a Sharding; None
    stays None. (A Format's layout is a memory order: jaxlite keeps every array in C order,
    which gives the same values, so only its sharding places the array.)"""
    if s is None or isinstance(s, Sharding):
        return s
    if isinstance(s, Format):
        return resolve_sharding(s.sharding, what)
    if isinstance(s, PartitionSpec):
        m = context_mesh()
        if m is None:
            raise ValueError(f"Please set a mesh via `jax.set_mesh` if a PartitionSpec is "
                             f"passed to {what}")
        return NamedSharding(m, s)
    if isinstance(s, _devices.CpuDevice):
        return SingleDeviceSharding(s)
    raise TypeError(f"Expected a Sharding, a Device or a PartitionSpec, got {s!r} of type "
                    f"{type(s).__name__}")
