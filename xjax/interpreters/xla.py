"""``xjax.interpreters.xla``: what remains public of ``jax.interpreters.xla``.

``apply_primitive`` is the eager rule of primitives that have a lowering but no NumPy
implementation, as libraries write ``p.def_impl(functools.partial(xla.apply_primitive, p))``.
"""

from xjax._src.jax_adapters.interpreters_xla import (  # noqa: F401
    apply_primitive as apply_primitive,
)
from xjax._src.lax.operands import (  # noqa: F401
    canonicalize_dtype_handlers as canonicalize_dtype_handlers,
)
from xjax._src.jax_adapters.interpreters_xla import __all__ as __all__  # noqa: F401
