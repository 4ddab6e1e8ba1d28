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

from __future__ import annotations

import contextlib
import functools
import gzip
import json
import os
import socket
import threading
import time
from collections.abc import Callable
from xjax._src.higher_order import jit_call
from xjax._src.core import monitoring

__all__ = [
    "ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane", "StepTraceAnnotation",
    "TraceAnnotation", "annotate_function", "device_memory_profile", "register_subprocess",
    "save_device_memory_profile", "start_server", "start_trace", "stop_server", "stop_trace",
    "trace",
]


class ProfileOptions:
    """Options of a profiling session, with JAX's attributes and defaults.

    xjax's trace records the same events whatever these say: they are accepted so that
    programs written for JAX run, and kept on the object.
    """

    def __init__(self):
        self.include_dataset_ops = True
        self.host_tracer_level = 2
        self.python_tracer_level = 1
        self.enable_hlo_proto = True
        self.start_timestamp_ns = 0
        self.duration_ms = 0
        self.repository_path = ""
        self.session_id = ""
        self.raise_error_on_start_failure = False
        self.advanced_configuration = {}

    def __repr__(self):
        return f"ProfileOptions({vars(self)})"


def _no_xla_profiles(what):
    return NotImplementedError(
        f"xjax.profiler.{what}: reading XLA profiles (XSpace protobufs) is not supported; "
        "xjax's trace is Chrome trace-event JSON (see xjax.profiler.start_trace).")


class ProfileData:
    """JAX's reader of XLA profiles (``.xplane.pb``): not supported by xjax."""

    def __init__(self, *args, **kwargs):
        raise _no_xla_profiles("ProfileData")

    @classmethod
    def from_file(cls, path):
        raise _no_xla_profiles("ProfileData.from_file")

    @classmethod
    def from_serialized_xspace(cls, serialized):
        raise _no_xla_profiles("ProfileData.from_serialized_xspace")

    @classmethod
    def from_text_proto(cls, text):
        raise _no_xla_profiles("ProfileData.from_text_proto")

    @classmethod
    def from_raw_cpp_ptr(cls, ptr):
        raise _no_xla_profiles("ProfileData.from_raw_cpp_ptr")


class ProfilePlane:
    """A plane of an XLA profile (from :class:`ProfileData`): not supported by xjax."""

    def __init__(self, *args, **kwargs):
        raise _no_xla_profiles("ProfilePlane")


class ProfileEvent:
    """An event of an XLA profile (from :class:`ProfileData`): not supported by xjax."""

    def __init__(self, *args, **kwargs):
        raise _no_xla_profiles("ProfileEvent")


# -- the trace being collected --

class _Session:
    __slots__ = ("log_dir", "perfetto_trace", "events", "pid", "thread_names",
                 "start_ns")

    def __init__(self, log_dir, perfetto_trace):
        self.log_dir = log_dir
        self.perfetto_trace = perfetto_trace
        self.events = []
        self.pid = os.getpid()
        self.thread_names = {}
        self.start_ns = time.time_ns()

    def add(self, name, cat, start_ns, end_ns, args=None):
        tid = threading.get_ident()
        if tid not in self.thread_names:
            self.thread_names[tid] = threading.current_thread().name
        event = {"ph": "X", "name": name, "cat": cat, "pid": self.pid, "tid": tid,
                 "ts": start_ns / 1000, "dur": max(end_ns - start_ns, 0) / 1000}
        if args:
            event["args"] = {k: v if isinstance(v, (int, float, str, bool)) or v is None
                             else str(v) for k, v in args.items()}
        self.events.append(event)


_lock = threading.Lock()
_session: _Session | None = None


