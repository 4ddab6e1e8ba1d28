"""``xjax.experimental.multihost_utils``: cross-process helpers, as in JAX.

xjax runs one process (``xjax.process_count() == 1``), so every function here has JAX's
one-process result: gathers stack or return the local value, broadcasts return it,
barriers return at once, and host-local arrays are already global.
"""

from xjax._src.experimental.multihost_utils import (  # noqa: F401
    ProcessFailureError as ProcessFailureError, assert_equal as assert_equal,
    broadcast_one_to_all as broadcast_one_to_all,
    global_array_to_host_local_array as global_array_to_host_local_array,
    host_local_array_to_global_array as host_local_array_to_global_array,
    live_devices as live_devices, process_allgather as process_allgather,
    reached_preemption_sync_point as reached_preemption_sync_point,
    sync_global_devices as sync_global_devices,
)
from xjax._src.experimental.multihost_utils import __all__ as __all__  # noqa: F401
