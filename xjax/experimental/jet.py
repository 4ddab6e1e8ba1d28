"""``xjax.experimental.jet``: Taylor-mode automatic differentiation, as JAX's ``jet``.

``jet(fun, primals, series)`` pushes a truncated Taylor polynomial through ``fun`` in one
pass: from the primal point and K derivative coefficients of a curve through it, it
returns ``fun``'s value and K derivative coefficients of the image curve (what K nested
``jvp`` would give, at O(K^2) cost instead of O(2^K)).

xjax implements it as an interpreter over the jaxpr of ``fun`` (traced with
``xjax.make_jaxpr``): every equation's output series is computed from its inputs' by the
rule for its primitive (``_jet_rules``); equations whose inputs carry no series are just
evaluated. Nested ``jit``, ``checkpoint``, ``custom_jvp`` and ``custom_vjp`` calls are
interpreted inline (custom derivative rules are ignored, as in JAX). Because rules bind
primitives under the current trace, ``jet`` composes with ``jit``, ``vmap`` and ``grad``.
"""

from xjax._src.experimental.jet import (  # noqa: F401
    jet as jet, jet2 as jet2,
)
from xjax._src.experimental.jet import __all__ as __all__  # noqa: F401
