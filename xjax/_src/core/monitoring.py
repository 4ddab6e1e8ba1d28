"""``xjax.monitoring``: named events for instrumentation, with JAX's API and event names.

Code marks points as named events; every listener registered for that kind of event is
called each time one is recorded (to count them, or export them to a metrics system). Four
kinds, as in JAX: plain events, durations in seconds, time spans (start and end times from
``time.time()``) and scalar values.

Events xjax records, with JAX's names and keyword arguments:

=====================================================  =========================================
event                                                  when
=====================================================  =========================================
``/jax/core/compile/jaxpr_to_mlir_module_duration``    lowering a jitted jaxpr to StableHLO:
                                                       scalar (start time), duration and span,
                                                       with ``fun_name="jit(f)"``
``/jax/core/compile/backend_compile_duration``         XLA compilation (or a persistent-cache
                                                       load) of that module: the same three
``/jax/compilation_cache/tasks_using_cache``           once per process, at the first compile,
``/jax/compilation_cache/task_disabled_cache``         whether ``jax_enable_compilation_cache``
                                                       is on or off
``/jax/compilation_cache/compile_requests_use_cache``  each compile while that flag is on (JAX
                                                       counts these with or without a cache dir)
``/jax/compilation_cache/cache_hits``                  an executable loaded from the persistent
                                                       cache; then the durations
                                                       ``.../compile_time_saved_sec`` (when the
                                                       entry recorded its compile time) and
                                                       ``.../cache_retrieval_time_sec``
``/jax/compilation_cache/cache_misses``                a compiled executable written to the
                                                       persistent cache
=====================================================  =========================================

``/jax/core/compile/jaxpr_trace_duration`` (tracing a jitted function) is not recorded yet:
tracing is driven by ``xjax/api.py``, which this module does not reach into.

Recording costs nothing while no listener is registered: the compile path tests one flag,
and jitted calls that hit the in-memory cache never record anything (as in JAX).

Examples
--------
>>> import xjax, xjax.numpy as jnp
>>> from xjax import monitoring
>>> seen = []
>>> def listener(event, duration_secs, **kwargs):
...     seen.append((event, kwargs))
>>> monitoring.register_event_duration_secs_listener(listener)
>>> _ = xjax.jit(lambda x: x * 3)(jnp.ones(2))
>>> ('/jax/core/compile/backend_compile_duration', {'fun_name': 'jit(<lambda>)'}) in seen
True
>>> monitoring.unregister_event_duration_listener(listener)
"""

from __future__ import annotations

import time
from typing import Protocol

__all__ = [
    "clear_event_listeners", "record_event", "record_event_duration_secs",
    "record_event_time_span", "record_scalar", "register_event_duration_secs_listener",
    "register_event_listener", "register_event_time_span_listener", "register_scalar_listener",
    "unregister_event_duration_listener", "unregister_event_listener",
    "unregister_event_time_span_listener", "unregister_scalar_listener",
]

JAXPR_TRACE_EVENT = "/jax/core/compile/jaxpr_trace_duration"
JAXPR_TO_MLIR_MODULE_EVENT = "/jax/core/compile/jaxpr_to_mlir_module_duration"
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class EventListenerWithMetadata(Protocol):
    def __call__(self, event: str, **kwargs: str | int) -> None: ...


class EventDurationListenerWithMetadata(Protocol):
    def __call__(self, event: str, duration_secs: float, **kwargs: str | int) -> None: ...


class EventTimeSpanListenerWithMetadata(Protocol):
    def __call__(self, event: str, start_time: float, end_time: float,
                 **kwargs: str | int) -> None: ...


class ScalarListenerWithMetadata(Protocol):
    def __call__(self, event: str, value: float | int, **kwargs: str | int) -> None: ...


_event_listeners: list = []
_event_duration_secs_listeners: list = []
_event_time_span_listeners: list = []
_scalar_listeners: list = []

# True while any listener is registered (xjax's own emission points test only this).
active = False


def _update_active() -> None:
    global active
    active = bool(_event_listeners or _event_duration_secs_listeners
                  or _event_time_span_listeners or _scalar_listeners)


