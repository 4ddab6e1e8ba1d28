"""``xjax.api_util``: helpers for writing transformations, as ``jax.api_util``.

Several of JAX's helpers here transform a ``linear_util.WrappedFun``: a function with a
stack of transformations and their auxiliary outputs (``flatten_fun`` records the output
tree). xjax's transformations do not use one, so this module carries a small equivalent,
:class:`WrappedFun`, with the calling conventions the helpers need: ``call_wrapped`` runs it,
the auxiliary output comes back as a thunk that is readable once the function has run.
The helpers also accept a plain callable where JAX wants a ``WrappedFun`` (it is wrapped
with :func:`wrap_init`).

>>> import xjax
>>> from xjax import api_util, tree_util
>>> args = ((1.0, 2.0), {"scale": 3.0})
>>> flat, in_tree = tree_util.tree_flatten(args)
>>> flat_fun, out_tree = api_util.flatten_fun(lambda a, b, scale: (a * scale, b), in_tree)
>>> flat_fun.call_wrapped(*flat)
[3.0, 2.0]
>>> out_tree()
PyTreeDef((*, *))
"""

from xjax._src.transformations.api_util import (  # noqa: F401
    StoreException as StoreException, argnums_partial as argnums_partial,
    debug_info as debug_info, donation_vector as donation_vector, flatten_axes as flatten_axes,
    flatten_fun as flatten_fun, flatten_fun_nokwargs as flatten_fun_nokwargs,
    rebase_donate_argnums as rebase_donate_argnums, safe_map as safe_map,
    wrap_init as wrap_init,
)
from xjax._src.transformations.jit import (  # noqa: F401
    shaped_abstractify as shaped_abstractify,
)
from xjax._src.transformations.api_util import __all__ as __all__  # noqa: F401