class TraceAnnotation:
    """Context manager marking a span named ``name`` in the trace being collected (nothing
    when none is); keyword arguments become the span's ``args``.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> x = jnp.ones((100, 100))
    >>> with xjax.profiler.TraceAnnotation("my_label"):
    ...     result = jnp.dot(x, x.T).block_until_ready()
    """

    _category = "annotation"
    __slots__ = ("name", "kwargs", "_start")

    def __init__(self, name: str, **kwargs):
        self.name = name
        self.kwargs = kwargs
        self._start = None

    def __enter__(self):
        if _session is not None:
            self._start = time.time_ns()
        return self

    def __exit__(self, exc_type, exc, tb):
        session, start = _session, self._start
        if session is not None and start is not None:
            session.add(self.name, self._category, start, time.time_ns(), self.kwargs)
        self._start = None
        return False

    def set_metadata(self, **kwargs) -> None:
        """Add ``args`` to the span (while a trace is collected)."""
        self.kwargs.update(kwargs)

    @staticmethod
    def is_enabled() -> bool:
        """Whether a trace is being collected."""
        return _session is not None


class StepTraceAnnotation(TraceAnnotation):
    """A :class:`TraceAnnotation` marking one step (e.g. of training); pass its number as
    ``step_num``. Its category in the trace is ``"step"``.

    Examples
    --------
    >>> import xjax
    >>> for step in range(2):
    ...     with xjax.profiler.StepTraceAnnotation("train", step_num=step):
    ...         pass
    """

    _category = "step"
    __slots__ = ()


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs):
    """Decorate ``func`` so that each call is a :class:`TraceAnnotation` named ``name``
    (default: its qualified name), with ``decorator_kwargs`` as the span's ``args``.

    Examples
    --------
    >>> import functools, xjax
    >>> @functools.partial(xjax.profiler.annotate_function, name="event_name")
    ... def f(x):
    ...     return x + 1
    >>> f(1)
    2
    """
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


def _compile_span(event, start_time, end_time, fun_name=None, **kwargs):
    session = _session
    if session is None:
        return
    short = event.rsplit("/", 1)[-1].removesuffix("_duration")
    name = f"{short} {fun_name}" if fun_name else short
    session.add(name, "compile", round(start_time * 1e9), round(end_time * 1e9))


def _module_name(compiled) -> str:
    text = compiled.text or ""
    i = text.find("module @", 0, 4096)
    if i < 0:
        return "xla_executable"
    j = i + len("module @")
    k = j
    while k < len(text) and (text[k].isalnum() or text[k] in "_.$-"):
        k += 1
    return text[j:k] or "xla_executable"


def _record_execution(compiled, start_ns: int, end_ns: int) -> None:
    session = _session
    if session is not None:
        session.add(_module_name(compiled), "execute", start_ns, end_ns)


def _install_hooks(session: _Session) -> None:
    """Record compilations (a monitoring listener) and executions (jit_call's execution
    recorder, set only while the trace runs: nothing is paid otherwise)."""
    monitoring.register_event_time_span_listener(_compile_span)
    jit_call.set_execution_recorder(_record_execution)


