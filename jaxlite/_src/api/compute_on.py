"""``jax.experimental.compute_on``: run a computation on the host or the device. jaxlite's
only device is the CPU, whose memory is the host's, so every valid compute type runs where
it always runs; the argument is checked as JAX checks it."""
from __future__ import annotations

import contextlib
import functools
import threading

__all__ = ["compute_on", "compute_on2", "current_compute_type"]


class _State(threading.local):
    stack = ()


_state = _State()


def _check_valid(c_type):
    if not isinstance(c_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    if c_type not in {"device_host", "device", "tpu_sparsecore"} and \
            not c_type.startswith("gpu_stream:"):
        raise ValueError(f"Invalid compute type {c_type}. Current supported values are "
                         "`device_host`, `device`, `tpu_sparsecore`, and `gpu_stream:#`.")


def current_compute_type():
    """The innermost ``compute_on`` type, or None outside any."""
    return _state.stack[-1] if _state.stack else None


@contextlib.contextmanager
def compute_on(compute_type):
    """Context manager (or decorator) placing the computations traced inside on
    ``compute_type`` ('device_host', 'device', 'tpu_sparsecore' or 'gpu_stream:N'). On
    jaxlite's CPU host and device are one, so only the argument is checked."""
    _check_valid(compute_type)
    if _state.stack and compute_type != _state.stack[-1] and \
            "device_host" in (compute_type, _state.stack[-1]):
        raise NotImplementedError("Nesting `compute_on` with different compute types is not "
                                  f"supported yet ({_state.stack[-1]} then {compute_type}).")
    _state.stack = _state.stack + (compute_type,)
    try:
        yield
    finally:
        _state.stack = _state.stack[:-1]


def compute_on2(f=None, *, compute_type, out_memory_spaces, compiler_options=None):
    """Decorator form of ``compute_on`` with the memory spaces of the outputs (host and
    device memory are one on jaxlite's CPU)."""
    if f is None:
        return lambda g: compute_on2(g, compute_type=compute_type,
                                     out_memory_spaces=out_memory_spaces,
                                     compiler_options=compiler_options)
    _check_valid(compute_type)

    @functools.wraps(f)
    def wrapped(*args):
        with compute_on(compute_type):
            return f(*args)
    return wrapped
