"""jax.numpy array creation: array/asarray, zeros/ones/full, arange, linspace, eye, ..."""
from __future__ import annotations

import functools
import inspect

import numpy as np

from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapeDtypeStruct
from jaxlite._src.core.trace import Tracer
from jaxlite._src.interpreters.ad import has_python_scalar_primal
from jaxlite._src.prims.elementwise import convert_element_type_p
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.numpy.util import asarray_value
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.mesh import mesh_active
from jaxlite._src.sharding.shardings import Sharding
from jaxlite._src.runtime import devices as _devices, guards
from jaxlite._src.runtime.dispatch import on_context_mesh
from jaxlite._src.api.sharding_types import place_as, type_sharding

__all__ = ["array", "asarray", "zeros", "ones", "full", "empty", "zeros_like", "ones_like",
           "full_like", "empty_like", "arange", "eye",
           "identity", "copy", "tri", "meshgrid"]


def _shape_tuple(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    try:
        return tuple(int(operator_index(d)) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None


def operator_index(d):
    import operator
    return operator.index(d)


def _contains_tracer(obj):
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, (list, tuple)):
        return any(_contains_tracer(o) for o in obj)
    return False



def _like_sharding(x, dtype, shape):
    """The sharding a ``*_like`` result of ``x`` takes (JAX's ``lax.full_like``): that of
    ``x``'s type over Explicit mesh axes, or the placement of a committed array ``x`` when
    the result is not weakly typed and has ``x``'s shape (or ``x`` is replicated). Another
    object answers with its ``sharding`` attribute (committed unless its ``_committed``
    says not), as in JAX (an nnx Variable gives its value's)."""
    s = type_sharding(x)
    if s is not None or isinstance(x, Tracer):
        return s if shape is None else None
    if isinstance(x, ArrayImpl):
        s, committed, weak = x._sharding, x.committed, x.weak_type
    else:
        s = getattr(x, "sharding", None)
        if not isinstance(s, Sharding):
            return None
        committed = getattr(x, "_committed", True)
        weak = dtypes.is_weakly_typed(x)
    if s is None or not committed or (dtype is None and weak):
        return None
    if shape is not None and _shape_tuple(shape) != tuple(getattr(x, "shape", ())) and \
            not s.is_fully_replicated:
        return None
    return s


def _places(like=False):
    """Decorate an array-creating function: its ``device=`` / ``out_sharding=`` arguments
    place the result (a Device, a Sharding, or a PartitionSpec under ``jax.set_mesh``);
    with ``like``, a result shaped like an operand split over Explicit mesh axes keeps that
    operand's sharding, and so does one like a placed (committed) array that is not weakly
    typed (when its shape is the array's or the array is replicated), as JAX's ``*_like``
    functions do."""
    def deco(fn):
        # (positions of dtype/shape, found once: binding the signature per call costs µs)
        names = list(inspect.signature(fn).parameters) if like else []
        at = {n: names.index(n) for n in ("dtype", "shape") if n in names}

        def arg(name, args, kwargs):
            k = at.get(name)
            if name in kwargs:
                return kwargs[name]
            return args[k] if k is not None and k < len(args) else None

        @functools.wraps(fn)
        def wrapped(*args, device=None, out_sharding=None, **kwargs):
            out = fn(*args, **kwargs)
            s = out_sharding if out_sharding is not None else device
            if s is None and like and args:
                s = _like_sharding(args[0], arg("dtype", args, kwargs),
                                   arg("shape", args, kwargs))
            if s is None:
                return out
            if isinstance(s, _devices.CpuDevice):
                from jaxlite._src.api.placement import device_put
                return device_put(out, s)
            return place_as(out, s)
        return wrapped
    return deco

@_places()
def array(object, dtype=None, copy=True, order="K", ndmin=0, *, device=None, out_sharding=None):
    """Create an array from ``object`` (arrays, NumPy arrays, scalars or nested sequences).

    A Python scalar gives a weakly typed array (``jnp.array(3.)`` is weak float32)."""
    if isinstance(getattr(object, "dtype", None), dtypes.ExtendedDType):
        return _extended(object, dtype)
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "array")
    if isinstance(object, (list, tuple)) and _contains_tracer(object) or (
            isinstance(object, (list, tuple)) and any(
                isinstance(o, ArrayImpl) for o in object)):
        out = _array_from_traced_sequence(object, dtype)
    elif isinstance(object, Tracer) or isinstance(object, ArrayImpl):
        out = object
        if copy and type(object) is not ArrayImpl and isinstance(object, ArrayImpl):
            out = object.clone()   # (a sharded array: JAX's copy keeps it split)
        elif copy and type(object) is ArrayImpl and object._sharding is None:
            # a new buffer, as JAX's copy: donating, deleting or the buffer pointer of
            # the copy must not touch the original
            out = ArrayImpl(np.array(object._value, copy=True), object.weak_type)
        if dtype is not None and (np.dtype(out.dtype) != dtypes.canonicalize_dtype(dtype)
                                  or out.weak_type):
            out = lax_ew._convert_element_type(out, dtype, False)
    else:
        if object is None:
            raise ValueError("None is not a valid value for jnp.array")
        if hasattr(object, "__jax_array__"):
            return array(object.__jax_array__(), dtype=dtype, copy=copy, ndmin=ndmin)
        weak = dtype is None and type(object) in (int, float, complex)
        if guards.active[0]:
            guards.check_host_to_device(object)   # jax.transfer_guard: implicit transfer
        if isinstance(object, (list, tuple)):
            _check_sequence(object)
        v = np.asarray(object)
        if v.dtype == object_dtype:
            raise TypeError("JAX only supports number and bool dtypes, got dtype object in "
                            "array")
        if v.dtype.kind in "USMm":   # strings, bytes, datetimes (ml_dtypes are kind V)
            raise TypeError(f"Value {object!r} with dtype {v.dtype} is not a valid JAX array "
                            "type. Only arrays of numeric types are supported by JAX.")
        dt = dtypes.canonicalize_dtype(dtype if dtype is not None else (
            dtypes.python_scalar_dtype(object) if weak else _default_for(object, v)))
        out = ArrayImpl(np.array(v, dt, copy=True), weak)
        if mesh_active[0]:     # (under jax.set_mesh: on the mesh's devices, as JAX puts it)
            out = on_context_mesh(out)
    if ndmin > out.ndim:
        out = lax_shape.broadcast_to_rank(out, ndmin)
    return out


