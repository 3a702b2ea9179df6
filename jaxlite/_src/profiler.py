"""``jax.profiler``: trace annotations and a trace file of jaxlite's own events.

Between ``start_trace(log_dir)`` and ``stop_trace()`` (or inside ``with trace(log_dir):``)
jaxlite records, per thread:
- the user's ``TraceAnnotation`` / ``StepTraceAnnotation`` blocks and ``annotate_function``
  calls;
- jit's compile events (tracing, the jaxpr passes, code generation: the ``jax.monitoring``
  events of the same names);
- every jitted call (``jit(name)``, its Python-side dispatch and run).

``stop_trace`` writes them as a Chrome / Perfetto trace (JSON, gzipped) to
``log_dir/plugins/profile/<run>/<host>.trace.json.gz`` -- the file JAX writes with
``create_perfetto_trace=True``; open it at https://ui.perfetto.dev. (JAX's XPlane protobuf
for TensorBoard is not produced.)
"""
from __future__ import annotations

import contextlib
import functools
import gzip
import json
import os
import socket
import threading
import time

from jaxlite._src import monitoring

__all__ = ["TraceAnnotation", "StepTraceAnnotation", "annotate_function", "trace",
           "start_trace", "stop_trace", "active", "record_span"]

# active[0] is True while a trace is being collected (read on jit's call path)
active = [False]


class _Session:
    def __init__(self, log_dir, create_perfetto_link):
        self.log_dir = os.fspath(log_dir)
        self.link = create_perfetto_link
        self.events = []
        self.lock = threading.Lock()
        self.t0 = time.perf_counter()
        self.wall0 = time.time()

    def add(self, name, start, end, args=None, cat="jaxlite"):
        """Record a complete event; ``start``/``end`` from time.perf_counter()."""
        ev = {"name": name, "ph": "X", "cat": cat, "pid": os.getpid(),
              "tid": threading.get_ident(), "ts": (start - self.t0) * 1e6,
              "dur": max(end - start, 0.0) * 1e6}
        if args:
            ev["args"] = {k: (v if isinstance(v, (int, float, str, bool)) else str(v))
                          for k, v in args.items()}
        with self.lock:
            self.events.append(ev)


_session: list = [None]
_session_lock = threading.Lock()


def record_span(name, start, end, args=None, cat="jaxlite"):
    """Record an event of ``name`` from ``start`` to ``end`` (``time.perf_counter()``
    values) in the running trace, if any."""
    s = _session[0]
    if s is not None:
        s.add(name, start, end, args, cat)


def _on_time_span(event, start_time, end_time, **kwargs):
    s = _session[0]
    if s is None:
        return
    # monitoring reports wall-clock times: convert to this session's clock
    off = s.t0 - s.wall0
    s.add(event.rsplit("/", 1)[-1].removesuffix("_duration"), start_time + off,
          end_time + off, dict(kwargs), cat="compile")


def start_trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
                profiler_options=None):
    """Start collecting a trace, to be written under ``log_dir`` by ``stop_trace``. Only one
    trace may run at a time (RuntimeError otherwise, as in JAX)."""
    with _session_lock:
        if _session[0] is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        _session[0] = _Session(log_dir, create_perfetto_link)
        monitoring.register_event_time_span_listener(_on_time_span)
        active[0] = True


def stop_trace():
    """Stop the running trace and write it to
    ``<log_dir>/plugins/profile/<run>/<host>.trace.json.gz``; returns that path.
    RuntimeError when no trace is running."""
    with _session_lock:
        s = _session[0]
        if s is None:
            raise RuntimeError("No profile started")
        _session[0] = None
        active[0] = False
        monitoring.unregister_event_time_span_listener(_on_time_span)
    run = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(s.wall0))
    out_dir = os.path.join(s.log_dir, "plugins", "profile", run)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{socket.gethostname()}.trace.json.gz")
    names = {"name": "process_name", "ph": "M", "pid": os.getpid(),
             "args": {"name": "jaxlite (CPU)"}}
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump({"displayTimeUnit": "ms", "traceEvents": [names] + s.events}, f)
    if s.link:
        print(f"Perfetto trace written to {path}: open it at https://ui.perfetto.dev")
    return path


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link=False, create_perfetto_trace=False,
          profiler_options=None):
    """Context manager collecting a trace of the block into ``log_dir`` (see
    ``start_trace``/``stop_trace``)."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """Context manager (or decorator) marking a named span of host code in the trace;
    keyword arguments become the event's metadata."""

    def __init__(self, name, **kwargs):
        self.name = name
        self.kwargs = kwargs
        self._start = None

    def __enter__(self):
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if _session[0] is not None and self._start is not None:
            record_span(self.name, self._start, time.perf_counter(), self.kwargs,
                        cat="annotation")
        return False

    def __call__(self, fun):
        @functools.wraps(fun)
        def wrapper(*args, **kwargs):
            with type(self)(self.name, **self.kwargs):
                return fun(*args, **kwargs)
        return wrapper


class StepTraceAnnotation(TraceAnnotation):
    """A TraceAnnotation for one training step: ``StepTraceAnnotation("train",
    step_num=i)`` (the step number is kept in the event's metadata, as JAX's step
    markers)."""

    def __init__(self, name, **kwargs):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func, name=None, **decorator_kwargs):
    """Decorator recording each call of ``func`` as a span named ``name`` (default: the
    function's qualified name) in the trace."""
    label = name or getattr(func, "__qualname__", getattr(func, "__name__", "function"))

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if _session[0] is None:
            return func(*args, **kwargs)
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper
