"""Abstract values: what a tracer knows about an array (shape, dtype, weak type)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import dtypes

__all__ = ["AbstractValue", "ShapedArray", "ShapeDtypeStruct", "get_aval", "aval_of_value",
           "aval_method", "aval_property", "AvalQDD", "AvalMutableQDD",
           "hitype_aval_mappings", "untraced_reason", "pytype_aval_mappings",
           "canonicalize_value_handlers", "canonicalize_value", "CanonicalizeValueHandlers",
           "canonicalize_dtype_handlers"]


class AbstractValue:
    """The base class of abstract values (JAX's ``core.AbstractValue``): ``ShapedArray``,
    the ``AbstractRef`` of a mutable reference, and the types libraries define through the
    hijax API. ``is_high`` marks a type that is not an array (a hijax type); ``has_qdd`` one
    whose values are mutable and carry quasi-dynamic data."""
    __slots__ = ()
    is_high = False
    has_qdd = False

    def to_tangent_aval(self):
        """The abstract value of this type's tangents (types that are differentiable
        override this)."""
        raise NotImplementedError(f"{type(self).__name__} defines no tangent type: override "
                                  "to_tangent_aval to differentiate values of this type")

    def to_ct_aval(self):
        """The abstract value of this type's cotangents (its tangent type by default)."""
        return self.to_tangent_aval()

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        """A short description (the class name unless overridden)."""
        return type(self).__name__


class aval_property:
    """A property defined on an abstract value's class that tracers of that type expose:
    ``tracer.name`` calls ``fget(tracer)`` (JAX's ``core.aval_property``)."""
    __slots__ = ("fget",)

    def __init__(self, fget):
        self.fget = fget

    def __repr__(self):
        return f"aval_property(fget={self.fget!r})"


class aval_method:
    """A method defined on an abstract value's class that tracers of that type expose:
    ``tracer.name(*args)`` calls ``fun(tracer, *args)`` (JAX's ``core.aval_method``)."""
    __slots__ = ("fun",)

    def __init__(self, fun):
        self.fun = fun

    def __repr__(self):
        return f"aval_method(fun={self.fun!r})"


class AvalQDD:
    """An abstract value together with its quasi-dynamic data ``qdd`` (the current inner
    type of a mutable hijax value), as abstract evaluation rules of mutable types return."""
    __slots__ = ("aval", "qdd")
    is_high = True
    has_qdd = True

    def __init__(self, aval, qdd):
        self.aval, self.qdd = aval, qdd

    is_writer = property(lambda self: getattr(self.aval, "is_writer", False))

    def lo_ty(self):
        """The array types a value of this type is made of, given its qdd."""
        return self.aval.lo_ty_qdd(self.qdd)

    def read_loval(self, val):
        """The arrays making up ``val``."""
        return self.aval.read_loval(self.qdd, val)

    def new_from_loval(self, *lo_vals):
        """A new value of this type from the arrays it is made of."""
        return self.aval.new_from_loval(self.qdd, *lo_vals)

    def to_tangent_aval(self):
        """The tangent type, with the qdd's tangent form."""
        return AvalQDD(self.aval.to_tangent_aval(), self.qdd.to_tangent_qdd())

    def __eq__(self, other):
        return (type(other) is AvalQDD and self.aval == other.aval
                and self.qdd == other.qdd)

    def __hash__(self):
        return hash((self.aval, self.qdd))

    def __repr__(self):
        return f"AvalQDD(aval={self.aval!r}, qdd={self.qdd!r})"


class AvalMutableQDD:
    """An abstract value with the mutable cell holding its quasi-dynamic data."""
    __slots__ = ("aval", "mutable_qdd")

    def __init__(self, aval, mutable_qdd):
        self.aval, self.mutable_qdd = aval, mutable_qdd

    def __repr__(self):
        return f"AvalMutableQDD(aval={self.aval!r}, mutable_qdd={self.mutable_qdd!r})"


# Python types registered as hijax types (``register_hitype``): type -> function giving a
# value's abstract value. ``jax.typeof`` answers with it.
hitype_aval_mappings = {}


def untraced_reason(t):
    """Why values of the registered hijax type ``t`` cannot pass through transformations
    (None for other types)."""
    if t not in hitype_aval_mappings:
        return None
    return getattr(t, "_jaxlite_untraced", "jaxlite takes values of hijax types (registered "
                   "with jax.experimental.hijax.register_hitype) as arguments of jit and "
                   "eval_shape only, not yet of grad, vmap or the other transformations")


