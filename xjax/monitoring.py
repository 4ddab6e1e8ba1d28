"""``xjax.monitoring``: named events for instrumentation, with JAX's API and event names.

The implementation and its full description: :mod:`xjax._src.core.monitoring`."""

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