object_dtype = np.dtype(object)


def _leaves(obj):
    if isinstance(obj, (list, tuple)):
        return [leaf for o in obj for leaf in _leaves(o)]
    return [obj]


def _array_from_traced_sequence(seq, dtype):
    """A nested sequence holding traced values or Arrays, as JAX builds it: every element
    cast to the common dtype, given a leading unit axis and concatenated (16 at a time)."""
    leaves = _leaves(seq)
    if any(leaf is None for leaf in leaves):
        raise ValueError("None is not a valid value for jnp.array")
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else
                                   dtypes.lattice_result_type(*leaves)[0])
    parts = [lax_shape.expand_dims(array(o, dtype=dt), [0]) for o in seq]
    while len(parts) > 16:
        parts = [lax_shape.concatenate(parts[i:i + 16], 0) for i in range(0, len(parts), 16)]
    return lax_shape.concatenate(parts, 0)


def _check_sequence(obj):
    for o in obj:
        if isinstance(o, (list, tuple)):
            _check_sequence(o)
        elif not isinstance(o, (int, float, complex, bool, np.generic, np.ndarray)):
            raise TypeError(f"Unexpected input type for array: {type(o)}")


def _default_for(obj, v):
    if isinstance(obj, (list, tuple)):
        kinds = v.dtype.kind
        if kinds == "b":
            return np.bool_
        if kinds in "iu" and v.dtype.itemsize == 8 and not isinstance(obj, np.ndarray):
            return dtypes.default_int_dtype()
        if kinds == "f" and v.dtype == np.float64:
            return dtypes.default_float_dtype()
        if kinds == "c" and v.dtype == np.complex128:
            return dtypes.default_complex_dtype()
    return v.dtype


