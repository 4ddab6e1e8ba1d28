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

from xjax._src.core.monitoring import (  # noqa: F401
    clear_event_listeners as clear_event_listeners, record_event as record_event,
    record_event_duration_secs as record_event_duration_secs,
    record_event_time_span as record_event_time_span, record_scalar as record_scalar,
    register_event_duration_secs_listener as register_event_duration_secs_listener,
    register_event_listener as register_event_listener,
    register_event_time_span_listener as register_event_time_span_listener,
    register_scalar_listener as register_scalar_listener,
    unregister_event_duration_listener as unregister_event_duration_listener,
    unregister_event_listener as unregister_event_listener,
    unregister_event_time_span_listener as unregister_event_time_span_listener,
    unregister_scalar_listener as unregister_scalar_listener,
)
from xjax._src.core.monitoring import __all__ as __all__  # noqa: F401
