"""Higher-order primitives: the primitives that hold jaxprs (``cond``, ``while``, ``scan``,
the generic ``reduce`` and ``reduce_window``, ``linear_solve``, the ``jit`` call, the calls of
``custom_jvp``/``custom_vjp``, ``checkpoint``, host callbacks) and the functions that bind
them. Their rules transform the jaxprs they hold, so they sit above the interpreters.

The package namespace gathers the control-flow functions, as ``xjax.lax`` shows them, for
the layers above (``lax.while_loop(...)``).
"""

from xjax._src.higher_order.associative_scan import associative_scan  # noqa: F401
from xjax._src.higher_order.cond import cond, cond_p, switch  # noqa: F401
from xjax._src.higher_order.linear_solve import custom_linear_solve, linear_solve_p  # noqa: F401
from xjax._src.higher_order.loops import fori_loop, while_loop, while_p  # noqa: F401
from xjax._src.higher_order.reduce import reduce_p  # noqa: F401
from xjax._src.higher_order.reduce_window import reduce_window_p  # noqa: F401
from xjax._src.higher_order.scan import scan, scan_p  # noqa: F401