class ShapedArray(AbstractValue):
    """The abstract value of an array: its shape, dtype and whether its type is weak.

    ``str_short()`` gives the compact form used in jaxprs, e.g. ``f32[3,4]``.
    """
    __slots__ = ("shape", "dtype", "weak_type", "_hash", "sharding", "vma")

    def __init__(self, shape, dtype, weak_type=False, sharding=None, vma=()):
        self.shape = tuple(shape)
        # extended dtypes (key<fry>) are kept as they are; anything else is a NumPy dtype
        self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = None
        # The sharding of arrays split over Explicit mesh axes (shown as ``8@x``) and, inside
        # shard_map, the manual mesh axes the value varies over (shown as ``{V:x}``, in mesh
        # order); neither is part of equality or hashing.
        self.sharding = sharding
        self.vma = vma

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def update(self, shape=None, dtype=None, weak_type=None):
        """A copy with some fields replaced."""
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def to_tangent_aval(self):
        """The aval of this value's tangents: itself for floating and complex dtypes, float0
        for integers, booleans and keys (keeping the sharding and varying manual axes)."""
        dt = self.dtype
        if not isinstance(dt, dtypes.ExtendedDType) and (
                dt.kind in "fcV" or dt.name == "bfloat16" or dt.name.startswith("float")):
            return ShapedArray(self.shape, dt, self.weak_type, sharding=self.sharding,
                               vma=self.vma)
        if isinstance(dt, dtypes.ExtendedDType):
            rules = getattr(dt, "_rules", None)
            if rules is not None and hasattr(rules, "tangent_dtype"):
                # (JAX's rules protocol: the dtype names its tangents' dtype)
                return ShapedArray(self.shape, rules.tangent_dtype(dt), False)
            return ShapedArray(self.shape, dtypes.float0, False)
        return ShapedArray(self.shape, dtypes.float0, False, sharding=self.sharding,
                           vma=self.vma)

    def at_least_vspace(self):
        """JAX's older name of ``to_tangent_aval``."""
        return self.to_tangent_aval()

    # -- the hijax interface of array types (a hijax type made of arrays lowers its parts
    # with these): an array is its own single array
    def lo_ty(self):
        """The array types a value of this type is made of: ``[self]``."""
        return [self]

    def lower_val(self, hi_val):
        """The arrays making up ``hi_val``: ``[hi_val]``."""
        return [hi_val]

    def raise_val(self, val):
        """A value of this type from its one array: the array."""
        return val

    def normalize(self):
        """This type without its weak type flag."""
        return self.strip_weak_type()

    def strip_weak_type(self):
        return self if not self.weak_type else ShapedArray(self.shape, self.dtype, False)

    def str_short(self, short_dtypes=True):
        tok = getattr(self.dtype, "short_name", None)
        if tok is not None and not self.shape:
            return tok   # a token: ``Tok``
        name = dtypes.short_dtype_name(self.dtype) if short_dtypes else \
            "float0" if self.dtype == dtypes.float0 else self.dtype.name
        return f"{name}[{','.join(self._dim_strs())}]{self._vma_str()}"

    def _vma_str(self):
        v = self.vma
        if not v:
            return ""
        return "{V:" + (v[0] if len(v) == 1 else "(" + ",".join(v) + ")") + "}"

    def _dim_strs(self):
        s = self.sharding
        if s is None:
            return [str(d) for d in self.shape]
        explicit = set(s.mesh.explicit_axes)
        spec = list(s.spec) + [None] * (len(self.shape) - len(s.spec))
        out = []
        for d, e in zip(self.shape, spec):
            axes = [a for a in ((e,) if isinstance(e, str) else (e or ())) if a in explicit]
            out.append(f"{d}@{axes[0]}" if len(axes) == 1 else
                       f"{d}@({','.join(axes)})" if axes else str(d))
        return out

    def __eq__(self, other):
        return (type(other) is ShapedArray and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((self.shape, self.dtype, self.weak_type))
        return h

    def __repr__(self):
        w = ", weak_type=True" if self.weak_type else ""
        name = "float0" if self.dtype == dtypes.float0 else self.dtype.name
        return f"ShapedArray({name}[{','.join(self._dim_strs())}]{self._vma_str()}{w})"

    def __str__(self):
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)


class ShapeDtypeStruct:
    """A shape and dtype with no data: what ``jax.eval_shape`` returns and accepts.

    Usable wherever jit/make_jaxpr/eval_shape need an argument's type but not its value.
    """
    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False):
        # (symbolic dimensions of jax.export's specs are kept as they are)
        self.shape = tuple(d if getattr(d, "_symbolic_dim", False) else int(d)
                           for d in shape)
        self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.sharding = sharding
        self.weak_type = weak_type

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    @classmethod
    def like(cls, x):
        """The shape, dtype and weak type of ``x`` (an array, tracer, NumPy value, Python
        scalar or ShapeDtypeStruct), e.g. to declare a callback's result like its input."""
        aval = aval_of_value(x)
        sharding = x.sharding if isinstance(x, ShapeDtypeStruct) else None
        return cls(aval.shape, aval.dtype, sharding=sharding, weak_type=aval.weak_type)

    def update(self, **kwargs):
        """A copy with the given fields (``shape``, ``dtype``, ``sharding``,
        ``weak_type``) replaced."""
        unknown = set(kwargs) - {"shape", "dtype", "sharding", "weak_type"}
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update got unexpected fields {sorted(unknown)}")
        return ShapeDtypeStruct(kwargs.get("shape", self.shape), kwargs.get("dtype", self.dtype),
                                sharding=kwargs.get("sharding", self.sharding),
                                weak_type=kwargs.get("weak_type", self.weak_type))

    def __repr__(self):
        w = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{w})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak_type == other.weak_type)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


