"""Colocated Python functions (JAX's ``colocated_python/func.py``).

``colocated_python(fun)`` gives a callable that runs ``fun`` on the CPU devices colocated
with its arguments' devices. JAX compiles the function into a "colocated Python program"
(the function's cloudpickle, with input and output specs) and executes it on those hosts;
on a CPU backend it runs the deserialized function in the calling process on the argument
arrays and hands back the arrays it returns. In jaxlite every device is a CPU device of this
process, so that is what always happens, with JAX's specialization API and errors:

- ``specialize(in_specs=..., out_specs_fn=..., devices=...)`` returns a callable with more of
  the specialization fixed (each at most once: "in_specs already specified", ...);
- without output specs the first call discovers them (every output must be a ``jax.Array``);
- arguments must be arrays on one device list; a function without arguments needs
  ``devices``;
- each specialization runs its own deserialized copy of the function; PRNG key arrays go
  through as their data and are wrapped again on each side (``_make_prng_wrapped_fun``).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import threading
from collections.abc import Callable
from typing import Any

from jaxlite._src import tree_util
from jaxlite._src.colocated_python import serialization as _ser
from jaxlite._src.colocated_python.serialization import DeviceList
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapeDtypeStruct
from jaxlite._src.runtime.array import Array

__all__ = ["FunctionInfo", "Specialization", "make_callable", "is_prng_key_dtype",
           "_get_spec", "_infer_devices_from_args", "_make_prng_wrapped_fun"]


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionInfo:
    """User function wrapped by colocated_python."""
    fun: Callable[..., Any]
    fun_sourceinfo: str | None
    fun_signature: inspect.Signature | None


@dataclasses.dataclass(frozen=True, slots=True)
class Specialization:
    """Specialization for a colocated_python function."""
    in_specs_treedef: Any = None
    in_specs_leaves: tuple | None = None
    out_specs_fn: Callable[..., Any] | None = None
    out_specs_treedef: Any = None
    out_specs_leaves: tuple | None = None
    devices: DeviceList | None = None

    def update(self, *, in_specs_treedef=None, in_specs_leaves=None, out_specs_fn=None,
               out_specs_treedef=None, out_specs_leaves=None, devices=None):
        """Creates a new specialization with overrides (each part may be set once)."""
        def pick(new, old, what):
            if new is None:
                return old
            if old is not None:
                raise ValueError(f"{what} already specified")
            return new
        in_specs_treedef = pick(in_specs_treedef, self.in_specs_treedef, "in_specs")
        in_specs_leaves = pick(in_specs_leaves, self.in_specs_leaves, "in_specs")
        out_specs_fn = pick(out_specs_fn, self.out_specs_fn, "out_specs_fn")
        out_specs_treedef = pick(out_specs_treedef, self.out_specs_treedef, "out_specs")
        out_specs_leaves = pick(out_specs_leaves, self.out_specs_leaves, "out_specs")
        devices = pick(devices, self.devices, "devices")
        if devices is not None and not isinstance(devices, DeviceList):
            devices = DeviceList(tuple(devices))
        return Specialization(in_specs_treedef, in_specs_leaves, out_specs_fn,
                              out_specs_treedef, out_specs_leaves, devices)


def _get_spec(x):
    """The ShapeDtypeStruct (with sharding) of a value, which must be a jax.Array."""
    if not isinstance(x, Array):
        raise ValueError("colocated_python only supports jax.Array as input and output, but "
                         f"got {type(x)}.")
    return ShapeDtypeStruct(shape=x.shape, dtype=x.dtype, sharding=x.sharding)


def _infer_devices_from_args(args):
    """The device list all the arguments use (None when no argument has one)."""
    found = set()
    for x in args:
        s = getattr(x, "sharding", None)
        if s is not None:
            found.add(DeviceList(s._device_assignment))
    if not found:
        return None
    if len(found) != 1:
        raise ValueError("All arguments must use the same device list, but got multiple "
                         f"device lists: {found}.")
    return found.pop()


def is_prng_key_dtype(dtype) -> bool:
    """Returns True if the dtype is a PRNG key dtype (e.g. key<fry>)."""
    return dtype is not None and dtypes.issubdtype(dtype, dtypes.prng_key)


def _get_prng_key_info(specs):
    return {i: s.dtype._impl.name for i, s in enumerate(specs) if is_prng_key_dtype(s.dtype)}


def _unwrap_prng_keys(leaves, info):
    from jaxlite._src.random.keys import key_data
    out = list(leaves)
    for i in info:
        if is_prng_key_dtype(out[i].dtype):
            out[i] = key_data(out[i])
    return out


def _wrap_prng_keys(leaves, info):
    from jaxlite._src.random.keys import wrap_key_data
    out = list(leaves)
    for i, impl in info.items():
        if not is_prng_key_dtype(out[i].dtype):
            out[i] = wrap_key_data(out[i], impl=impl)
    return out


def _make_prng_wrapped_fun(fun, prng_in_info, prng_out_info):
    """``fun`` taking PRNG key inputs as their data (wrapped back into keys before the call)
    and giving PRNG key outputs as their data (the worker side of JAX's key handling)."""
    @functools.wraps(fun)
    def wrapped_fun(*args, **kwargs):
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        args, kwargs = tree_util.tree_unflatten(treedef, _wrap_prng_keys(leaves, prng_in_info))
        result = fun(*args, **kwargs)
        leaves, out_treedef = tree_util.tree_flatten(result)
        return tree_util.tree_unflatten(out_treedef, _unwrap_prng_keys(leaves, prng_out_info))
    return wrapped_fun


def _compile_to_executable(name, fun, in_specs_treedef, in_specs_leaves, out_specs_treedef,
                           out_specs_leaves, devices):
    """The callable running ``fun`` as JAX's CPU backend runs a colocated Python program:
    the function and its specialization are serialized and the deserialized function runs
    in this process (PRNG keys cross the boundary as their data)."""
    prng_in = _get_prng_key_info(in_specs_leaves)
    prng_out = _get_prng_key_info(out_specs_leaves)
    if prng_in or prng_out:
        fun = globals()["_make_prng_wrapped_fun"](fun, prng_in, prng_out)
    pickled = _ser._serialize((fun, in_specs_treedef, in_specs_leaves, out_specs_treedef,
                               out_specs_leaves, devices))
    deserialized = _ser._deserialize(pickled)[0]

    @functools.wraps(deserialized)
    def call(*args, **kwargs):
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        args, kwargs = tree_util.tree_unflatten(treedef, _unwrap_prng_keys(leaves, prng_in))
        results = deserialized(*args, **kwargs)
        leaves, out_treedef = tree_util.tree_flatten(results)
        return tree_util.tree_unflatten(out_treedef, _wrap_prng_keys(leaves, prng_out))
    call.__name__ = name
    return call


def _uncached_get_specialized_func(info, specialization):
    """The function run for one full input specialization: the first call discovers the
    output specs when neither they nor ``out_specs_fn`` are given."""
    assert specialization.in_specs_treedef is not None
    assert specialization.devices is not None
    mutex = threading.Lock()
    state = {"spec": specialization, "run": None}
    name = getattr(info.fun, "__name__", "unknown")

    def discover(*args, **kwargs):
        result = info.fun(*args, **kwargs)
        leaves, treedef = tree_util.tree_flatten(result)
        return treedef, tuple(_get_spec(x) for x in leaves), result

    def specialized_func(*args, **kwargs):
        with mutex:
            if state["run"] is None:
                spec = state["spec"]
                if spec.out_specs_treedef is None and spec.out_specs_fn is None:
                    first = _compile_to_executable(
                        f"{name}_output_specs_and_push_result", discover,
                        spec.in_specs_treedef, spec.in_specs_leaves, None, (), spec.devices)
                    treedef, leaves, result = first(*args, **kwargs)
                    spec = state["spec"] = spec.update(out_specs_treedef=treedef,
                                                       out_specs_leaves=leaves)
                    state["run"] = _compile_to_executable(
                        name, info.fun, spec.in_specs_treedef, spec.in_specs_leaves,
                        spec.out_specs_treedef, spec.out_specs_leaves, spec.devices)
                    return result
                if spec.out_specs_treedef is None:
                    a_specs, k_specs = tree_util.tree_map(_get_spec, (args, kwargs))
                    out = spec.out_specs_fn(*a_specs, **k_specs)
                    leaves, treedef = tree_util.tree_flatten(out)
                    spec = state["spec"] = spec.update(out_specs_treedef=treedef,
                                                       out_specs_leaves=tuple(leaves))
                state["run"] = _compile_to_executable(
                    name, info.fun, spec.in_specs_treedef, spec.in_specs_leaves,
                    spec.out_specs_treedef, spec.out_specs_leaves, spec.devices)
            run = state["run"]
        return run(*args, **kwargs)

    return specialized_func


class _SpecializedCollection:
    """The specialized functions of one unspecialized function, by input specs."""

    def __init__(self):
        self._by_spec = {}
        self._mu = threading.Lock()

    def get(self, args_leaves, treedef, info, specialization):
        """The specialized function for these arguments (made on first use)."""
        # (read as JAX's fast-path key does: a value that is no array fails here first)
        key = (treedef, tuple((x.dtype, tuple(x.shape), x.sharding) for x in args_leaves))
        with self._mu:
            fn = self._by_spec.get(key)
            if fn is None:
                in_leaves = tuple(_get_spec(x) for x in args_leaves)
                upd = dict(in_specs_treedef=treedef, in_specs_leaves=in_leaves)
                if specialization.devices is None:
                    upd["devices"] = _infer_devices_from_args(args_leaves)
                fn = self._by_spec[key] = _uncached_get_specialized_func(
                    info, specialization.update(**upd))
            return fn


def _make_callable(info, specialization):
    def specialize(in_specs=None, out_specs_fn=None, devices=None):
        """Returns a colocated Python callable with extra specialization.

        ``in_specs``: the expected input specs, a pytree of ShapeDtypeStruct for
        ``(args, kwargs)``; ``out_specs_fn``: computes the output specs from the input specs
        (otherwise the first call discovers them); ``devices``: the devices to run on
        (required when there are no inputs)."""
        if in_specs is None:
            leaves, treedef = None, None
        else:
            leaves, treedef = tree_util.tree_flatten(in_specs)
            leaves = tuple(leaves)
        return _make_callable(info, specialization.update(
            in_specs_treedef=treedef, in_specs_leaves=leaves, out_specs_fn=out_specs_fn,
            devices=devices))

    collection = _SpecializedCollection()
    single = [None]
    mu = threading.Lock()

    def __call__(*args, **kwargs):
        """Executes the function on the same devices as the arguments or as specialized."""
        leaves, treedef = tree_util.tree_flatten((args, kwargs))
        no_input = not leaves
        if no_input and specialization.devices is None:
            raise ValueError("No devices found. colocated_python function without input "
                             "arguments must be first specialized with devices.")
        full = specialization.in_specs_treedef is not None and \
            specialization.in_specs_leaves is not None
        if not full and not no_input:
            return collection.get(leaves, treedef, info, specialization)(*args, **kwargs)
        with mu:
            fn = single[0]
            if fn is None:
                if full and specialization.devices is not None:
                    spec = specialization
                elif full:
                    spec = specialization.update(devices=_infer_devices_from_args(leaves))
                else:
                    spec = specialization.update(in_specs_leaves=(), in_specs_treedef=treedef)
                fn = single[0] = _uncached_get_specialized_func(info, spec)
        return fn(*args, **kwargs)

    __call__ = functools.wraps(info.fun)(__call__)
    __call__.specialize = specialize
    return __call__


def make_callable(fun, fun_sourceinfo, fun_signature):
    """A colocated Python callable of ``fun`` with no specialization yet."""
    return _make_callable(FunctionInfo(fun, fun_sourceinfo, fun_signature), Specialization())


