"""``xjax.interpreters.xla``: what remains public of ``jax.interpreters.xla``.

``apply_primitive`` is the eager rule of primitives that have a lowering but no NumPy
implementation, as libraries write ``p.def_impl(functools.partial(xla.apply_primitive, p))``.
"""

from __future__ import annotations

from xjax._src.core.array import Array
from xjax._src.lax.operands import canonicalize_dtype_handlers  # noqa: F401
from xjax._src.interpreters.eval import concrete_operand, run_primitive_with_xla

__all__ = ["apply_primitive", "canonicalize_dtype_handlers"]


def apply_primitive(primitive, *args, **params):
    """Run ``primitive`` on concrete ``args`` by compiling it alone with XLA (cached by
    primitive, params and shapes). Returns an Array, or a list with ``multiple_results``.

    Examples
    --------
    >>> import functools, xjax
    >>> from xjax.core import ShapedArray
    >>> from xjax.extend.core import Primitive
    >>> from xjax.interpreters import mlir, xla
    >>> halve_p = Primitive("halve")
    >>> _ = halve_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    >>> _ = halve_p.def_impl(functools.partial(xla.apply_primitive, halve_p))
    >>> _ = mlir.register_lowering(halve_p, mlir.lower_fun(lambda x: x / 2, False))
    >>> halve_p.bind(xjax.numpy.arange(3.0))
    Array([0. , 0.5, 1. ], dtype=float32)
    """
    values, avals = [], []
    for arg in args:
        value, aval = concrete_operand(arg)
        values.append(value)
        avals.append(aval)
    out_avals = primitive.abstract_eval(*avals, **params)
    outs = run_primitive_with_xla(primitive, values, avals, params)
    if primitive.multiple_results:
        return [Array._from_numpy(o, a) for o, a in zip(outs, out_avals, strict=True)]
    return Array._from_numpy(outs[0], out_avals)
