"""Small top-level APIs: device_put/get, block_until_ready, typeof, named_call/scope, ..."""
from __future__ import annotations

import contextlib
import gc
import platform
import sys

import numpy as np

from jaxlite._src import tree_util
from jaxlite._src.core.avals import ShapedArray, aval_of_value, hitype_aval_mappings
from jaxlite._src.core.trace import set_current_trace
from jaxlite._src.runtime.array import ArrayImpl
from jaxlite._src.sharding.shardings import aval_sharding
from jaxlite._src.api.wrapping import wraps

__all__ = ["block_until_ready", "typeof", "check_compiler_options",
           "ensure_compile_time_eval", "named_call", "named_scope", "clear_caches",
           "print_environment_info", "live_arrays"]


def block_until_ready(x):
    """Wait for every array in the pytree ``x`` to be computed; returns ``x``."""
    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def typeof(x):
    """The abstract value of ``x``: shape, dtype, weak type and, for arrays split over
    Explicit mesh axes, the sharding (printed ``float32[8@x,4]``); for a value of a type
    registered with ``hijax.register_hitype``, what its registered function says."""
    hi = hitype_aval_mappings.get(type(x))
    if hi is not None:
        return hi(x)
    aval = aval_of_value(x)
    if aval.sharding is not None or type(aval) is not ShapedArray:
        return aval     # (a tracer whose type carries its sharding; a traced ref)
    s = getattr(x, "_sharding", None) if isinstance(x, ArrayImpl) else None
    s = aval_sharding(s, len(aval.shape)) if s is not None else None
    if s is None:
        # as JAX: an unsharded value's type carries a sharding over the empty mesh
        s = _unsharded(len(aval.shape))
    return ShapedArray(aval.shape, aval.dtype, aval.weak_type, sharding=s,
                       vma=getattr(aval, "vma", ()))


def _unsharded(ndim):
    from jaxlite._src.sharding.mesh import AbstractMesh
    from jaxlite._src.sharding.partition_spec import PartitionSpec
    from jaxlite._src.sharding.shardings import NamedSharding
    return NamedSharding(AbstractMesh((), ()), PartitionSpec(*([None] * ndim)))


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Evaluate operations on concrete values eagerly even while tracing (e.g. inside jit).

    Operations on tracers are staged or transformed as usual, by the trace of their
    operands (JAX folds only constants within this context)."""
    from jaxlite._src.core.primitive import compile_time_eval
    from jaxlite._src.core.trace import ctx
    compile_time_eval.depth += 1
    outer = compile_time_eval.suspended
    if ctx.trace is not None:
        compile_time_eval.suspended = outer + (ctx.trace,)
    try:
        with set_current_trace(None):
            yield
    finally:
        compile_time_eval.depth -= 1
        compile_time_eval.suspended = outer


def named_call(fun, *, name=None):
    """Wrap ``fun`` so it appears under ``name`` (names are informational in jaxlite)."""
    @wraps(fun)
    def wrapper(*args, **kwargs):
        return fun(*args, **kwargs)
    if name is not None:
        wrapper.__name__ = name
    return wrapper


@contextlib.contextmanager
def named_scope(name):
    """Context manager naming the operations staged inside it (informational)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


def clear_caches():
    """Drop all compiled-function caches."""
    jit_mod = sys.modules.get("jaxlite._src.api.jit")   # (not loaded: nothing is cached)
    if jit_mod is None:
        return
    cls = jit_mod.JitWrapped   # (its class is named PjitFunction, as JAX's)
    for obj in gc.get_objects():
        if issubclass(type(obj), cls):   # (not isinstance: a dead weakref proxy raises)
            obj.clear_cache()


def print_environment_info(return_string=False):
    """Print (or return) versions of jaxlite, NumPy and Python and the device list."""
    import jaxlite
    from jaxlite._src.runtime.devices import devices
    s = (f"jaxlite:    {jaxlite.__version__}\nnumpy:      {np.__version__}\n"
         f"python:     {sys.version}\nplatform:   {platform.platform()}\n"
         f"devices:    {devices()}\n")
    if return_string:
        return s
    print(s)


def live_arrays(platform=None):
    """All live jaxlite arrays."""
    # (type(), not isinstance: a weakref proxy to a dead object among gc's objects raises)
    return [o for o in gc.get_objects() if issubclass(type(o), ArrayImpl)]


def check_compiler_options(options):
    """Reject compile options XLA would reject, with JAX's JaxRuntimeError: jaxlite has no
    XLA, so options are only checked to be XLA debug flags (``xla_*`` names with bool, int,
    float or str values) and otherwise ignored. (XLA also rejects unknown ``xla_*`` names,
    which jaxlite cannot list.)"""
    from jaxlite._src.core.errors import JaxRuntimeError
    for name, value in dict(options or {}).items():
        if not (isinstance(name, str) and name.startswith("xla_") and name.isidentifier()):
            raise JaxRuntimeError(f"INVALID_ARGUMENT: No such compile option: {name!r}")
        if not isinstance(value, (bool, int, float, str)):
            raise JaxRuntimeError(f"INVALID_ARGUMENT: While setting option {name}, "
                                  f"{value!r} is not a valid value.")


def copy_to_host_async(x):
    """Start the host copy of every array leaf of pytree ``x`` (calls each leaf's
    ``copy_to_host_async`` method where it has one; other leaves are left alone) and return
    ``x`` unchanged. jaxlite's CPU arrays already live in host memory, so the copy is
    immediate."""
    from jaxlite._src import tree_util
    for leaf in tree_util.tree_leaves(x):
        fn = getattr(leaf, "copy_to_host_async", None)
        if callable(fn):
            fn()
    return x


def host_id(backend=None):
    """Deprecated alias of ``jax.process_index`` (warns, as JAX does)."""
    import warnings
    from jaxlite._src.runtime.devices import process_index
    warnings.warn("jax.process_index has been renamed to jax.process_index. This alias "
                  "will eventually be removed; please update your code.")
    return process_index(backend)


def host_count(backend=None):
    """Deprecated alias of ``jax.process_count`` (warns, as JAX does)."""
    import warnings
    from jaxlite._src.runtime.devices import process_count
    warnings.warn("jax.process_count has been renamed to jax.process_count. This alias "
                  "will eventually be removed; please update your code.")
    return process_count(backend)


def host_ids(backend=None):
    """Deprecated alias of ``jax.process_indices`` (warns, as JAX does)."""
    import warnings
    from jaxlite._src.runtime.devices import process_indices
    warnings.warn("jax.process_indexs has been renamed to jax.process_indices. This alias "
                  "will eventually be removed; please update your code.")
    return process_indices(backend)
