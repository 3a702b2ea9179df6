"""Device meshes: ``Mesh``, ``AbstractMesh``, ``AxisType``, the mesh context and mesh helpers
(``make_mesh``, ``mesh_utils.create_device_mesh``)."""
from __future__ import annotations

import collections
import contextlib
import enum
import math
import threading
import warnings

import numpy as np

from jaxlite._src.runtime import devices as _devices

__all__ = ["AxisType", "Mesh", "AbstractMesh", "AbstractDevice", "make_mesh",
           "create_device_mesh", "set_mesh", "use_mesh", "get_abstract_mesh", "get_mesh",
           "use_abstract_mesh", "current_mesh", "context_mesh"]


class AxisType(enum.Enum):
    """How the partitioner treats a mesh axis: ``Auto`` (the compiler chooses), ``Explicit``
    (shardings are part of types) or ``Manual`` (inside shard_map)."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


def _axis_types(axis_types, axis_names, default, who="Mesh"):
    """JAX's normalisation of ``axis_types`` (a tuple of AxisType, one AxisType, or None)."""
    if axis_types is None:
        return (default,) * len(axis_names)
    if not isinstance(axis_types, tuple):
        axis_types = (axis_types,)
    if not all(isinstance(t, AxisType) for t in axis_types):
        raise TypeError(f"axis_types passed to {who} must be of type `jax.sharding.AxisType`. "
                        f"Got {axis_types} of type {tuple(type(a) for a in axis_types)}")
    if len(axis_types) != len(axis_names):
        raise ValueError(f"Number of axis names should match the number of axis_types. Got "
                         f"axis_names={tuple(axis_names)} and axis_types={axis_types}")
    return axis_types


def _types_str(types):
    return "(" + ", ".join(t.name for t in types) + ("," if len(types) == 1 else "") + ")"


class AbstractDevice:
    """What an AbstractMesh knows of its devices: kind, core count and platform."""
    __slots__ = ("device_kind", "num_cores", "platform")

    def __init__(self, device_kind, num_cores=None, platform=None):
        self.device_kind = device_kind
        self.num_cores = num_cores
        self.platform = platform

    def _repr(self):
        return (f"device_kind={self.device_kind}, num_cores={self.num_cores}, "
                f"platform={self.platform}")

    def __repr__(self):
        return f"AbstractDevice({self._repr()})"

    def __eq__(self, other):
        return (isinstance(other, AbstractDevice) and self.device_kind == other.device_kind
                and self.num_cores == other.num_cores and self.platform == other.platform)

    def __hash__(self):
        return hash((self.device_kind, self.num_cores, self.platform))


class _MeshBase:
    """What Mesh and AbstractMesh share: axis names, sizes and types."""

    @property
    def shape(self):
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self):
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self):
        return math.prod(self.axis_sizes)

    @property
    def empty(self):
        return not self.axis_names

    @property
    def explicit_axes(self):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types)
                     if t is AxisType.Explicit)

    @property
    def auto_axes(self):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Auto)

    @property
    def manual_axes(self):
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t is AxisType.Manual)

    def _all_axes(self, ty):
        return bool(self.axis_types) and all(t is ty for t in self.axis_types)

    @property
    def are_all_axes_explicit(self):
        """Whether the mesh has axes and every one is Explicit."""
        return self._all_axes(AxisType.Explicit)

    @property
    def are_all_axes_auto(self):
        """Whether the mesh has axes and every one is Auto."""
        return self._all_axes(AxisType.Auto)

    @property
    def are_all_axes_manual(self):
        """Whether the mesh has axes and every one is Manual."""
        return self._all_axes(AxisType.Manual)

    def _axis_body(self):
        return ", ".join(f"'{n}': {s}" for n, s in zip(self.axis_names, self.axis_sizes))


