"""The concrete array type: an immutable NumPy buffer on a (logical) CPU device.

``Array`` is the public abstract type (``isinstance(x, jaxlite.Array)`` holds for concrete
arrays and for tracers, as in JAX); ``ArrayImpl`` is the concrete class. Operators and the
array methods (``sum``, ``reshape``, ``.at`` ...) are installed by jaxlite.numpy.
"""
from __future__ import annotations

import abc

import numpy as np

from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.trace import Tracer
from jaxlite._src.runtime.devices import DEFAULT_SHARDING

__all__ = ["Array", "ArrayImpl", "Shard"]


class Array(abc.ABC):
    """The type of jaxlite arrays (concrete arrays and, during tracing, tracers)."""
    __slots__ = ()


Array.register(Tracer)

_IMMUTABLE = ("JAX arrays are immutable and do not support in-place item assignment. Instead "
              "of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
              "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


class ArrayImpl(Array):
    """A concrete, immutable array holding a NumPy value.

    Built by primitives' eager execution and by jit; users create arrays with
    ``jnp.array``/``jnp.asarray`` or ``jax.device_put``.
    """
    __slots__ = ("_value", "weak_type", "_sharding", "__weakref__")
    __array_priority__ = 100

    def __init__(self, value, weak_type=False, sharding=None):
        self._value = value
        self.weak_type = weak_type
        self._sharding = sharding

    # -- metadata
    @property
    def aval(self):
        v = self._value
        return ShapedArray(v.shape, v.dtype, self.weak_type)

    @property
    def shape(self):
        return self._value.shape

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return self._value.ndim

    @property
    def size(self):
        return self._value.size

    @property
    def itemsize(self):
        return self._value.dtype.itemsize

    @property
    def nbytes(self):
        return self._value.nbytes

    @property
    def sharding(self):
        return self._sharding or DEFAULT_SHARDING

    @property
    def device(self):
        s = self.sharding
        ds = s.device_set
        return next(iter(ds)) if len(ds) == 1 else s

    def devices(self):
        """The set of devices the array lives on."""
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

    global_shards = addressable_shards

    def addressable_data(self, index):
        """The array data on the index-th addressable device."""
        return self.addressable_shards[index].data

    def block_until_ready(self):
        """Wait until the value is computed (immediate in jaxlite); returns self."""
        return self

    def copy_to_host_async(self):
        """Start copying to host (a no-op: data already lives in host memory)."""

    def is_deleted(self):
        return False

    def delete(self):
        """Release the buffer (later uses raise)."""
        self._value = None

    def unsafe_buffer_pointer(self):
        return np.asarray(self._value).ctypes.data

    # -- conversion
    def __array__(self, dtype=None, copy=None):
        v = np.asarray(self._value, dtype=dtype)
        if copy:
            v = v.copy()
        elif not v.flags.writeable:
            pass
        return v

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        v = np.asarray(self._value)
        kw = {} if max_version is None else {"max_version": max_version}
        return v.__dlpack__(**kw) if kw else v.__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU, device 0

    def __bool__(self):
        return bool(self._value)

    def __int__(self):
        return int(self._value)

    def __float__(self):
        return float(self._value)

    def __complex__(self):
        return complex(self._value)

    def __index__(self):
        return np.asarray(self._value).__index__()

    def __len__(self):
        if self._value.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._value.shape[0]

    def item(self, *args):
        """The element as a Python scalar."""
        return np.asarray(self._value).item(*args)

    def tolist(self):
        """The array as nested Python lists."""
        return np.asarray(self._value).tolist()

    def __hash__(self):
        raise TypeError("unhashable type: 'jaxlib._jax.ArrayImpl'")

    def __setitem__(self, idx, value):
        raise TypeError(f"'{type(self).__name__}' object does not support item assignment. "
                        + _IMMUTABLE)

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