def record_event(event: str, **kwargs: str | int) -> None:
    """Record an event: call every listener registered with
    :func:`register_event_listener` as ``listener(event, **kwargs)``.

    Parameters
    ----------
    event : str
        The event's name, e.g. ``"/my_app/cache_miss"``.
    **kwargs : str or int
        Metadata; pass the same names in the same order each time for one event.
    """
    for callback in tuple(_event_listeners):
        callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Record a duration in seconds: ``listener(event, duration, **kwargs)`` for every
    listener registered with :func:`register_event_duration_secs_listener`."""
    for callback in tuple(_event_duration_secs_listeners):
        callback(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Record an event's start and end times (seconds since the epoch, as ``time.time()``):
    ``listener(event, start_time, end_time, **kwargs)`` for every listener registered with
    :func:`register_event_time_span_listener`."""
    for callback in tuple(_event_time_span_listeners):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Record a scalar value: ``listener(event, value, **kwargs)`` for every listener
    registered with :func:`register_scalar_listener`."""
    for callback in tuple(_scalar_listeners):
        callback(event, value, **kwargs)


def register_event_listener(callback: EventListenerWithMetadata) -> None:
    """Register ``callback`` to be called by :func:`record_event`."""
    _event_listeners.append(callback)
    _update_active()


def register_event_duration_secs_listener(callback: EventDurationListenerWithMetadata) -> None:
    """Register ``callback`` to be called by :func:`record_event_duration_secs`."""
    _event_duration_secs_listeners.append(callback)
    _update_active()


def register_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
    """Register ``callback`` to be called by :func:`record_event_time_span`."""
    _event_time_span_listeners.append(callback)
    _update_active()


def register_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    """Register ``callback`` to be called by :func:`record_scalar`."""
    _scalar_listeners.append(callback)
    _update_active()


def get_event_listeners() -> list:
    """A copy of the registered event listeners."""
    return list(_event_listeners)


def get_event_duration_listeners() -> list:
    """A copy of the registered duration listeners."""
    return list(_event_duration_secs_listeners)


def get_event_time_span_listeners() -> list:
    """A copy of the registered time-span listeners."""
    return list(_event_time_span_listeners)


def get_scalar_listeners() -> list:
    """A copy of the registered scalar listeners."""
    return list(_scalar_listeners)


def clear_event_listeners() -> None:
    """Unregister every listener of every kind.

    JAX 0.10.2 leaves its scalar listeners registered here (its function omits them from
    its ``global`` statement); xjax clears all four kinds, as the name says.
    """
    del _event_listeners[:], _event_duration_secs_listeners[:]
    del _event_time_span_listeners[:], _scalar_listeners[:]
    _update_active()


def _unregister(listeners: list, callback, kind: str) -> None:
    if callback not in listeners:
        raise ValueError(f"{callback!r} is not a registered {kind} listener")
    listeners.remove(callback)
    _update_active()


def unregister_event_listener(callback: EventListenerWithMetadata) -> None:
    """Unregister an event listener (``ValueError`` if it is not registered)."""
    _unregister(_event_listeners, callback, "event")


def unregister_event_duration_listener(callback: EventDurationListenerWithMetadata) -> None:
    """Unregister a duration listener (``ValueError`` if it is not registered)."""
    _unregister(_event_duration_secs_listeners, callback, "event duration")


def unregister_event_time_span_listener(callback: EventTimeSpanListenerWithMetadata) -> None:
    """Unregister a time-span listener (``ValueError`` if it is not registered)."""
    _unregister(_event_time_span_listeners, callback, "event time span")


def unregister_scalar_listener(callback: ScalarListenerWithMetadata) -> None:
    """Unregister a scalar listener (``ValueError`` if it is not registered)."""
    _unregister(_scalar_listeners, callback, "scalar")


class _Timed:
    """Time a block as JAX's ``log_elapsed_time`` does for its compile events: a scalar with
    the start time on entry; a duration and a time span on exit (also by an exception)."""

    __slots__ = ("event", "fun_name", "start")

    def __init__(self, event: str, fun_name: str):
        self.event = event
        self.fun_name = fun_name

    def __enter__(self):
        self.start = time.time()
        record_scalar(self.event, self.start, fun_name=self.fun_name)
        return self

    def __exit__(self, exc_type, exc, tb):
        end = time.time()
        record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
        record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)
        return False


class _Nothing:
    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        return False


_NOTHING = _Nothing()


def timed(event: str, fun_name: str):
    """A context manager recording ``event`` around a block (nothing without listeners)."""
    return _Timed(event, fun_name) if active else _NOTHING
