"""jax.numpy dtype names and scalar types (``jnp.float32(3)`` makes an Array), constants and
dtype introspection."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from jaxlite._src.core import dtypes

__all__ = ["bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "bfloat16", "complex64", "complex128", "int4",
           "uint4", "float_", "bool", "int_", "uint", "complex_",
           "single", "double", "csingle", "cdouble", "generic", "number", "inexact",
           "floating", "complexfloating", "integer", "signedinteger", "unsignedinteger",
           "dtype", "finfo", "iinfo", "promote_types", "result_type", "issubdtype", "can_cast",
           "isdtype", "iscomplexobj", "isrealobj", "isscalar", "e", "pi", "inf", "nan",
           "euler_gamma", "newaxis",
           "character", "flexible", "object_"]


class _ScalarMeta(type):
    """Metaclass of jnp scalar types: calling one builds an Array of that dtype."""

    @property
    def __numpy_dtype__(cls):
        return cls.dtype

    def __call__(cls, x):
        from jaxlite._src.numpy.creation import asarray
        dtypes.check_user_dtype_supported(cls.dtype, "asarray")   # JAX's text: "in asarray"
        return asarray(x, dtype=dtypes.canonicalize_dtype(cls.dtype))

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other):
        return not cls == other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __repr__(cls):
        return f"<class 'jax.numpy.{cls.__name__}'>"


def _make(np_type):
    name = np_type.__name__
    return _ScalarMeta(name, (object,), {
        "dtype": np.dtype(np_type), "__module__": "jaxlite.numpy",
        "__doc__": f"A jaxlite scalar constructor of type {name}: ``{name}(x)`` makes a "
                   "0-d (or n-d) Array of this dtype."})


bool_ = _make(np.bool_)
globals()["bool"] = bool_
int8, int16, int32, int64 = (_make(getattr(np, n)) for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (_make(getattr(np, n)) for n in
                                 ("uint8", "uint16", "uint32", "uint64"))
float16, float32, float64 = (_make(getattr(np, n)) for n in ("float16", "float32", "float64"))
complex64, complex128 = _make(np.complex64), _make(np.complex128)
_ML_NAMES = ("int1", "int2", "int4", "uint1", "uint2", "uint4", "bfloat16", "float4_e2m1fn",
             "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e8m0fnu",
             "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
             "float8_e4m3b11fnuz")
for _n in _ML_NAMES:
    if hasattr(ml_dtypes, _n):
        globals()[_n] = _make(getattr(ml_dtypes, _n))
        if _n not in __all__:
            __all__.append(_n)
float_, int_, uint, complex_ = float64, int64, uint64, complex128
single, double, csingle, cdouble = float32, float64, complex64, complex128

generic, number, inexact, floating = np.generic, np.number, np.inexact, np.floating
complexfloating, integer = np.complexfloating, np.integer
character, flexible, object_ = np.character, np.flexible, np.object_
signedinteger, unsignedinteger = np.signedinteger, np.unsignedinteger

e, pi, inf, nan, euler_gamma = np.e, np.pi, np.inf, np.nan, np.euler_gamma
newaxis = None


dtype = np.dtype   # as jax.numpy.dtype (jnp scalar types carry a .dtype, so np.dtype takes them)


def finfo(dtype_):
    """Machine limits of a float dtype."""
    return dtypes.finfo(dtype(dtype_) if isinstance(dtype_, _ScalarMeta) else dtype_)


def iinfo(int_type):
    """Machine limits of an integer dtype."""
    return dtypes.iinfo(dtype(int_type) if isinstance(int_type, _ScalarMeta) else int_type)


def _dt_or_pytype(a):
    if isinstance(a, _ScalarMeta):
        return a.dtype
    if isinstance(a, dtypes.ExtendedDType):   # (promote_types refuses it as JAX does)
        return a
    return a if a in (int, float, complex) and isinstance(a, type) else np.dtype(a)


def promote_types(a, b):
    """The promoted dtype of two dtypes (JAX's lattice; Python int/float/complex are weak,
    so ``promote_types('uint8', int)`` is uint8)."""
    return dtypes.promote_types(_dt_or_pytype(a), _dt_or_pytype(b))


def result_type(*args):
    """The result dtype of combining ``args`` (JAX's lattice; weak scalars, canonicalized)."""
    return dtypes.result_type(*[dtype(a) if isinstance(a, _ScalarMeta) else a for a in args])


def issubdtype(arg1, arg2):
    """Whether ``arg1`` is a sub-dtype of ``arg2`` (knows bfloat16, int4, ...)."""
    a = dtype(arg1) if isinstance(arg1, _ScalarMeta) else arg1
    b = arg2.dtype.type if isinstance(arg2, _ScalarMeta) else arg2
    return dtypes.issubdtype(a, b)


can_cast = np.can_cast

_KINDS = {
    "bool": {np.dtype(bool)},
    "signed integer": set(dtypes._ML_SINTS) | {np.dtype(t) for t in "bhlq"},
    "unsigned integer": set(dtypes._ML_UINTS) | {np.dtype(t) for t in "BHLQ"},
    "real floating": set(dtypes._FLOAT_TYPES),
    "complex floating": {np.dtype(np.complex64), np.dtype(np.complex128)},
}
_KINDS["integral"] = _KINDS["signed integer"] | _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] | _KINDS["real floating"] | _KINDS["complex floating"]


def isdtype(dtype, kind):
    """Array-API dtype kind test ('bool', 'integral', 'real floating', 'numeric', ...)."""
    the_dtype = np.dtype(dtype)
    options = set()
    for k in (kind if isinstance(kind, tuple) else (kind,)):
        if isinstance(k, str) and k in _KINDS:
            options |= _KINDS[k]
            continue
        try:
            options.add(np.dtype(k))
        except TypeError as e:
            if isinstance(k, str):
                raise ValueError(f"Unrecognized kind={k!r} expected one of {list(_KINDS)}, or "
                                 "a compatible input for jnp.dtype()") from None
            raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={k!r}") \
                from e
    return the_dtype in options


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
