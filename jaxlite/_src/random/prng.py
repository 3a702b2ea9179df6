"""PRNG implementations, typed key arrays and the key operations of ``jax.random``.

A PRNG implementation (``PRNGImpl``) is a named set of functions on raw key data (uint32
arrays whose trailing dimensions are ``key_shape``): seed, split, fold_in, random_bits.
Typed keys (``jax.random.key``) have an extended dtype (``KeyTy``, printed ``key<fry>``):
concretely a ``PRNGKeyArray`` over the raw data, under a transformation a tracer whose aval
has the key dtype. As in JAX a key array is a pytree leaf, and the transformations carry it
as one value; the key operations are the primitives of key_prims.py (random_seed,
random_wrap, random_unwrap, random_split, random_fold_in, random_bits), whose rules compute
on the raw data. Legacy keys (``jax.random.PRNGKey``) are the raw uint32 arrays themselves.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from jaxlite._src.compiler import physical as _physical  # noqa: F401  (eager rule for keys)
from jaxlite._src.config import config
from jaxlite._src.core import dtypes
from jaxlite._src.core.trace import Tracer, ctx
from jaxlite._src.lax import shape as lax_shape
from jaxlite._src.random import key_prims as kp, rbg, threefry
from jaxlite._src.runtime.array import Array

__all__ = ["PRNGImpl", "KeyTy", "PRNGKeyArray", "prngs", "threefry_prng_impl",
           "rbg_prng_impl", "unsafe_rbg_prng_impl",
           "resolve_prng_impl", "default_prng_impl", "random_seed", "random_wrap",
           "random_unwrap", "random_split", "random_fold_in", "random_bits", "is_key_array"]


class PRNGImpl(NamedTuple):
    """A PRNG implementation: raw key shape and the functions over raw keys."""
    key_shape: tuple
    seed: Callable
    split: Callable
    random_bits: Callable
    fold_in: Callable
    name: str = "<unnamed>"
    tag: str = "?"

    def __hash__(self):
        return hash(self.tag)

    def __str__(self):
        return self.tag

    @property
    def key_dtype(self):
        """The key dtype (``key<tag>``) of this implementation."""
        dt = _key_dtypes.get(self)
        if dt is None:
            dt = _key_dtypes[self] = KeyTy(self)
        return dt

    def pprint(self):
        """A multi-line description of the implementation."""
        return f"{self.name} [{self.tag}]"


prngs: dict[str, PRNGImpl] = {}
_key_dtypes: dict = {}


def register_prng(impl: PRNGImpl):
    """Make ``impl`` selectable by name (``jax_default_prng_impl``, ``key(impl=...)``)."""
    if impl.name in prngs:
        raise ValueError(f"PRNG with name {impl.name} already registered: {impl}")
    prngs[impl.name] = impl


threefry_prng_impl = PRNGImpl(
    key_shape=(2,), seed=threefry.threefry_seed, split=threefry.threefry_split,
    random_bits=threefry.threefry_random_bits, fold_in=threefry.threefry_fold_in,
    name="threefry2x32", tag="fry")
register_prng(threefry_prng_impl)

# uint32[4] keys whose bits come from lax.rng_bit_generator (rules in rbg.py)
rbg_prng_impl = PRNGImpl(
    key_shape=(4,), seed=rbg.rbg_seed, split=rbg.rbg_split, random_bits=rbg.rbg_random_bits,
    fold_in=rbg.rbg_fold_in, name="rbg", tag="rbg")
register_prng(rbg_prng_impl)

unsafe_rbg_prng_impl = PRNGImpl(
    key_shape=(4,), seed=rbg.rbg_seed, split=rbg.unsafe_rbg_split,
    random_bits=rbg.rbg_random_bits, fold_in=rbg.unsafe_rbg_fold_in, name="unsafe_rbg",
    tag="urbg")
register_prng(unsafe_rbg_prng_impl)


# ------------------------------------------------------------------------- the key dtype

class _key_scalar(np.void, dtypes.prng_key):
    """NumPy scalar type of key dtypes (so ``issubdtype(k.dtype, prng_key)`` holds)."""


class KeyTy(dtypes.ExtendedDType):
    """The dtype of typed key arrays, e.g. ``key<fry>`` (an extended dtype)."""
    type = dtypes.prng_key

    def __init__(self, impl):
        self._impl = impl
        self._hash = None
        nwords = math.prod(impl.key_shape)
        # a NumPy stand-in whose scalar type derives from prng_key (dtype queries use it)
        self.dtype = np.dtype((_key_scalar, [("key", "<u4", (nwords,))]))

    @property
    def name(self) -> str:
        return f"key<{self._impl.tag}>"

    @property
    def itemsize(self) -> int:
        return math.prod(self._impl.key_shape) * 4

    kind = "V"
    physical_dtype = np.dtype(np.uint32)

    @property
    def physical_shape(self):
        return tuple(self._impl.key_shape)

    def physical_aval(self, aval):
        """The aval of the raw data of keys of abstract value ``aval``: u32[*shape, words]."""
        from jaxlite._src.core.avals import ShapedArray
        return ShapedArray(tuple(aval.shape) + self.physical_shape, self.physical_dtype)

    def to_physical(self, x):
        """The raw uint32 data of the concrete key array ``x``."""
        return x._base_array

    def from_physical(self, data):
        """The key array over the raw data ``data``."""
        return PRNGKeyArray(self._impl, data)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return type(other) is KeyTy and self._impl == other._impl

    def __ne__(self, other):
        return not self == other

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = self._hash = hash((KeyTy, self._impl))
        return h


# ------------------------------------------------------------------------ key arrays

_NO_CONVERT = ("JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
               "jax.random.key_data(arr) if you wish to extract the underlying integer array.")


def _check_prng_key_data(impl, key_data):
    ndim = len(impl.key_shape)
    if not all(hasattr(key_data, a) for a in ("ndim", "shape", "dtype")):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have "
                        f"ndim, shape, and dtype attributes. Got {key_data}")
    if key_data.ndim < 1:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                        f"got ndim={key_data.ndim}")
    if tuple(key_data.shape[-ndim:]) != impl.key_shape:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                        f"end with {impl.key_shape}; got shape={tuple(key_data.shape)} for "
                        f"impl={impl}")
    if key_data.dtype not in (np.uint32, dtypes.float0):
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                        f"uint32; got dtype={key_data.dtype}")


def _binop_error(name):
    def op(self, *args, **kw):
        other = [getattr(a, "dtype", None) for a in args]
        names = [str(self.dtype)] + [dtypes.dtype(a, canonicalize=True).name if d is None and not isinstance(
            a, PRNGKeyArray) else str(d) for a, d in zip(args, other)]
        raise TypeError(f"{name} does not accept dtype{'s' if len(names) > 1 else ''} "
                        f"{', '.join(names)}.")
    op.__name__ = name
    return op


class PRNGKeyArray:
    """An array of typed PRNG keys (dtype ``key<impl>``) over raw uint32 key data.

    Supports shape queries, indexing, iteration and reshaping; arithmetic and conversion
    to NumPy raise JAX's errors. ``jax.random.key_data`` gives the raw data.
    """
    __slots__ = ("_impl", "_base_array", "_aval")
    __array_priority__ = 100
    weak_type = False

    def __init__(self, impl, key_data):
        self._impl = impl
        self._base_array = key_data
        self._aval = None

    # -- metadata
    @property
    def dtype(self):
        return self._impl.key_dtype

    @property
    def shape(self):
        return tuple(self._base_array.shape[:self._base_array.ndim - len(self._impl.key_shape)])

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.itemsize * self.size

    @property
    def aval(self):
        a = self._aval   # keys are immutable: made once (jit's cache key hashes it)
        if a is None:
            from jaxlite._src.core.avals import ShapedArray
            from jaxlite._src.sharding.shardings import aval_sharding
            # (keys split over Explicit mesh axes carry that in their type, as JAX's do)
            s = getattr(self._base_array, "_sharding", None)
            a = self._aval = ShapedArray(self.shape, self._impl.key_dtype, sharding=None if s is
                                         None else aval_sharding(s, len(self.shape)))
        return a

    @property
    def sharding(self):
        return self._base_array.sharding

    @property
    def device(self):
        return self._base_array.device

    def devices(self):
        """The set of devices holding the keys."""
        return self._base_array.devices()

    @property
    def committed(self):
        return getattr(self._base_array, "committed", False)

    def block_until_ready(self):
        """Wait until the keys are computed; returns self."""
        return self

    def copy(self):
        """A copy of the key array."""
        return PRNGKeyArray(self._impl, self._base_array)

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    # -- printing
    def __repr__(self):
        if isinstance(self._base_array, Tracer):
            return f"Traced<key array {self.dtype.name}{list(self.shape)}>"
        return (f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n"
                f"{np.asarray(self._base_array)}")

    def __str__(self):
        return repr(self)

    # -- sequence protocol and indexing
    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def __bool__(self):
        raise TypeError("The truth value of a PRNG key array is ambiguous.")

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        if any(i is Ellipsis for i in idx):
            idx = idx + (slice(None),) * len(self._impl.key_shape)
        else:
            idx = idx + (Ellipsis,)
        return PRNGKeyArray(self._impl, self._base_array[idx])

    def _trail(self):
        return tuple(self._base_array.shape[self.ndim:])

    def reshape(self, *shape, order="C"):
        """Keys reshaped to ``shape``."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        size = self.size
        shape = tuple(size // -math.prod(shape) if d == -1 else d for d in shape) if \
            -1 in shape else tuple(shape)
        return PRNGKeyArray(self._impl, lax_shape.reshape(self._base_array,
                                                          shape + self._trail()))

    def ravel(self, order="C"):
        """The keys as a flat array."""
        return self.reshape((self.size,))

    flatten = ravel

    def squeeze(self, axis=None):
        """Keys with unit axes removed."""
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        axis = (axis,) if isinstance(axis, int) else tuple(axis)
        axis = tuple(a % self.ndim for a in axis)
        return PRNGKeyArray(self._impl, lax_shape.squeeze(self._base_array, axis))

    def transpose(self, *axes):
        """Keys with their axes permuted."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        axes = axes or tuple(range(self.ndim))[::-1]
        perm = tuple(a % self.ndim for a in axes) + tuple(
            range(self.ndim, self._base_array.ndim))
        return PRNGKeyArray(self._impl, lax_shape.transpose(self._base_array, perm))

    @property
    def T(self):
        return self.transpose()

    def swapaxes(self, a, b):
        """Keys with axes ``a`` and ``b`` exchanged."""
        perm = list(range(self.ndim))
        a, b = a % self.ndim, b % self.ndim
        perm[a], perm[b] = perm[b], perm[a]
        return self.transpose(perm)

    def take(self, indices, axis=None):
        """Keys at ``indices`` along ``axis`` (flattened if None)."""
        from jaxlite._src.numpy import indexing as jidx
        if axis is None:
            return self.ravel().take(indices, 0)
        return PRNGKeyArray(self._impl, jidx.take(self._base_array, indices, axis=axis))

    # -- misuse
    def __array__(self, dtype=None, copy=None):
        raise TypeError(_NO_CONVERT)

    def __jax_array__(self):
        raise TypeError(_NO_CONVERT)

    def astype(self, dtype):
        """Key arrays cannot be cast (casting to their own dtype is a no-op)."""
        if dtype == self.dtype:
            return self
        raise TypeError(f"convert_element_type does not accept dtype {self.dtype.name}; use "
                        "jax.random.key_data to get the raw key bits.")

    # unhashable as in JAX: ``__hash__ = None``, so ``isinstance(x, collections.abc.Hashable)``
    # is False (libraries such as funsor key their caches on that) and ``hash(x)`` raises
    # TypeError "unhashable type: ..."
    __hash__ = None

    def __eq__(self, other):
        if is_key_array(other):   # the eq primitive compares keys (all words equal)
            from jaxlite._src.prims.elementwise import eq_p
            return eq_p.bind(self, other)
        return _binop_error("eq")(self, other)

    def __ne__(self, other):
        if is_key_array(other):
            from jaxlite._src.prims.elementwise import ne_p
            return ne_p.bind(self, other)
        return _binop_error("ne")(self, other)


for _name, _op in [("add", "add"), ("radd", "add"), ("sub", "sub"), ("rsub", "sub"),
                   ("mul", "multiply"), ("rmul", "multiply"), ("truediv", "div"), ("rtruediv", "div"),
                   ("floordiv", "floor_divide"), ("mod", "rem"), ("pow", "pow"),
                   ("and", "and"), ("or", "or"), ("xor", "xor"), ("lshift", "shift_left"),
                   ("rshift", "shift_right_arithmetic"), ("lt", "lt"), ("le", "le"),
                   ("gt", "gt"), ("ge", "ge"), ("neg", "neg"), ("invert", "not"),
                   ("abs", "abs"), ("matmul", "dot_general")]:
    setattr(PRNGKeyArray, f"__{_name}__", _binop_error(_op))

def _staged_under_traces(name, jnp_method):
    """Method ``name`` of PRNGKeyArray: on the data when evaluating eagerly (fast), and as
    jnp's method on the key array itself under a transformation, so that the result is a
    key-typed value of that trace (never a key over traced data)."""
    eager = getattr(PRNGKeyArray, name)

    def method(self, *args, **kwargs):
        if ctx.trace is None:
            return eager(self, *args, **kwargs)
        return jnp_method()(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = eager.__doc__
    setattr(PRNGKeyArray, name, method)


def _jnp(name):
    def get():
        from jaxlite._src.numpy import array_methods
        return getattr(array_methods, name, None) or array_methods._METHODS[name]
    return get


for _name, _jname in [("__getitem__", "getitem"), ("reshape", "_reshape"),
                      ("ravel", "ravel"), ("flatten", "ravel"), ("squeeze", "squeeze"),
                      ("transpose", "_transpose"), ("swapaxes", "swapaxes"),
                      ("take", "_take")]:
    _staged_under_traces(_name, _jnp(_jname))

Array.register(PRNGKeyArray)
# a key array is a pytree leaf (as in JAX); eager primitives and jit take it as its data
dtypes.extended_array_types.add(PRNGKeyArray)


def is_key_array(x) -> bool:
    """Whether ``x`` is a typed key array (concrete, or a tracer of a key dtype)."""
    return isinstance(x, PRNGKeyArray) or isinstance(getattr(x, "dtype", None), KeyTy)


def key_impl_of(keys) -> PRNGImpl:
    """The PRNG implementation of typed keys."""
    return keys.dtype._impl


def key_data_of(keys):
    """The raw uint32 data of typed keys (a tracer's through ``random_unwrap``)."""
    if type(keys) is PRNGKeyArray:
        return keys._base_array
    return kp.random_unwrap_p.bind(keys)


# ---------------------------------------------------------------------- implementations

def default_prng_impl() -> PRNGImpl:
    """The implementation named by ``jax_default_prng_impl``."""
    name = config.jax_default_prng_impl
    if name not in prngs:
        raise NotImplementedError(f"jaxlite: PRNG implementation {name!r} is not available "
                                  f"(available: {', '.join(prngs)})")
    return prngs[name]


def resolve_prng_impl(spec) -> PRNGImpl:
    """The implementation described by ``spec``: None (default), a name, a PRNGImpl, a
    PRNGSpec or a key dtype."""
    if spec is None:
        return default_prng_impl()
    if type(spec) is PRNGImpl:
        return spec
    if isinstance(spec, KeyTy):
        return spec._impl
    if hasattr(spec, "_impl") and type(spec._impl) is PRNGImpl:
        return spec._impl
    if type(spec) is str:
        if spec in prngs:
            return prngs[spec]
        keys_fmt = ", ".join(f'"{s}"' for s in prngs)
        raise ValueError(f'unrecognized PRNG implementation "{spec}". Did you mean one of: '
                         f"{keys_fmt}?")
    raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


# ----------------------------------------------------------------------- key operations

def _asarray(x):
    from jaxlite._src.numpy import creation
    return creation.asarray(x)


def random_seed(seeds, impl: PRNGImpl):
    """Typed keys from integer seeds (any shape)."""
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        # like JAX: go through int64 so big Python ints wrap instead of overflowing
        seeds = np.int64(seeds) if -2 ** 63 <= seeds < 2 ** 63 else np.uint64(seeds)
        if not config.jax_enable_x64:
            seeds = np.asarray(seeds).astype(np.int32 if seeds.dtype.kind == "i"
                                             else np.uint32)
    seeds = _asarray(seeds)
    offset = config.jax_random_seed_offset
    if offset:   # jax_random_seed_offset: added to every seed, as in JAX
        seeds = seeds + offset
    return kp.random_seed_p.bind(seeds, impl=impl)


def random_wrap(base_arr, *, impl):
    """A typed key array viewing the raw key data ``base_arr``."""
    _check_prng_key_data(impl, base_arr)
    if isinstance(base_arr, Tracer):
        return kp.random_wrap_p.bind(base_arr, impl=impl)
    if not isinstance(base_arr, Array) or isinstance(base_arr, PRNGKeyArray):
        base_arr = _asarray(base_arr)
    return PRNGKeyArray(impl, base_arr)


def random_unwrap(keys):
    """The raw uint32 data of a typed key array."""
    if not is_key_array(keys):
        raise TypeError(f"random_unwrap takes key array operand, got {keys.dtype=}")
    return key_data_of(keys)


def random_split(keys, shape):
    """Each key split into ``shape`` new keys (keys.shape + shape)."""
    return kp.random_split_p.bind(keys, shape=tuple(shape))


def random_fold_in(keys, msgs):
    """Keys with the uint32 ``msgs`` folded in (broadcast against the keys)."""
    return kp.random_fold_in_p.bind(keys, _asarray(msgs))


def random_bits(keys, bit_width: int, shape):
    """Random bits of ``bit_width`` for each key (keys.shape + shape)."""
    return kp.random_bits_p.bind(keys, bit_width=bit_width, shape=tuple(shape))
