"""jaxlite.profiler (mirrors ``jax.profiler``): trace annotations and Perfetto traces of
jaxlite's compile and execute events. Re-exports only."""
from jaxlite._src.profiler import (  # noqa: F401
    StepTraceAnnotation, TraceAnnotation, annotate_function, start_trace, stop_trace, trace)
