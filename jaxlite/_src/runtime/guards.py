"""Run-time guards: JAX's transfer guard and ``jax_no_execution``.

A host value (a NumPy array or a Python scalar) becoming an array for a computation is a
host-to-device transfer, as in JAX: implicit when an eager operation or a jitted function
receives it (``jnp.add(np_array, 1)``, ``x + 1``, ``jnp.array([...])``), explicit through
``jax.device_put``. With ``jax.transfer_guard('disallow')`` implicit transfers raise JAX's
error; 'log' logs them; '*_explicit' levels cover ``device_put`` too. Reading a CPU array
from the host (``np.asarray(x)``, ``print``) is no transfer on the CPU, as in JAX on CPU.

``active[0]`` is True while some guard could act, so the eager path pays one list read.
"""
from __future__ import annotations

import logging

import numpy as np

from jaxlite._src.config import config
from jaxlite._src.core import dtypes
from jaxlite._src.core.avals import ShapedArray
from jaxlite._src.core.errors import JaxRuntimeError
from jaxlite._src.core.trace import ctx

__all__ = ["active", "check_host_to_device", "check_execution"]

logger = logging.getLogger("jaxlite._src.guard_lib")

_H2D = "jax_transfer_guard_host_to_device"
_FLAGS = (_H2D, "jax_no_execution")

# True while jax_no_execution is set or the host-to-device guard is not 'allow'
active = [False]


def _refresh(name):
    if name in _FLAGS:
        active[0] = bool(config.read("jax_no_execution")) or \
            config.read(_H2D) not in (None, "allow")


config.add_listener(_refresh)
_refresh(_H2D)


def _aval_of_host(x) -> ShapedArray:
    t = type(x)
    if t in (int, float, complex, bool):
        return ShapedArray((), dtypes.python_scalar_dtype(x), weak_type=t is not bool)
    a = np.asarray(x)
    return ShapedArray(a.shape, dtypes.canonicalize_dtype(a.dtype))


def check_host_to_device(x, explicit=False, sharding=None):
    """Apply the host-to-device transfer guard to host value ``x`` about to become an array
    (``explicit``: asked for by ``device_put``). Raises JaxRuntimeError when disallowed."""
    level = config.read(_H2D)
    if level is None or level == "allow" or ctx.trace is not None:
        return   # (under a trace a host value is a constant of the program, no transfer)
    if explicit and level in ("log", "disallow"):
        return
    if sharding is None:
        from jaxlite._src.runtime.devices import default_device
        from jaxlite._src.sharding.shardings import SingleDeviceSharding
        sharding = SingleDeviceSharding(default_device())
    what = f"host-to-device transfer: aval={_aval_of_host(x)!r}, dst_sharding={sharding!r}"
    if level.startswith("log"):
        logger.warning("%s", what)
        return
    raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {what}")


def check_execution(name):
    """Raise JAX's RuntimeError when ``jax_no_execution`` is set (``name``: what would run,
    e.g. ``jit(f)``)."""
    if config.read("jax_no_execution"):
        raise RuntimeError(f"JAX tried to execute function {name}, but the no_execution "
                           "config option is set")
