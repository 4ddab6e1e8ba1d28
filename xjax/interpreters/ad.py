"""``xjax.interpreters.ad``: differentiation rules of primitives, as ``jax.interpreters.ad``.

A jvp rule is ``rule(primals, tangents, **params) -> (primal_out, tangent_out)``; a tangent
may be the symbolic :class:`Zero`. A transpose rule is ``rule(ct, *operands, **params)``
returning one cotangent (or None) per operand; the linear operands are
:class:`UndefinedPrimal`. Both are xjax's own conventions, so ``primitive_jvps[p] = rule``
and ``primitive_transposes[p] = rule`` install the rule on ``p`` as it is.

>>> import numpy as np, xjax
>>> from xjax.core import ShapedArray
>>> from xjax.extend.core import Primitive
>>> from xjax.interpreters import ad
>>> scale_p = Primitive("scale")
>>> _ = scale_p.def_impl(lambda x, *, k: np.multiply(x, k))
>>> _ = scale_p.def_abstract_eval(lambda x, *, k: ShapedArray(x.shape, x.dtype))
>>> ad.deflinear2(scale_p, lambda ct, x, *, k: [scale_p.bind(ct, k=k)])
>>> xjax.grad(lambda x: scale_p.bind(x, k=3.0))(1.0)
Array(3., dtype=float32)
"""

from xjax._src.interpreters.jvp import (  # noqa: F401
    JVPTrace as JVPTrace, JVPTracer as JVPTracer,
)
from xjax._src.core.ad_util import (  # noqa: F401
    UndefinedPrimal as UndefinedPrimal, Zero as Zero,
)
from xjax._src.jax_adapters.interpreters_ad import (  # noqa: F401
    add_jaxvals as add_jaxvals, add_jaxvals_p as add_jaxvals_p, defbilinear as defbilinear,
    defjvp as defjvp, defjvp2 as defjvp2, deflinear as deflinear, deflinear2 as deflinear2,
    get_primitive_transpose as get_primitive_transpose, instantiate_zeros as instantiate_zeros,
    is_undefined_primal as is_undefined_primal, primitive_jvps as primitive_jvps,
    primitive_transposes as primitive_transposes,
)
from xjax._src.lax.ad_rules import (  # noqa: F401
    add_tangents as add_tangents, zeros_like_aval as zeros_like_aval,
)
from xjax._src.jax_adapters.interpreters_ad import __getattr__ as __getattr__  # noqa: F401
from xjax._src.jax_adapters.interpreters_ad import __all__ as __all__  # noqa: F401
