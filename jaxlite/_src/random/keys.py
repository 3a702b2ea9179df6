"""Public key functions of ``jax.random``: key, PRNGKey, split, fold_in, clone, key_data,
wrap_key_data, key_impl, key_dtype, and the key checks every sampler starts with."""
from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence

import numpy as np

from jaxlite._src.config import config
from jaxlite._src.core.trace import Tracer
from jaxlite._src.random import prng
from jaxlite._src.random.prng import PRNGKeyArray
from jaxlite._src.runtime.array import Array

__all__ = ["key", "PRNGKey", "split", "fold_in", "clone", "key_data", "wrap_key_data",
           "key_impl", "key_dtype", "PRNGSpec", "check_prng_key", "return_prng_keys"]


class PRNGSpec:
    """Names a PRNG implementation that is not registered under its own name."""
    __slots__ = ("_impl",)

    def __init__(self, impl):
        self._impl = impl

    def __repr__(self):
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self):
        return str(self._impl)

    def __hash__(self):
        return hash(self._impl)

    def __eq__(self, other):
        return isinstance(other, PRNGSpec) and self._impl == other._impl


def _arraylike(x):
    return (isinstance(x, (np.ndarray, np.generic, Array, Tracer)) or hasattr(x, "__jax_array__")
            or (np.isscalar(x) and not isinstance(x, str)))


def check_prng_key(name, key, *, allow_batched=False):
    """(typed key, whether it was a legacy uint32 key) for a key argument, raising JAX's
    errors for key arrays where one key is expected and for non-keys."""
    if prng.is_key_array(key):
        wrapped_key, wrapped = key, False
    elif _arraylike(key):
        wrapped_key = prng.random_wrap(key, impl=prng.default_prng_impl())
        wrapped = True
        legacy = config.jax_legacy_prng_key
        if legacy != "allow":
            msg = ("Legacy uint32 key array passed as key to jax.random function. Please "
                   "create keys using jax.random.key(). If use of a raw key array was "
                   'intended, set jax_legacy_prng_key="allow".')
            if legacy == "error":
                raise ValueError(msg)
            warnings.warn(msg, stacklevel=3)
        elif config.jax_enable_custom_prng:
            warnings.warn("Raw arrays as random keys to jax.random functions are deprecated. "
                          "Assuming valid threefry2x32 key for now.", FutureWarning,
                          stacklevel=3)
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and wrapped_key.ndim:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{key.shape if prng.is_key_array(key) else np.shape(key)}"
                         " != (). Use jax.vmap for batching.")
    return wrapped_key, wrapped


def return_prng_keys(was_wrapped, key):
    """Legacy callers get raw uint32 data back; typed callers get typed keys (everyone
    does under ``jax_enable_custom_prng``)."""
    if config.jax_enable_custom_prng:
        return key
    return prng.random_unwrap(key) if was_wrapped else key


def _key(ctor_name, seed, impl_spec):
    impl = prng.resolve_prng_impl(impl_spec)
    if prng.is_key_array(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    return prng.random_seed(seed, impl=impl)


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (dtype ``key<fry>`` by default) from an integer seed."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.key")
        impl = dtype
    return _key("key", seed, impl)


def PRNGKey(seed, *, impl=None):
    """A legacy PRNG key: the raw uint32 data (``uint32[2]`` for threefry)."""
    return return_prng_keys(True, _key("PRNGKey", seed, impl))


def fold_in(key, data):
    """A new key from ``key`` and an integer ``data`` (hashed in with threefry)."""
    from jaxlite._src.numpy import creation
    key, wrapped = check_prng_key("fold_in", key)
    if prng.is_key_array(data):
        raise ValueError(f"Cannot convert_element_type from {data.dtype} to uint32")
    if np.ndim(data):
        raise TypeError("fold_in accepts a scalar, but was given an array of"
                        f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
    out = prng.random_fold_in(key, creation.asarray(data, dtype="uint32"))
    return return_prng_keys(wrapped, out)


def split(key, num=2):
    """Split one key into ``num`` new keys (``num`` an int or a shape)."""
    typed, wrapped = check_prng_key("split", key)
    if typed.ndim:
        raise TypeError(f"split accepts a single key, but was given a key array of shape "
                        f"{typed.shape} != (). Use jax.vmap for batching.")
    shape = tuple(num) if isinstance(num, Sequence) else (num,)
    shape = tuple(operator.index(_concrete(d, "split")) for d in shape)
    return return_prng_keys(wrapped, prng.random_split(typed, shape))


def _concrete(x, name):
    if isinstance(x, Tracer):
        from jaxlite._src.core import errors
        raise errors.ConcretizationTypeError(
            x, f"The error occurred in jax.random.{name}(): its shape argument must be "
               "static.")
    return x


def clone(key):
    """A copy of ``key`` (keys are values in jaxlite; this marks intended reuse)."""
    if isinstance(key, PRNGKeyArray):
        return PRNGKeyArray(key._impl, key._base_array)
    return key


def key_impl(keys):
    """The name of the PRNG implementation of ``keys``."""
    typed, _ = check_prng_key("key_impl", keys, allow_batched=True)
    impl = prng.key_impl_of(typed)
    return impl.name if impl.name in prng.prngs else PRNGSpec(impl)


def key_data(keys):
    """The raw uint32 data underlying ``keys`` (legacy keys are returned as they are)."""
    typed, _ = check_prng_key("key_data", keys, allow_batched=True)
    return prng.random_unwrap(typed)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys viewing the raw uint32 key data ``key_bits_array``."""
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to "
                             "jax.random.wrap_key_data")
        impl = dtype
    return prng.random_wrap(key_bits_array, impl=prng.resolve_prng_impl(impl))


def key_dtype(impl_spec=None):
    """The key dtype (e.g. ``key<fry>``) of a PRNG implementation."""
    return prng.resolve_prng_impl(impl_spec).key_dtype
