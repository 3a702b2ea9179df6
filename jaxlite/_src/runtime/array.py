"""The concrete array type: an immutable NumPy buffer on a (logical) CPU device.

``Array`` is the public abstract type (``isinstance(x, jaxlite.Array)`` holds for concrete
arrays and for tracers, as in JAX); ``ArrayImpl`` is the concrete class. Operators and the
array methods (``sum``, ``reshape``, ``.at`` ...) are installed by jaxlite.numpy.
"""
from __future__ import annotations

import abc
import enum
import warnings

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.trace import (Tracer, ctx as _trace_ctx, staging_active,
                                     staging_somewhere)
from jaxlite._src.runtime import devices as _devices
from jaxlite._src.runtime import allocator as _allocator  # noqa: F401  (tunes malloc once)

__all__ = ["Array", "ArrayImpl", "Shard"]


def _abstract_property(name, doc):
    def get(self):
        raise NotImplementedError(f"{type(self).__name__} does not implement {name}")
    return property(get, doc=doc)


class Array(abc.ABC):
    """The type of jaxlite arrays (concrete arrays and, during tracing, tracers).

    As ``jax.Array`` it lists every array attribute: operators and NumPy-style methods are
    installed by jaxlite.numpy (on this class, on ArrayImpl and on Tracer); the metadata
    properties below are implemented by ArrayImpl (and, where meaningful, by tracers).
    """
    __slots__ = ()
    dtype = _abstract_property("dtype", "The array's dtype.")
    shape = _abstract_property("shape", "The array's shape.")
    ndim = _abstract_property("ndim", "The number of dimensions.")
    size = _abstract_property("size", "The number of elements.")
    itemsize = _abstract_property("itemsize", "Size of one element in bytes.")
    nbytes = _abstract_property("nbytes", "Total size of the elements in bytes.")
    sharding = _abstract_property("sharding", "The array's Sharding.")
    device = _abstract_property("device", "The device (or sharding) the array lives on.")
    committed = _abstract_property("committed", "Whether the array is committed to a device.")
    addressable_shards = _abstract_property("addressable_shards", "The local shards.")
    global_shards = _abstract_property("global_shards", "All shards.")
    is_fully_addressable = _abstract_property("is_fully_addressable",
                                              "Whether every shard is addressable here.")
    is_fully_replicated = _abstract_property("is_fully_replicated",
                                             "Whether every device holds the whole array.")

    def addressable_data(self, index):
        """The data of the index-th addressable shard."""
        raise NotImplementedError

    def copy_to_host_async(self):
        """Start copying the array to host memory."""
        raise NotImplementedError

    def item(self, *args):
        """The element as a Python scalar."""
        raise NotImplementedError

    def __copy__(self):
        return self


Array.register(Tracer)

