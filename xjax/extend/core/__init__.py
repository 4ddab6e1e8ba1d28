"""``xjax.extend.core``: defining primitives and reading jaxprs, as ``jax.extend.core``.

>>> import numpy as np
>>> import xjax
>>> from xjax.extend.core import Primitive
>>> from xjax.core import ShapedArray
>>> square_p = Primitive("square_it")
>>> _ = square_p.def_impl(lambda x: np.square(x))
>>> _ = square_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
>>> print(xjax.make_jaxpr(square_p.bind)(1.0))
{ lambda ; a:f32[]. let b:f32[] = square_it a in (b,) }
"""

from xjax._src.core.jaxpr import (  # noqa: F401
    ClosedJaxpr as ClosedJaxpr, DropVar as DropVar, Jaxpr as Jaxpr, JaxprEqn as JaxprEqn,
    Literal as Literal, Var as Var, check_jaxpr as check_jaxpr, eval_jaxpr as eval_jaxpr,
)
from xjax._src.interpreters.staging import (  # noqa: F401
    DebugInfo as DebugInfo,
)
from xjax._src.jax_adapters.extend._primitive import (  # noqa: F401
    Primitive as Primitive,
)
from xjax._src.core.avals import (  # noqa: F401
    ShapedArray as ShapedArray,
)
from xjax._src.jax_adapters.extend.core import (  # noqa: F401
    jaxpr_as_fun as jaxpr_as_fun, mapped_aval as mapped_aval, new_jaxpr_eqn as new_jaxpr_eqn,
    primal_dtype_to_tangent_dtype as primal_dtype_to_tangent_dtype,
    unmapped_aval as unmapped_aval,
)
from xjax.extend.core import primitives as primitives  # noqa: F401
from xjax._src.jax_adapters.extend.core import __all__ as __all__  # noqa: F401
from xjax._src.core.errors import JaxprTypeError as JaxprTypeError  # noqa: F401
from xjax._src.jax_adapters.extend.core.tracing import (  # noqa: F401
    Effect as Effect, Effects as Effects, concrete_or_error as concrete_or_error,
    find_top_trace as find_top_trace, get_opaque_trace_state as get_opaque_trace_state,
    jaxprs_in_params as jaxprs_in_params, no_effects as no_effects,
    set_current_trace as set_current_trace, subjaxprs as subjaxprs,
    take_current_trace as take_current_trace, valid_jaxtype as valid_jaxtype,
)