def _extended(a, dtype):
    """An array of an extended dtype (typed PRNG keys) is already a JAX array: returned as
    is; converting it to another dtype is JAX's error."""
    if dtype is None or dtype == a.dtype:
        return a
    name = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype).name
    raise ValueError(f"Cannot convert_element_type from {a.dtype} to {name}")


@_places()
def asarray(a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None):
    """Convert ``a`` to an array without copying when it already is one."""
    if dtype is None and (isinstance(a, (ArrayImpl, Tracer))):
        if has_python_scalar_primal(a):   # jvp's Python-scalar primal becomes an array
            return convert_element_type_p.bind(a, new_dtype=a.dtype, weak_type=a.weak_type,
                                               sharding=None)
        return a
    if isinstance(getattr(a, "dtype", None), dtypes.ExtendedDType):
        return _extended(a, dtype)
    if dtype is not None:   # JAX warns about an unavailable dtype here, naming asarray
        dtypes.check_user_dtype_supported(dtype, "asarray")
        dtype = dtypes.canonicalize_dtype(dtype)
    return array(a, dtype=dtype, copy=bool(copy))


def copy(a, order=None):
    """A copy of ``a``."""
    return array(a, copy=True)


@_places()
def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """Array of ``shape`` filled with ``fill_value``."""
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "full")
    fv = asarray_value(fill_value) if not isinstance(fill_value, (int, float, complex, bool)) \
        else fill_value
    if np.ndim(fv) == 0:
        return lax_shape.full(_shape_tuple(shape), fv, dtype)
    from jaxlite._src.numpy.shape_ops import broadcast_to
    return broadcast_to(asarray(fv, dtype=dtype), _shape_tuple(shape))


@_places()
def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """Array of zeros (float32 by default)."""
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "zeros")
    return lax_shape.full(_shape_tuple(shape), 0, dtype or dtypes.default_float_dtype())


@_places()
def ones(shape, dtype=None, *, device=None, out_sharding=None):
    """Array of ones (float32 by default)."""
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "ones")
    return lax_shape.full(_shape_tuple(shape), 1, dtype or dtypes.default_float_dtype())


@_places()
def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """Like ``zeros`` (JAX has no uninitialized memory)."""
    return zeros(shape, dtype)


def _like(a, dtype, shape):
    """(shape, dtype, whether the result is weakly typed) of a ``*_like`` call: as JAX,
    without a dtype the result keeps ``a``'s weak type (a ShapeDtypeStruct, a shape and
    dtype without data, gives a strongly typed result)."""
    if isinstance(a, ShapeDtypeStruct):
        weak = False
    else:
        a = asarray_value(a)
        weak = dtype is None and bool(getattr(a, "weak_type", False))
    return (a.shape if shape is None else _shape_tuple(shape)), (dtype or a.dtype), weak


def _filled_like(a, fill_value, dtype, shape):
    s, d, weak = _like(a, dtype, shape)
    if not weak:
        return lax_shape.full(s, fill_value, d)
    from jaxlite._src.lax.elementwise import _convert_element_type
    return lax_shape.broadcast_in_dim(_convert_element_type(fill_value, d, True), s, ())


@_places(like=True)
def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with the shape and dtype (and weak type) of ``a``."""
    return _filled_like(a, 0, dtype, shape)


@_places(like=True)
def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Ones with the shape and dtype (and weak type) of ``a``."""
    return _filled_like(a, 1, dtype, shape)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """Like ``zeros_like``."""
    return zeros_like(prototype, dtype, shape)


@_places(like=True)
def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """``fill_value`` with the shape and dtype (and weak type) of ``a``."""
    return _filled_like(a, fill_value, dtype, shape)


