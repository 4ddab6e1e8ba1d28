"""``xjax.distributed``: the multi-process runtime's entry points, as ``jax.distributed``.

xjax runs in one process. ``initialize`` accepts what JAX accepts for a job of one process
(``num_processes=1, process_id=0`` and a coordinator address), validates its arguments as
JAX does, and records that the system is up; there is no coordinator service to start, as
nothing else will connect. A job of several processes raises NotImplementedError.

Unlike JAX, ``initialize`` may come after computations: xjax's backend does not depend on a
distributed client, so the order does not matter.

>>> import xjax
>>> xjax.distributed.initialize("localhost:1234", num_processes=1, process_id=0)
>>> xjax.distributed.is_initialized()
True
>>> xjax.distributed.shutdown()
>>> xjax.distributed.is_initialized()
False
"""

from xjax._src.api.distributed import (  # noqa: F401
    global_state as global_state, initialize as initialize, is_initialized as is_initialized,
    shutdown as shutdown,
)
from xjax._src.api.distributed import __all__ as __all__  # noqa: F401
