"""jaxlite.profiler (mirrors ``jax.profiler``): trace annotations, Perfetto traces of
jaxlite's compile and execute events, and device memory profiles. Re-exports only."""
from jaxlite._src.profiler import (  # noqa: F401
    StepTraceAnnotation, TraceAnnotation, annotate_function, start_trace, stop_trace, trace)
from jaxlite._src.api.memory_profile import (  # noqa: F401
    device_memory_profile, save_device_memory_profile)
