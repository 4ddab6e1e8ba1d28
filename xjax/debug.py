"""``xjax.debug``: printing, logging and callbacks for debugging, eagerly and inside ``jit``.

``print``, ``log`` and ``callback`` go through the ``debug_callback`` primitive
(xjax/callback.py): eagerly it calls at once; under ``jit`` it is a host callback from the
compiled program (an XLA FFI custom call), so values print when the program runs, once per
call; under ``vmap`` once per batch element. NumPy's print options in effect where ``print``
or ``log`` is called are used to format the values, as in JAX.

``DebugEffect`` and ``OrderedDebugEffect`` are JAX's effect types, for code that names
them; xjax's jaxprs do not carry effect sets (side-effecting callbacks are ordered by
tokens when lowered), so nothing in xjax holds instances of them.
"""

from xjax._src.api.debug import (  # noqa: F401
    DebugEffect as DebugEffect, OrderedDebugEffect as OrderedDebugEffect,
    annotations as annotations, breakpoint as breakpoint, callback as callback,
    debug_effect as debug_effect, inspect_array_sharding as inspect_array_sharding, log as log,
    logger as logger, ordered_debug_effect as ordered_debug_effect, print as print,
    visualize_array_sharding as visualize_array_sharding,
    visualize_sharding as visualize_sharding,
)