class Mesh(_MeshBase):
    """An N-d array of devices with a name for each axis.

    ``Mesh(devices, axis_names, axis_types=None)``; usable as a context manager (``with
    mesh:``), which sets the mesh that bare ``PartitionSpec``s refer to.
    """

    def __init__(self, devices, axis_names, axis_types=None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        devs = np.asarray(devices, dtype=object) if not isinstance(devices, np.ndarray) \
            else devices
        if devs.dtype != object:
            devs = np.asarray(devs.tolist(), dtype=object)
        if devs.ndim != len(axis_names):
            raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to "
                             f"equal the length of its second argument (`axis_names`), but "
                             f"got devices.ndim == {devs.ndim} and len(axis_names) == "
                             f"{len(axis_names)}.")
        if len(set(axis_names)) != len(axis_names):
            raise ValueError(f"Mesh axis names must be unique, got {axis_names}")
        flat = [d for d in devs.flat if d is not None]
        if len(set(flat)) != len(flat):
            raise ValueError(f"Mesh devices must be distinct, got {flat}")
        self.devices = devs
        self.devices.flags.writeable = False
        self.axis_names = axis_names
        self.axis_sizes = tuple(devs.shape)
        self.axis_types = _axis_types(axis_types, axis_names, AxisType.Auto)
        self._hash = None

    @property
    def empty(self):
        return not self.axis_names

    @property
    def size(self):
        return 0 if self.empty else math.prod(self.axis_sizes)

    @property
    def device_ids(self):
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices) \
            if self.devices.size and not self.empty else np.zeros(self.devices.shape, int)

    @property
    def local_devices(self):
        return [d for d in self.devices.flat if d.process_index == _devices.process_index()]

    @property
    def local_mesh(self):
        """The sub-mesh of this process's devices (the mesh itself in one process)."""
        if not self.is_multi_process:
            return self
        me = _devices.process_index()
        pos = np.argwhere(np.vectorize(lambda d: d.process_index == me, otypes=[bool])(
            self.devices))
        if not len(pos):
            raise ValueError(f"The mesh has no device of process {me}.")
        lo, hi = pos.min(0), pos.max(0) + 1
        sub = self.devices[tuple(slice(a, b) for a, b in zip(lo, hi))]
        return Mesh(sub, self.axis_names, axis_types=self.axis_types)

    @property
    def is_multi_process(self):
        """Whether the mesh holds devices of several processes (jax.distributed)."""
        return len({d.process_index for d in self.devices.flat}) > 1

    @property
    def abstract_mesh(self):
        if self.empty:
            return _EMPTY_ABSTRACT
        d = self.devices.flat[0]
        return AbstractMesh(self.axis_sizes, self.axis_names, axis_types=self.axis_types,
                            abstract_device=AbstractDevice(d.device_kind, None, d.platform))

    def update(self, devices=None, axis_names=None, axis_types=None):
        """A copy with some fields replaced."""
        return Mesh(self.devices if devices is None else devices,
                    self.axis_names if axis_names is None else axis_names,
                    self.axis_types if axis_types is None else axis_types)

    def __eq__(self, other):
        if not isinstance(other, Mesh):
            return False
        return (self.axis_names == other.axis_names and self.axis_types == other.axis_types
                and self.devices.shape == other.devices.shape
                and all(a == b for a, b in zip(self.devices.flat, other.devices.flat)))

    def __hash__(self):
        if self._hash is None:
            self._hash = hash((self.axis_names, self.axis_types, self.devices.shape,
                               tuple(d.id for d in self.devices.flat)))
        return self._hash

    def __repr__(self):
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
                f"axis_types={_types_str(self.axis_types)})")

    def __str__(self):
        if self.empty:
            return "Mesh()"
        return f"Mesh({self._axis_body()}, axis_types={_types_str(self.axis_types)})"

    def __enter__(self):
        """The deprecated ``with mesh:``: as in JAX 0.10 it sets only the legacy mesh that
        bare PartitionSpecs of ``with_sharding_constraint``/``shard_map`` fall back to, not
        the mesh of ``jax.set_mesh`` (``get_abstract_mesh``, ``device_put(x, P(...))``)."""
        from jaxlite._src.config import config
        if config.jax_disallow_mesh_context_manager:
            raise RuntimeError("Mesh context manager is disabled.")
        warnings.warn("`with mesh:` context manager has been deprecated. Please use `with "
                      "jax.set_mesh(mesh):` instead.", DeprecationWarning, stacklevel=2)
        _legacy_stack().append(self)
        return self

    def __exit__(self, *exc):
        _legacy_stack().pop()
        return False

    def __reduce__(self):
        return (Mesh, (self.devices, self.axis_names, self.axis_types))


