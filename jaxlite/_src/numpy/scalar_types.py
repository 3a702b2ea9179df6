"""jax.numpy dtype names and scalar types (``jnp.float32(3)`` makes an Array), constants and
dtype introspection."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from jaxlite._src.core import dtypes

__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "bfloat16", "complex64", "complex128", "int4",
           "uint4", "float8_e4m3fn", "float8_e5m2", "float_", "int_", "uint", "complex_",
           "single", "double", "csingle", "cdouble", "generic", "number", "inexact",
           "floating", "complexfloating", "integer", "signedinteger", "unsignedinteger",
           "dtype", "finfo", "iinfo", "promote_types", "result_type", "issubdtype", "can_cast",
           "isdtype", "iscomplexobj", "isrealobj", "isscalar", "e", "pi", "inf", "nan",
           "euler_gamma", "newaxis", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3b11fnuz"]


class _ScalarMeta(type):
    """Metaclass of jnp scalar types: calling one builds an Array of that dtype."""

    def __call__(cls, x=0):
        from jaxlite._src.numpy.creation import array
        return array(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type is other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __repr__(cls):
        return f"<class 'jax.numpy.{cls.__name__}'>"


def _make(name, np_type):
    return _ScalarMeta(name, (object,), {"dtype": np.dtype(np_type), "__doc__":
                                         f"The {name} scalar type; ``{name}(x)`` makes an "
                                         "Array of this dtype."})


bool_ = _make("bool", np.bool_)
int8, int16, int32, int64 = (_make(n, getattr(np, n)) for n in
                             ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_make(n, getattr(np, n)) for n in
                                 ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (_make(n, getattr(np, n)) for n in ("float16", "float32", "float64"))
complex64, complex128 = _make("complex64", np.complex64), _make("complex128", np.complex128)
bfloat16 = _make("bfloat16", ml_dtypes.bfloat16)
int4, uint4 = _make("int4", ml_dtypes.int4), _make("uint4", ml_dtypes.uint4)
float8_e4m3fn = _make("float8_e4m3fn", ml_dtypes.float8_e4m3fn)
float8_e5m2 = _make("float8_e5m2", ml_dtypes.float8_e5m2)
float8_e4m3fnuz = _make("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = _make("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz)
float8_e4m3b11fnuz = _make("float8_e4m3b11fnuz", ml_dtypes.float8_e4m3b11fnuz)
float_, int_, uint, complex_ = float64, int64, uint64, complex128
single, double, csingle, cdouble = float32, float64, complex64, complex128

generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
complexfloating, integer = np.complexfloating, np.integer
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger

e, pi, inf, nan, euler_gamma = np.e, np.pi, np.inf, np.nan, np.euler_gamma
newaxis = None


def dtype(obj, align=False, copy=False):
    """``np.dtype`` that also accepts jnp scalar types and canonicalizes Python types."""
    if isinstance(obj, _ScalarMeta):
        return obj.dtype
    if obj in (float, int, complex):
        return dtypes.canonicalize_dtype(obj)
    return np.dtype(obj)


def finfo(dtype_):
    """Machine limits of a float dtype."""
    return dtypes.finfo(dtype(dtype_) if isinstance(dtype_, _ScalarMeta) else dtype_)


def iinfo(int_type):
    """Machine limits of an integer dtype."""
    return dtypes.iinfo(dtype(int_type) if isinstance(int_type, _ScalarMeta) else int_type)


def promote_types(a, b):
    """The promoted dtype of two dtypes (JAX's lattice)."""
    return dtypes.promote_types(dtype(a), dtype(b))


def result_type(*args):
    """The result dtype of combining ``args`` (JAX's lattice; weak scalars, canonicalized)."""
    return dtypes.result_type(*[dtype(a) if isinstance(a, _ScalarMeta) else a for a in args])


def issubdtype(arg1, arg2):
    """Whether ``arg1`` is a sub-dtype of ``arg2`` (knows bfloat16, int4, ...)."""
    a = dtype(arg1) if isinstance(arg1, _ScalarMeta) else arg1
    b = arg2.dtype.type if isinstance(arg2, _ScalarMeta) else arg2
    return dtypes.issubdtype(a, b)


def can_cast(from_, to, casting="safe"):
    """Whether a cast is possible under ``casting``."""
    f = from_.dtype if hasattr(from_, "dtype") and not isinstance(from_, type) else from_
    return np.can_cast(dtype(f) if isinstance(f, _ScalarMeta) else f, dtype(to), casting)


def isdtype(dtype_, kind):
    """Array-API dtype kind test ('bool', 'integral', 'real floating', 'numeric', ...)."""
    d = dtype(dtype_)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            ok = {"bool": d == np.bool_,
                  "signed integer": dtypes.issubdtype(d, np.signedinteger),
                  "unsigned integer": dtypes.issubdtype(d, np.unsignedinteger),
                  "integral": dtypes.issubdtype(d, np.integer),
                  "real floating": dtypes.issubdtype(d, np.floating),
                  "complex floating": dtypes.issubdtype(d, np.complexfloating),
                  "numeric": d != np.bool_}.get(k)
            if ok is None:
                raise ValueError(f"Unrecognized data type kind: {k!r}")
        else:
            ok = d == dtype(k)
        if ok:
            return True
    return False


def iscomplexobj(x):
    """True if ``x`` has a complex dtype."""
    return dtypes.issubdtype(dtypes.dtype(x), np.complexfloating)


def isrealobj(x):
    """True if ``x`` does not have a complex dtype."""
    return not iscomplexobj(x)


def isscalar(element):
    """True for Python/NumPy scalars and 0-d arrays."""
    if hasattr(element, "shape") and not isinstance(element, type):
        return element.shape == ()
    return np.isscalar(element)
