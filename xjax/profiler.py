"""``xjax.profiler``: trace annotations and a simple trace of xjax's own activity.

The annotations (:class:`TraceAnnotation`, :class:`StepTraceAnnotation`,
:func:`annotate_function`) mark spans of a program; they do nothing unless a trace is being
collected, as in JAX.

:func:`trace` / :func:`start_trace` / :func:`stop_trace` collect **xjax's own trace, not
XLA's profiler**: host-side spans of

- the annotations (category ``"annotation"``, or ``"step"`` for step annotations, with their
  keyword arguments as ``args``);
- compilations of jitted functions: lowering to StableHLO and the XLA compile, named
  ``"jaxpr_to_mlir_module jit(f)"`` and ``"backend_compile jit(f)"`` (category
  ``"compile"``; taken from :mod:`xjax.monitoring`'s events);
- executions of compiled programs, named by their module (``"jit_f"``, category
  ``"execute"``). XLA runs asynchronously, so a span is the host's dispatch of the program,
  not its run on the device; there are no device-side events, no per-HLO-op events, and
  eager operations (run by NumPy on the CPU) are not recorded.

:func:`stop_trace` writes them in the Chrome trace-event JSON format, gzipped, to
``<log_dir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz`` (the layout JAX's
profiler uses, though JAX writes XLA's ``.xplane.pb`` there and this file is not one); with
``create_perfetto_trace=True`` also ``perfetto_trace.json.gz`` beside it (the same events
without the ``metadata`` field). Open either in https://ui.perfetto.dev or
``chrome://tracing``. TensorBoard's profile plugin reads XLA's xplane files and will not
show these.

Not available (they raise ``NotImplementedError``): the profiler server
(:func:`start_server`, :func:`stop_server`, :func:`register_subprocess`), device memory
profiles (:func:`device_memory_profile`, :func:`save_device_memory_profile`), reading XLA
profiles (:class:`ProfileData`), and ``create_perfetto_link=True``.

Examples
--------
>>> import json, gzip, glob, tempfile
>>> import xjax, xjax.numpy as jnp
>>> log_dir = tempfile.mkdtemp()
>>> with xjax.profiler.trace(log_dir):
...     with xjax.profiler.TraceAnnotation("my_label", batch=3):
...         y = xjax.jit(lambda x: x + 1)(jnp.ones(3)).block_until_ready()
>>> path, = glob.glob(f"{log_dir}/plugins/profile/*/*.trace.json.gz")
>>> events = json.load(gzip.open(path))["traceEvents"]
>>> sorted({e["cat"] for e in events if e["ph"] == "X"})
['annotation', 'compile', 'execute']
>>> [e["args"] for e in events if e["name"] == "my_label"]
[{'batch': 3}]
"""

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