@_places()
def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in ``[start, stop)`` (static bounds), built from ``iota`` as JAX
    does: ``start + step * iota`` computed in the result dtype (float16/bfloat16 in float32)."""
    names = ("stop" if stop is None and step is None else "start", "stop", "step")
    for name, v in zip(names, (start, stop, step)):
        if isinstance(v, Tracer):
            from jaxlite._src.core.errors import ConcretizationTypeError
            raise ConcretizationTypeError(
                v, f"It arose in the jnp.arange argument '{name}'. The size of an array must "
                   "be known at trace time: pass Python numbers, or mark the argument static.")
        if v is not None and np.ndim(v) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={v}")
    if start is None:
        raise TypeError("must be real number, not NoneType")
    if dtype is not None:
        dtypes.check_user_dtype_supported(dtype, "arange")
    vals = [None if v is None else (v.item() if isinstance(v, ArrayImpl) else
                                    np.asarray(v).item()) for v in (start, stop, step)]
    if any(isinstance(v, complex) for v in vals):
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer "
                         "supported starting in JAX v0.10.0.")
    dt = dtypes.canonicalize_dtype(
        dtype or dtypes.result_type(*[v for v in (start, stop, step) if v is not None]))
    if dt == np.bool_:
        raise TypeError("iota does not accept dtype bool. Accepted dtypes are subtypes of "
                        "integer, floating, complexfloating.")
    lo, hi, st = vals
    if hi is None:
        lo, hi = 0, lo
    if st is not None:
        if st == 0:
            raise ValueError("arange has step == 0")
        work = np.dtype(np.float32) if (dtypes.issubdtype(dt, np.floating)
                                        and dtypes.finfo(dt).bits < 32) else dt
        size = max(0, int(np.ceil((hi - lo) / st)))
        out = lax_ew.add(lax_ew.convert_element_type(lo, work),
                         lax_ew.mul(lax_ew.convert_element_type(st, work),
                                    lax_shape.broadcasted_iota(work, (size,), 0)))
        return lax_ew.convert_element_type(out, dt)
    if lo == 0:
        return lax_shape.broadcasted_iota(dt, (max(0, int(np.ceil(hi))),), 0)
    size = max(0, int(np.ceil(hi - lo)))
    return lax_ew.add(lax_ew.convert_element_type(lo, dt),
                      lax_shape.broadcasted_iota(dt, (size,), 0))


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """2-D array with ones on the ``k``-th diagonal."""
    dt = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())
    M = N if M is None else M
    r = lax_shape.broadcasted_iota(np.int32, (N, M), 0)
    c = lax_shape.broadcasted_iota(np.int32, (N, M), 1)
    k_arr = ArrayImpl(np.asarray(k, np.int32), False)
    return lax_ew.convert_element_type(lax_ew.eq(lax_ew.add(r, k_arr), c), dt)


def identity(n, dtype=None):
    """The ``n x n`` identity matrix."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    """Ones at and below the ``k``-th diagonal (float32 by default, also under x64, as
    JAX)."""
    dt = dtypes.canonicalize_dtype(np.float32 if dtype is None else dtype)
    M = N if M is None else M
    r = lax_shape.broadcasted_iota(np.int32, (N, M), 0)
    c = lax_shape.broadcasted_iota(np.int32, (N, M), 1)
    k_arr = ArrayImpl(np.asarray(k, np.int32), False)
    return lax_ew.convert_element_type(lax_ew.ge(lax_ew.add(r, k_arr), c), dt)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate matrices from coordinate vectors."""
    from jaxlite._src.numpy.shape_ops import broadcast_to, reshape
    xi = [asarray_value(x).reshape(-1) if np.ndim(x) != 1 else asarray_value(x) for x in xi]
    n = len(xi)
    shapes = [x.shape[0] for x in xi]
    if indexing == "xy" and n >= 2:
        shapes[0], shapes[1] = shapes[1], shapes[0]
    out = []
    for i, x in enumerate(xi):
        axis = i
        if indexing == "xy" and n >= 2 and i < 2:
            axis = 1 - i
        s = [1] * n
        s[axis] = x.shape[0]
        y = reshape(x, s)
        out.append(y if sparse else broadcast_to(y, tuple(shapes)))
    return out


def _bitcast(x, dtype):
    """Reinterpret the bits of ``x`` as ``dtype`` (same item size)."""
    from jaxlite._src.prims.elementwise import bitcast_convert_type_p
    return bitcast_convert_type_p.bind(x, new_dtype=np.dtype(dtype))