_scalar_types = {bool, int, float, complex}


def _check_int_range(x: int):
    dt = dtypes.python_scalar_dtype(x)
    info = np.iinfo(dt)
    if not info.min <= x <= info.max:
        raise OverflowError(f"Python int {x} too large to convert to {dt.name}")


def abstract_arg(x):
    """The abstract value of an argument traced by type only (``eval_shape``, ``make_jaxpr``,
    ``jit(f).trace``/``lower``), as JAX's ``shaped_abstractify``: a ShapedArray itself, or
    any object with ``shape`` and ``dtype`` that is not an array (a ShapeDtypeStruct, a
    library's own spec), its dtype canonicalized; None for anything else (a value)."""
    if isinstance(x, ShapedArray):
        return ShapedArray(x.shape, x.dtype if isinstance(x.dtype, dtypes.ExtendedDType)
                           else dtypes.canonicalize_dtype(x.dtype), x.weak_type)
    if isinstance(x, ShapeDtypeStruct):
        return aval_of_value(x)
    if type(x) in _scalar_types or isinstance(x, (np.ndarray, np.generic)) or \
            getattr(x, "aval", None) is not None or hasattr(x, "__jax_array__"):
        return None
    shape, dt = getattr(x, "shape", None), getattr(x, "dtype", None)
    if shape is None or dt is None:
        return None
    try:
        shape = tuple(int(d) for d in shape)
        dt = dt if isinstance(dt, dtypes.ExtendedDType) else \
            dtypes.canonicalize_dtype(np.dtype(dt))
    except (TypeError, ValueError):
        return None
    return ShapedArray(shape, dt, bool(getattr(x, "weak_type", False)))


def aval_of_value(x) -> ShapedArray:
    """The abstract value of a concrete value (Array, NumPy array/scalar or Python scalar).

    Python scalars are weakly typed; NumPy values are canonicalized (float64 -> float32
    unless x64 is enabled).
    """
    t = type(x)
    if t in _scalar_types:
        if t is int:
            _check_int_range(x)
        return ShapedArray((), dtypes.python_scalar_dtype(x), t is not bool)
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    rule = pytype_aval_mappings.get(t)
    if rule is not None:
        return rule(x)
    handler = canonicalize_value_handlers.get(t)
    if handler is not None:
        return aval_of_value(handler(x))
    if isinstance(x, (np.ndarray, np.generic)):
        return _numpy_aval(x)
    if isinstance(x, ShapeDtypeStruct):
        dt = x.dtype
        return ShapedArray(x.shape, dt if isinstance(dt, dtypes.ExtendedDType) else
                           dtypes.canonicalize_dtype(dt), x.weak_type)
    if hasattr(x, "__jax_array__"):
        return aval_of_value(x.__jax_array__())
    why = untraced_reason(t)
    if why is not None:
        raise TypeError(
            f"Value {x!r} of type {t.__name__} cannot be an argument or result of jit, grad, "
            f"vmap or the other transformations: {why}. Pass its arrays instead "
            "(jax.typeof still describes it).")
    raise TypeError(f"Value {x!r} of type {t.__name__} is not a valid JAX type")


get_aval = aval_of_value


def _numpy_aval(x):
    """The abstract value of a NumPy array or scalar (its dtype canonicalized)."""
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), False)


# Python type -> function giving a value's abstract value (JAX's ``core.pytype_aval_mappings``).
# Libraries register their array-like types here; ``aval_of_value`` consults it by exact type.
pytype_aval_mappings = {np.ndarray: _numpy_aval}
pytype_aval_mappings.update({t: _numpy_aval for t in
                             (np.dtype(c).type for c in "?bBhHiIlLqQefdgFDG")})

# Python type -> function turning a value into the canonical NumPy value it stands for
# (JAX's ``dtypes.register_canonicalize_value_handler``): ``aval_of_value`` and
# ``canonicalize_value`` use a registered type's handler.
canonicalize_value_handlers = {}


def canonicalize_value(x):
    """``x`` as the NumPy value JAX takes it as: a registered handler's result for its type,
    else ``np.asarray(x)`` with its dtype canonicalized (float64 -> float32 without x64)."""
    handler = canonicalize_value_handlers.get(type(x))
    if handler is not None:
        return handler(x)
    v = np.asarray(x)
    dt = dtypes.canonicalize_dtype(v.dtype)
    return v if v.dtype == dt else v.astype(dt)


class CanonicalizeValueHandlers:
    """JAX's ``interpreters.xla.canonicalize_dtype_handlers``: reading any type gives the
    default canonicalizing function; assigning registers a handler for a type (consulted by
    ``aval_of_value`` and ``canonicalize_value``)."""

    def __getitem__(self, key):
        handler = canonicalize_value_handlers.get(key)
        return handler if handler is not None else (lambda x: canonicalize_value(np.asarray(x)))

    def __setitem__(self, key, value):
        canonicalize_value_handlers[key] = value

    def __contains__(self, key):
        return key in canonicalize_value_handlers


canonicalize_dtype_handlers = CanonicalizeValueHandlers()
