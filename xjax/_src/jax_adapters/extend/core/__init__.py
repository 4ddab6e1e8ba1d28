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

from __future__ import annotations

from xjax._src.core.avals import ShapedArray
from xjax._src.core.jaxpr import (ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, Var,  # noqa: F401
                             check_jaxpr, eval_jaxpr)
from xjax._src.core.trace import Trace, Tracer  # noqa: F401
from xjax._src.jax_adapters.extend._primitive import Primitive
from xjax._src.jax_adapters.extend.core import primitives  # noqa: F401
from xjax._src.interpreters.staging import DebugInfo  # noqa: F401
from xjax._src.core.ad_util import tangent_aval
from xjax._src.core.errors import JaxprTypeError  # noqa: F401
from xjax._src.jax_adapters.extend.core.tracing import (  # noqa: F401
    Effect, Effects, OpaqueTraceState, concrete_or_error, find_top_trace, get_opaque_trace_state,
    jaxprs_in_params, no_effects, set_current_trace, subjaxprs, take_current_trace,
    valid_jaxtype)

__all__ = ["ClosedJaxpr", "DebugInfo", "DropVar", "Effect", "Effects", "Jaxpr", "JaxprEqn",
           "JaxprTypeError", "Literal", "Primitive", "ShapedArray", "Var", "check_jaxpr",
           "concrete_or_error", "eval_jaxpr", "find_top_trace", "get_opaque_trace_state",
           "jaxpr_as_fun", "jaxprs_in_params", "mapped_aval", "new_jaxpr_eqn", "no_effects",
           "primal_dtype_to_tangent_dtype", "primitives", "set_current_trace", "subjaxprs",
           "take_current_trace", "unmapped_aval", "valid_jaxtype"]


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr):
    """A function evaluating ``closed_jaxpr`` on its arguments (a list of outputs).

    Examples
    --------
    >>> import xjax
    >>> from xjax.extend.core import jaxpr_as_fun
    >>> closed = xjax.make_jaxpr(lambda x: x * 2.0)(1.0)
    >>> jaxpr_as_fun(closed)(3.0)
    [Array(6., dtype=float32, weak_type=True)]
    """
    def fun(*args):
        return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)
    return fun


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=None, source_info=None,
                  ctx=None):
    """A jaxpr equation applying ``primitive`` (JAX's argument order). xjax equations
    carry no effects; a non-empty ``effects`` raises NotImplementedError."""
    if effects:
        raise NotImplementedError("xjax jaxpr equations carry no effects")
    return JaxprEqn(primitive, list(invars), list(outvars), dict(params), source_info)


def mapped_aval(size: int, axis, aval: ShapedArray) -> ShapedArray:
    """``aval`` without its mapped axis ``axis`` (of length ``size``); ``axis=None`` keeps it."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    if not -len(shape) <= axis < len(shape) or shape[axis] != size:
        raise ValueError(f"mapped axis {axis} of size {size} does not fit shape {aval.shape}")
    del shape[axis]
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def unmapped_aval(size: int, axis, aval: ShapedArray) -> ShapedArray:
    """``aval`` with a new axis of length ``size`` at ``axis``; ``axis=None`` keeps it."""
    if axis is None:
        return aval
    shape = list(aval.shape)
    shape.insert(axis, size)
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def primal_dtype_to_tangent_dtype(dtype):
    """The dtype of tangents of ``dtype``: itself when inexact, else ``float0``."""
    return tangent_aval(ShapedArray((), dtype)).dtype