def _remove_hooks(session: _Session) -> None:
    jit_call.set_execution_recorder(None)
    if _compile_span in monitoring.get_event_time_span_listeners():
        monitoring.unregister_event_time_span_listener(_compile_span)


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Start collecting xjax's trace (see the module docstring for what it records); end it
    with :func:`stop_trace`, which writes it under ``log_dir``.

    Parameters
    ----------
    log_dir : str or os.PathLike
        Where :func:`stop_trace` writes the trace (in ``plugins/profile/<time>/``).
    create_perfetto_link : bool
        Not supported (JAX serves the file to ui.perfetto.dev and blocks): raises
        ``NotImplementedError``; use ``create_perfetto_trace=True`` and open the file there.
    create_perfetto_trace : bool
        Also write ``perfetto_trace.json.gz``.
    profiler_options : ProfileOptions, optional
        Accepted; xjax's trace does not depend on it.

    Raises
    ------
    RuntimeError
        If a trace is already being collected (JAX's message).
    """
    global _session
    if create_perfetto_link:
        raise NotImplementedError(
            "xjax.profiler: create_perfetto_link=True (serving the trace to ui.perfetto.dev) "
            "is not supported; pass create_perfetto_trace=True and open "
            "perfetto_trace.json.gz in https://ui.perfetto.dev")
    if profiler_options is not None and not isinstance(profiler_options, ProfileOptions):
        raise TypeError(f"profiler_options must be a ProfileOptions, got "
                        f"{type(profiler_options).__name__}")
    with _lock:
        if _session is not None:
            raise RuntimeError("Profile has already been started. "
                               "Only one profile may be run at a time.")
        session = _Session(os.fspath(log_dir), bool(create_perfetto_trace))
        _install_hooks(session)
        _session = session


def stop_trace() -> None:
    """Stop the trace started by :func:`start_trace` and write it to its ``log_dir``.

    Raises
    ------
    RuntimeError
        If no trace is being collected (JAX's message).
    """
    global _session
    with _lock:
        session = _session
        if session is None:
            raise RuntimeError("No profile started")
        _session = None
        _remove_hooks(session)
        _write(session)


def _write(session: _Session) -> str:
    host = socket.gethostname() or "localhost"
    stamp = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(session.start_ns / 1e9))
    folder = os.path.join(session.log_dir, "plugins", "profile", stamp)
    os.makedirs(folder, exist_ok=True)
    meta = [{"ph": "M", "name": "process_name", "pid": session.pid, "tid": 0,
             "args": {"name": f"xjax (pid {session.pid})"}}]
    meta += [{"ph": "M", "name": "thread_name", "pid": session.pid, "tid": tid,
              "args": {"name": name}} for tid, name in session.thread_names.items()]
    events = meta + sorted(session.events, key=lambda e: e["ts"])
    trace_obj = {"displayTimeUnit": "ns",
                 "metadata": {"format": "xjax trace (Chrome trace-event JSON), not an XLA "
                                        "profile", "host": host},
                 "traceEvents": events}
    path = os.path.join(folder, f"{host}.trace.json.gz")
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(trace_obj, f)
    if session.perfetto_trace:
        del trace_obj["metadata"]  # as JAX's perfetto_trace.json.gz
        with gzip.open(os.path.join(folder, "perfetto_trace.json.gz"), "wt",
                       encoding="utf-8") as f:
            json.dump(trace_obj, f)
    return path


class trace(contextlib.ContextDecorator):  # noqa: N801 (JAX's name)
    """Context manager collecting xjax's trace around a block: :func:`start_trace` on entry,
    :func:`stop_trace` on exit (also by an exception); also a decorator. Same parameters
    as :func:`start_trace`."""

    def __init__(self, log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                 create_perfetto_trace: bool = False,
                 profiler_options: ProfileOptions | None = None):
        self._args = (log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)

    def __enter__(self):
        start_trace(*self._args)
        return self

    def __exit__(self, exc_type, exc, tb):
        stop_trace()
        return False


def _no_server(what):
    return NotImplementedError(
        f"xjax.profiler.{what}: xjax has no profiler server (TensorBoard's on-demand "
        "capture needs XLA's profiler); collect xjax's own trace with "
        "xjax.profiler.trace(log_dir) instead.")


def start_server(port: int, requires_backend: bool = True):
    """JAX's profiler server for TensorBoard's capture: not supported by xjax."""
    raise _no_server("start_server")


def stop_server() -> None:
    """JAX's profiler server: not supported by xjax."""
    raise _no_server("stop_server")


def register_subprocess(pid: int, port: int):
    """Profiling subprocesses through their profiler servers: not supported by xjax."""
    raise _no_server("register_subprocess")


def device_memory_profile(backend: str | None = None) -> bytes:
    """A pprof device memory profile: not supported by xjax (its PJRT binding exposes no
    heap profile, and xjax does not record allocation sites)."""
    raise NotImplementedError(
        "xjax.profiler.device_memory_profile: device memory profiles (pprof) are not "
        "supported by xjax; xjax.live_arrays() lists the arrays alive, if that helps.")


def save_device_memory_profile(filename, backend: str | None = None) -> None:
    """Write :func:`device_memory_profile` to ``filename``: not supported by xjax."""
    device_memory_profile(backend)