_IMMUTABLE = ("JAX arrays are immutable and do not support in-place item assignment. Instead "
              "of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
              "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


class DLDeviceType(enum.IntEnum):
    """DLPack device types (as ``jax._src.dlpack.DLDeviceType``)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLROCM = 10


class _Deleted:
    """Stands in for the buffer of a deleted array: any use raises JAX's RuntimeError."""
    __slots__ = ("_msg", "_shape", "_dtype")

    def __init__(self, shape, dtype):
        # (kept for ArrayImpl's shape and dtype, readable on a deleted JAX array; any other
        # use, the jit call paths' `.shape` tests included, raises). The message is written
        # when first needed: donation deletes arrays on every call of a training step.
        self._shape, self._dtype = shape, dtype
        self._msg = None

    @property
    def msg(self):
        m = self._msg
        if m is None:
            m = self._msg = (f"Array has been deleted with shape={self._dtype.name}"
                             f"[{','.join(map(str, self._shape))}].")
        return m

    @msg.setter
    def msg(self, value):
        self._msg = value

    def __getattr__(self, name):
        raise RuntimeError(object.__getattribute__(self, "msg"))

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError(self.msg)


def _deleted_meta(x):
    """The ``_Deleted`` marker of a deleted array (whose shape and dtype stay readable);
    re-raises the RuntimeError being handled for any other array."""
    v = x._value
    if type(v) is _Deleted:
        return v
    raise


def _scalar_check(x):
    if x.ndim != 0:
        raise TypeError("Only scalar arrays can be converted to Python scalars; "
                        f"got arr.ndim={x.ndim}")


class ArrayImpl(Array):
    """A concrete, immutable array holding a NumPy value.

    Built by primitives' eager execution and by jit; users create arrays with
    ``jnp.array``/``jnp.asarray`` or ``jax.device_put``. ``_literal`` is True for an array
    made while a function is being staged (a scalar jnp's promotion converted, a constant an
    operation made): a jaxpr inlines such a 0-d array as a literal, as JAX does the Python
    and NumPy scalars it stands for, and takes any other array as a constant input.
    """
    __slots__ = ("_value", "weak_type", "_sharding", "_literal", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value, weak_type=False, sharding=None):
        self._value = value
        self.weak_type = weak_type
        self._sharding = sharding
        self._literal = staging_somewhere[0] != 0 and _trace_ctx.trace is not None and \
            staging_active()

    # -- metadata
    @property
    def aval(self):
        v = self._value
        try:
            return ShapedArray(v.shape, v.dtype, self.weak_type)
        except RuntimeError:   # deleted: its type stays known, as in JAX
            v = _deleted_meta(self)
            return ShapedArray(v._shape, v._dtype, self.weak_type)

    @property
    def shape(self):
        try:
            return self._value.shape
        except RuntimeError:
            return _deleted_meta(self)._shape

    @property
    def dtype(self):
        try:
            return self._value.dtype
        except RuntimeError:
            return _deleted_meta(self)._dtype

    @property
    def ndim(self):
        try:
            return self._value.ndim
        except RuntimeError:
            return len(_deleted_meta(self)._shape)

    @property
    def size(self):
        try:
            return self._value.size
        except RuntimeError:
            return int(np.prod(_deleted_meta(self)._shape, dtype=np.int64))

    @property
    def itemsize(self):
        return self._value.dtype.itemsize

    @property
    def nbytes(self):
        return self._value.nbytes

    @property
    def sharding(self):
        return self._sharding or default_sharding()

    @property
    def device(self):
        s = self.sharding
        ds = s.device_set
        return next(iter(ds)) if len(ds) == 1 else s

    def devices(self):
        """The set of devices the array lives on."""
        if self.is_deleted():    # (not ``_value``: a sharded array would assemble itself)
            raise RuntimeError(self._value.msg)
        return set(self.sharding.device_set)

    @property
    def committed(self):
        return self._sharding is not None

    @property
    def is_fully_addressable(self):
        return True

    @property
    def is_fully_replicated(self):
        return self.sharding.is_fully_replicated

    @property
    def addressable_shards(self):
        dev = next(iter(self.sharding.device_set))
        return [Shard(dev, tuple(slice(None) for _ in self.shape), self)]

    def _shard_buffers(self):
        """{device: NumPy buffer} of the shards (one device for ordinary arrays)."""
        return {next(iter(self.sharding.device_set)): self._value}

    global_shards = addressable_shards

    def addressable_data(self, index):
        """The array data on the index-th addressable device."""
        return self.addressable_shards[index].data

    def block_until_ready(self):
        """Wait until the value is computed (immediate in jaxlite); returns self. A deleted
        (or donated) array raises JAX's JaxRuntimeError."""
        if self.is_deleted():    # (not ``_value``: a sharded array would assemble itself)
            from jaxlite._src.core.errors import JaxRuntimeError
            raise JaxRuntimeError("INVALID_ARGUMENT: BlockHostUntilReady() called on deleted "
                                  "or donated buffer")
        return self

    def copy_to_host_async(self):
        """Start copying to host (a no-op: data already lives in host memory)."""

    def is_deleted(self):
        """Whether ``delete()`` was called."""
        return type(self._value) is _Deleted

    def delete(self):
        """Release the buffer; later uses raise RuntimeError as in JAX."""
        v = self._value
        if type(v) is not _Deleted:
            self._value = _Deleted(v.shape, v.dtype)

    def is_ready(self):
        """Whether the value is computed (always, in jaxlite)."""
        return True

    def platform(self):
        """The platform of the array's device: 'cpu'."""
        return "cpu"

    def on_device_size_in_bytes(self):
        """Bytes the buffer occupies on its device."""
        return self._value.nbytes

    def unsafe_buffer_pointer(self):
        """Address of the array's buffer. JAX's buffers are dense and the array's own; a
        value jaxlite keeps lighter (a NumPy scalar, or a view: ``jnp.zeros`` is a read-only
        broadcast, a slice shares its operand's memory) is first given a dense buffer of its
        own, so the address is stable, the array's alone, and kept when the array is
        donated (``jit(..., donate_argnums=...)`` updates that buffer in place)."""
        v = self._value
        if type(v) is _Deleted:
            from jaxlite._src.core.errors import JaxRuntimeError
            raise JaxRuntimeError("INVALID_ARGUMENT: Buffer has been deleted or donated.")
        if type(v) is not np.ndarray or v.base is not None or not v.flags.c_contiguous:
            v = self._value = np.array(v, order="C", copy=True)
        return v.ctypes.data

    def clone(self):
        """A copy of the array with a fresh buffer."""
        return ArrayImpl(self._value.copy(), self.weak_type, self._sharding)

    @property
    def _npy_value(self):
        return self.__array__()

    def tobytes(self, order="C"):
        """The raw bytes of the array (as ``np.ndarray.tobytes``)."""
        return self._value.tobytes(order=order)

    # -- conversion
    def __array__(self, dtype=None, copy=None):
        v = self._value
        if type(v) is _Deleted:
            raise RuntimeError(v.msg)
        if copy:
            return np.array(v, dtype=dtype, copy=True)
        if dtype is not None and np.dtype(dtype) != v.dtype:
            if copy is False:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return np.asarray(v).astype(dtype)   # (a 0-d value may be a NumPy scalar)
        v = v.view() if type(v) is np.ndarray else np.asarray(v)
        v.flags.writeable = False   # as JAX: NumPy views of an Array are read-only
        return v

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export the buffer through DLPack (CPU)."""
        kw = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
        return np.asarray(self._value).__dlpack__(**kw)

    def __dlpack_device__(self):
        """(DLDeviceType.kDLCPU, 0)."""
        return (DLDeviceType.kDLCPU, 0)

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        _scalar_check(self)
        return int(self._value)

    def __float__(self):
        _scalar_check(self)
        return float(self._value)

    def __complex__(self):
        _scalar_check(self)
        return complex(self._value)

    def __index__(self):
        v = self._value
        if v.ndim != 0 or v.dtype.kind not in "iu" and not _is_intn(v.dtype):
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return int(v)

    @property
    def __numpy_dtype__(self):
        warnings.warn("Implicit conversion of an array to a dtype is deprecated; rather than "
                      "dtype=arr use dtype=arr.dtype. In the future this will result in an "
                      "error.", DeprecationWarning, stacklevel=2)
        return self._value.dtype

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._value.shape[0]

    def __iter__(self):
        v = self._value
        if v.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        w = self.weak_type
        if v.ndim == 1:
            return (ArrayImpl(np.asarray(e, v.dtype), w) for e in v)
        return (ArrayImpl(e, w) for e in v)

    def item(self, *args):
        """The element as a Python scalar."""
        return np.asarray(self._value).item(*args)

    def tolist(self):
        """The array as nested Python lists."""
        return np.asarray(self._value).tolist()

    # unhashable as in JAX: ``__hash__ = None``, so ``isinstance(x, collections.abc.Hashable)``
    # is False (libraries such as funsor key their caches on that) and ``hash(x)`` raises
    # TypeError "unhashable type: ..."
    __hash__ = None

    def __setitem__(self, idx, value):
        raise TypeError(_IMMUTABLE)

    def __reduce__(self):
        return (_reconstruct, (np.asarray(self._value), self.weak_type))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return ArrayImpl(np.array(self._value, copy=True), self.weak_type)

    # -- printing
    def __repr__(self):
        prefix = "Array("
        dtype_str = f"dtype={self.dtype.name}" + (", weak_type=True" if self.weak_type else "")
        line_width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            s = f"[], shape={self.shape}"
        else:
            s = np.array2string(np.asarray(self._value), prefix=prefix, suffix=",",
                                separator=", ", max_line_width=line_width)
        last_line_len = len(s) - s.rfind("\n") + 1
        sep = " "
        if last_line_len + len(dtype_str) + 2 > line_width:
            sep = " " * len(prefix)
        return f"{prefix}{s},{sep}{dtype_str})"

    def __str__(self):
        return str(np.asarray(self._value))

    def __format__(self, spec):
        v = np.asarray(self._value)
        return format(v if v.ndim else v[()], spec)


_single = {}


def single_device_sharding(device):
    """The (cached) SingleDeviceSharding of ``device``."""
    s = _single.get(device)
    if s is None:
        from jaxlite._src.sharding.shardings import SingleDeviceSharding
        s = _single[device] = SingleDeviceSharding(device)
    return s


def default_sharding():
    """The sharding of uncommitted arrays: the default device."""
    return single_device_sharding(_devices.default_device())


def _is_intn(dt):
    from jaxlite._src.core.dtypes import _INTN
    return dt in _INTN


def _reconstruct(value, weak_type):
    return ArrayImpl(value, weak_type)


class Shard:
    """One device's piece of an array: ``device``, ``index`` and ``data``."""
    __slots__ = ("device", "index", "data", "replica_id")

    def __init__(self, device, index, data, replica_id=0):
        self.device = device
        self.index = index
        self.data = data
        self.replica_id = replica_id

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")