class AbstractMesh(_MeshBase):
    """A mesh's axis names, sizes and types without devices (what tracing sees)."""

    def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
        self.axis_sizes = tuple(axis_sizes)
        self.axis_names = tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError("AbstractMesh needs as many axis sizes as axis names, got "
                             f"{self.axis_sizes} and {self.axis_names}")
        self.axis_types = _axis_types(axis_types, self.axis_names, AxisType.Auto,
                                      "AbstractMesh")
        self.abstract_device = abstract_device

    @property
    def abstract_mesh(self):
        return self

    def update(self, axis_sizes=None, axis_names=None, axis_types=None, **kwargs):
        """A copy with some fields replaced."""
        return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                            self.axis_names if axis_names is None else axis_names,
                            self.axis_types if axis_types is None else axis_types,
                            abstract_device=kwargs.get("abstract_device",
                                                       self.abstract_device))

    def __eq__(self, other):
        return (isinstance(other, AbstractMesh) and self.axis_sizes == other.axis_sizes
                and self.axis_names == other.axis_names and self.axis_types == other.axis_types
                and self.abstract_device == other.abstract_device)

    def __hash__(self):
        return hash(("abstract", self.axis_sizes, self.axis_names, self.axis_types,
                     self.abstract_device))

    def __repr__(self):
        body = self._axis_body() if self.axis_names else "()"
        ad = "" if self.abstract_device is None else f", {self.abstract_device._repr()}"
        return f"AbstractMesh({body}, axis_types={_types_str(self.axis_types)}{ad})"

    __str__ = __repr__

    def __enter__(self):
        raise ValueError("AbstractMesh does not implement __enter__")

    def __exit__(self, *exc):
        raise ValueError("AbstractMesh does not implement __exit__")


_EMPTY_ABSTRACT = AbstractMesh((), ())
_EMPTY_CONCRETE = Mesh(np.empty((), dtype=object), ())

# -- the current mesh ------------------------------------------------------------------------
# ``jax.set_mesh`` / ``use_mesh`` / ``use_abstract_mesh`` push (mesh, abstract mesh) on a
# per-thread stack (``set_mesh`` outside a ``with`` sets the process-wide mesh); that is the
# mesh of ``get_abstract_mesh``/``get_mesh``, ``jax.typeof`` and bare PartitionSpecs given to
# device_put. The deprecated ``with mesh:`` only pushes on the legacy stack, which
# ``current_mesh`` (shard_map, with_sharding_constraint) falls back to, as in JAX 0.10.

_local = threading.local()
_global_mesh = [None]
# mesh_active[0]: nonzero while any thread has a concrete mesh set (or one is set process-wide);
# eager dispatch reads it before the (slower) ``context_mesh()`` look-up.
mesh_active = [0]
_pushed = [0]
# called after mesh_active changes (the eager fast paths' one flag folds it in)
mesh_listeners = []


def _recount():
    mesh_active[0] = _pushed[0] + (_global_mesh[0] is not None)
    for fn in mesh_listeners:
        fn()


def _push(mesh, abstract):
    _mesh_stack().append((mesh, abstract))
    if mesh is not None:
        _pushed[0] += 1
        _recount()


def _pop():
    mesh, _ = _mesh_stack().pop()
    if mesh is not None:
        _pushed[0] -= 1
        _recount()


def _mesh_stack():
    s = getattr(_local, "stack", None)
    if s is None:
        s = _local.stack = []
    return s


def _legacy_stack():
    s = getattr(_local, "legacy", None)
    if s is None:
        s = _local.legacy = []
    return s


def context_mesh():
    """The concrete mesh set by ``jax.set_mesh`` (or ``use_mesh``); None when unset."""
    for m, _ in reversed(_mesh_stack()):
        if m is not None:
            return m
    return _global_mesh[0]


def current_mesh():
    """The concrete mesh of ``jax.set_mesh``, else of a legacy ``with mesh:`` (None when
    neither is set)."""
    m = context_mesh()
    if m is None:
        legacy = _legacy_stack()
        if legacy:
            return legacy[-1]
    return m


def get_abstract_mesh():
    """The abstract mesh of the current ``jax.set_mesh`` context (an empty AbstractMesh when
    unset)."""
    s = _mesh_stack()
    if s:
        return s[-1][1]
    g = _global_mesh[0]
    return g.abstract_mesh if g is not None else _EMPTY_ABSTRACT


def get_mesh():
    """The concrete mesh set with ``jax.set_mesh`` (an empty Mesh when unset)."""
    m = context_mesh()
    return m if m is not None else _EMPTY_CONCRETE


class _MeshSetting:
    """Returned by ``set_mesh``: the mesh is set for the process now; in a ``with`` statement
    it is set for the thread inside the block instead."""

    def __init__(self, mesh):
        self._mesh = mesh
        self._prev = _global_mesh[0]
        _global_mesh[0] = mesh
        _recount()

    def __enter__(self):
        # used as a context manager: the mesh is this thread's, not the process's
        _global_mesh[0] = self._prev
        _recount()
        m = self._mesh
        _push(m, m.abstract_mesh if m is not None else _EMPTY_ABSTRACT)
        return m

    def __exit__(self, *exc):
        _pop()
        return False


