"""``jax.monitoring``: named events reported to registered listeners.

jaxlite reports JAX's compile-time events with JAX's names, each with ``fun_name=``:
``/jax/core/compile/jaxpr_trace_duration`` (tracing a jitted function),
``/jax/core/compile/jaxpr_to_mlir_module_duration`` (jaxlite: the jaxpr passes) and
``/jax/core/compile/backend_compile_duration`` (jaxlite: generating the Python program), as
durations, time spans and (at their start) scalars holding the start time.
"""
from __future__ import annotations

import time

__all__ = ["record_event", "record_event_duration_secs", "record_event_time_span",
           "record_scalar", "register_event_listener", "register_event_duration_secs_listener",
           "register_event_time_span_listener", "register_scalar_listener",
           "unregister_event_listener", "unregister_event_duration_listener",
           "unregister_event_time_span_listener", "unregister_scalar_listener",
           "clear_event_listeners", "get_event_listeners", "get_event_duration_listeners",
           "get_event_time_span_listeners", "get_scalar_listeners", "timed_event",
           "JAXPR_TRACE_EVENT", "JAXPR_TO_MLIR_MODULE_EVENT", "BACKEND_COMPILE_EVENT"]

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"

_event = []
_duration = []
_span = []
_scalar = []


def record_event(event: str, **kwargs) -> None:
    """Report ``event`` (with ``kwargs`` metadata) to every event listener."""
    for cb in list(_event):
        cb(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs) -> None:
    """Report that ``event`` took ``duration`` seconds to every duration listener."""
    for cb in list(_duration):
        cb(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs) -> None:
    """Report ``event``'s start and end times (seconds since the epoch) to every time-span
    listener."""
    for cb in list(_span):
        cb(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value, **kwargs) -> None:
    """Report a scalar ``value`` for ``event`` to every scalar listener."""
    for cb in list(_scalar):
        cb(event, value, **kwargs)


def register_event_listener(callback) -> None:
    """Call ``callback(event, **kwargs)`` at each ``record_event``."""
    _event.append(callback)


def register_event_duration_secs_listener(callback) -> None:
    """Call ``callback(event, duration_secs, **kwargs)`` at each recorded duration."""
    _duration.append(callback)


def register_event_time_span_listener(callback) -> None:
    """Call ``callback(event, start_time, end_time, **kwargs)`` at each time span."""
    _span.append(callback)


def register_scalar_listener(callback) -> None:
    """Call ``callback(event, value, **kwargs)`` at each recorded scalar."""
    _scalar.append(callback)


def _remove(lst, callback, what):
    if callback not in lst:
        raise ValueError(f"{callback!r} is not a registered {what} listener")
    lst.remove(callback)


def unregister_event_listener(callback) -> None:
    """Remove an event listener (ValueError if it was not registered)."""
    _remove(_event, callback, "event")


def unregister_event_duration_listener(callback) -> None:
    """Remove a duration listener (ValueError if it was not registered)."""
    _remove(_duration, callback, "event duration")


def unregister_event_time_span_listener(callback) -> None:
    """Remove a time-span listener (ValueError if it was not registered)."""
    _remove(_span, callback, "event time span")


def unregister_scalar_listener(callback) -> None:
    """Remove a scalar listener (ValueError if it was not registered)."""
    _remove(_scalar, callback, "scalar")


def clear_event_listeners() -> None:
    """Remove every listener."""
    for lst in (_event, _duration, _span, _scalar):
        lst.clear()


def get_event_listeners():
    """A copy of the list of event listeners."""
    return list(_event)


def get_event_duration_listeners():
    """A copy of the list of duration listeners."""
    return list(_duration)


def get_event_time_span_listeners():
    """A copy of the list of time-span listeners."""
    return list(_span)


def get_scalar_listeners():
    """A copy of the list of scalar listeners."""
    return list(_scalar)


class timed_event:
    """Context manager timing a block as ``event`` (with ``fun_name``): a scalar with the
    start time on entry; a duration and a time span on exit (not when the block raised)."""
    __slots__ = ("event", "fun_name", "start")

    def __init__(self, event, fun_name):
        self.event = event
        self.fun_name = fun_name

    def __enter__(self):
        self.start = time.time()
        if _scalar:
            record_scalar(self.event, self.start, fun_name=self.fun_name)
        return self

    def __exit__(self, exc_type, *exc):
        if exc_type is None and (_duration or _span):
            end = time.time()
            record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
            record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)
        return False
