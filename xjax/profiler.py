"""``xjax.profiler``: trace annotations and a simple trace of xjax's own activity.

The implementation and its full description: :mod:`xjax._src.api.profiler`."""

from xjax._src.api.profiler import (  # noqa: F401
    ProfileData as ProfileData, ProfileEvent as ProfileEvent, ProfileOptions as ProfileOptions,
    ProfilePlane as ProfilePlane, StepTraceAnnotation as StepTraceAnnotation,
    TraceAnnotation as TraceAnnotation, annotate_function as annotate_function,
    device_memory_profile as device_memory_profile, register_subprocess as register_subprocess,
    save_device_memory_profile as save_device_memory_profile, start_server as start_server,
    start_trace as start_trace, stop_server as stop_server, stop_trace as stop_trace,
    trace as trace,
)
from xjax._src.api.profiler import __all__ as __all__  # noqa: F401