def set_mesh(mesh):
    """Set the mesh that bare ``PartitionSpec``s, ``jax.typeof`` and sharding-in-types refer
    to; as a context manager (``with jax.set_mesh(mesh):``) it restores the previous mesh on
    exit."""
    if mesh is not None and not isinstance(mesh, Mesh):
        raise TypeError(f"set_mesh expects a jax.sharding.Mesh, got {type(mesh).__name__}")
    return _MeshSetting(mesh)


@contextlib.contextmanager
def use_mesh(mesh):
    """Context manager setting ``mesh`` as the current mesh (the seed-era spelling of
    ``jax.set_mesh``)."""
    if not isinstance(mesh, Mesh):
        raise TypeError(f"use_mesh expects a jax.sharding.Mesh, got {type(mesh).__name__}")
    _push(mesh, mesh.abstract_mesh)
    try:
        yield mesh
    finally:
        _pop()


@contextlib.contextmanager
def use_abstract_mesh(mesh):
    """Context manager setting the abstract mesh seen while tracing."""
    if not isinstance(mesh, AbstractMesh):
        raise TypeError(f"use_abstract_mesh expects an AbstractMesh, got "
                        f"{type(mesh).__name__}")
    _push(None, mesh)
    try:
        yield
    finally:
        _pop()


# -- building meshes ---------------------------------------------------------------------------

def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False,
                       allow_split_physical_axes=False):
    """An ndarray of devices of shape ``mesh_shape`` (``mesh_utils.create_device_mesh``).

    CPU devices have no physical topology, so devices are laid out in id order."""
    mesh_shape = tuple(int(s) for s in mesh_shape)
    if devices is None:
        devices = _devices.devices()
    devices = list(np.asarray(devices, dtype=object).flat)
    need = math.prod(mesh_shape)
    if need != len(devices):
        raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                         f"mesh_shape {mesh_shape}")
    arr = np.empty(len(devices), dtype=object)
    arr[:] = devices
    return arr.reshape(mesh_shape)


def create_hybrid_device_mesh(mesh_shape, dcn_mesh_shape, devices=None, *,
                              process_is_granule=False, should_sort_granules_by_key=True,
                              allow_split_physical_axes=False):
    """A device array of shape ``mesh_shape * dcn_mesh_shape`` for hybrid parallelism
    (``mesh_utils.create_hybrid_device_mesh``): the devices are grouped into granules (by
    ``slice_index``, or by ``process_index`` with ``process_is_granule``), each granule laid
    out as ``mesh_shape``, and the granules tiled as ``dcn_mesh_shape``. jaxlite's CPU
    devices have no ``slice_index`` (as JAX's): use ``process_is_granule=True``."""
    if devices is None:
        devices = _devices.devices()
    devices = list(devices)
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attr):
        raise ValueError(f"Device {devices[0]} does not have attribute {attr}. See "
                         "`process_is_granule` option.")
    groups: dict = {}
    for d in devices:
        groups.setdefault(getattr(d, attr), []).append(d)
    keys = sorted(groups) if should_sort_granules_by_key else list(groups)
    granules = [groups[k] for k in keys]
    if math.prod(dcn_mesh_shape) != len(granules):
        raise ValueError(f"Number of slices {len(granules)} must equal the product of "
                         f"dcn_mesh_shape {tuple(dcn_mesh_shape)}")
    meshes = [create_device_mesh(mesh_shape, g) for g in granules]
    # granule i occupies block i of the dcn grid: dimension k of the result is
    # dcn_mesh_shape[k] blocks of mesh_shape[k]
    nd = len(mesh_shape)
    grid = np.empty(tuple(dcn_mesh_shape) + tuple(mesh_shape), dtype=object)
    for i, idx in enumerate(np.ndindex(*dcn_mesh_shape)):
        grid[idx] = meshes[i]
    perm = [k for pair in zip(range(nd), range(nd, 2 * nd)) for k in pair]
    out = grid.transpose(perm)
    return out.reshape(tuple(int(a) * int(b) for a, b in zip(dcn_mesh_shape, mesh_shape)))


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None):
    """A Mesh of shape ``axis_shapes`` named ``axis_names`` over the first devices.

    As in JAX 0.10, axes are ``AxisType.Explicit`` unless ``axis_types`` says otherwise."""
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if isinstance(axis_names, str):
        axis_names = (axis_names,)
    if devices is None:
        devices = _devices.devices()
    need = math.prod(axis_shapes)
    if need > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of "
                         f"mesh_shape {axis_shapes}")
    arr = create_device_mesh(axis_shapes, list(devices)[:need])
    if arr.ndim != len(axis_names):
        Mesh(arr, axis_names)   # raises JAX's error
    types = _axis_types(axis_types, tuple(axis_names), AxisType.Explicit)
    return Mesh(arr, axis_names, axis_types=types)
