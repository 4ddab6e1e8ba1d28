"""Structured control flow: ``cond``, ``switch``, ``while_loop``, ``fori_loop``, ``scan``,
``map``, ``associative_scan``; and ``reduce`` (its generic primitive holds a jaxpr).

These primitives hold jaxprs and their rules transform them, so they need the interpreters,
which ``xjax.lax`` may not import. They live here, above the interpreters, and importing this
package installs the public functions into the ``xjax.lax`` namespace (as the numpy layer
installs Array's methods).
"""

from xjax import lax as _lax
from xjax.control_flow.cond import cond, cond_p, switch  # noqa: F401
from xjax.control_flow.loops import fori_loop, while_loop, while_p  # noqa: F401
from xjax.control_flow.scan import scan, scan_p  # noqa: F401
from xjax.control_flow.map import map  # noqa: F401,A004
from xjax.control_flow.associative_scan import associative_scan  # noqa: F401
from xjax.control_flow.reduce_window import reduce_window_p  # noqa: F401
# bound as _reduce so that ``xjax.control_flow.reduce`` stays the module
from xjax.control_flow.reduce import reduce as _reduce, reduce_p  # noqa: F401
from xjax.control_flow.solves import custom_root  # noqa: F401
from xjax.control_flow.linear_solve import PUBLIC as _LINEAR_SOLVE_PUBLIC

_PUBLIC = {"cond": cond, "switch": switch, "while_loop": while_loop, "fori_loop": fori_loop,
           "scan": scan, "map": map, "associative_scan": associative_scan,
           "cond_p": cond_p, "while_p": while_p, "scan_p": scan_p,
           "reduce_window_p": reduce_window_p, "reduce": _reduce, "reduce_p": reduce_p,
           "custom_root": custom_root, **_LINEAR_SOLVE_PUBLIC}

for _name, _fun in _PUBLIC.items():
    setattr(_lax, _name, _fun)


def _install_numpy_functions():
    """The jnp functions JAX builds on control flow, where xjax.numpy has none of its own."""
    import xjax.numpy as jnp
    from xjax.control_flow.numpy_functions import FUNCTIONS
    for name, fun in FUNCTIONS.items():
        if not hasattr(jnp, name):
            setattr(jnp, name, fun)


_install_numpy_functions()
