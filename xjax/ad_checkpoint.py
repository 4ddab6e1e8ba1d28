"""Rematerialisation helpers (``jax.ad_checkpoint``): naming values for checkpoint policies,
the policies themselves, and a report of what a function's ``vjp`` saves.

``checkpoint`` and ``remat`` are no longer here (removed in JAX 0.10.0): use
``xjax.checkpoint`` / ``xjax.remat``.
"""

from xjax._src.interpreters.partial_eval import (  # noqa: F401
    Offloadable as Offloadable, Recompute as Recompute, Saveable as Saveable,
)
from xjax._src.transformations.checkpoint import (  # noqa: F401
    checkpoint_name as checkpoint_name, print_saved_residuals as print_saved_residuals,
)
from xjax._src.transformations.custom_derivatives import (  # noqa: F401
    checkpoint_policies as checkpoint_policies,
)
from xjax._src.transformations.checkpoint import __getattr__ as __getattr__  # noqa: F401
from xjax._src.transformations.checkpoint import __all__ as __all__  # noqa: F401
