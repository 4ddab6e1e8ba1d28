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

from __future__ import annotations

from xjax._src.core.ad_util import UndefinedPrimal, Zero, is_undefined
from xjax._src.interpreters._rule_registry import RuleTable, with_tuple_operands
from xjax._src.interpreters.jvp import JVPTrace, JVPTracer  # noqa: F401
from xjax._src.lax.ad_rules import (add_tangents, jvp_by_parts, linear_jvp, instantiate as
                                    instantiate_zeros)
from xjax._src.lax.ad_rules import zeros_like_aval  # noqa: F401
from xjax._src.lax.elementwise import add_any_p

__all__ = ["JVPTrace", "JVPTracer", "UndefinedPrimal", "Zero", "add_jaxvals", "add_jaxvals_p",
           "add_tangents", "defbilinear", "defjvp", "defjvp2", "deflinear", "deflinear2",
           "get_primitive_transpose", "instantiate_zeros", "is_undefined_primal",
           "primitive_jvps", "primitive_transposes", "zeros_like_aval"]

primitive_jvps = RuleTable("jvp", "ad.primitive_jvps", adapt=with_tuple_operands)
primitive_transposes = RuleTable("transpose", "ad.primitive_transposes")


def is_undefined_primal(x) -> bool:
    """Whether ``x`` is a linear operand of a transpose rule (an :class:`UndefinedPrimal`)."""
    return is_undefined(x)


def get_primitive_transpose(primitive):
    """The transpose rule of ``primitive``.

    Raises
    ------
    NotImplementedError
        If it has none.
    """
    try:
        return primitive_transposes[primitive]
    except KeyError:
        raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                  f"'{primitive}' not implemented") from None


def _single_result(primitive, helper: str) -> None:
    if primitive.multiple_results:
        raise ValueError(f"ad.{helper} needs a primitive with one result; "
                         f"'{primitive.name}' has multiple_results=True")


def defjvp(primitive, *jvp_rules) -> None:
    """Give ``primitive`` a jvp from one rule per operand, ``rule(t, *primals, **params)``:
    that operand's contribution to the output tangent (None: not differentiable in it)."""
    _single_result(primitive, "defjvp")
    by_parts = [None if rule is None else _ignoring_ans(rule) for rule in jvp_rules]
    primitive_jvps[primitive] = jvp_by_parts(primitive, *by_parts)


def _ignoring_ans(rule):
    return lambda t, _ans, *primals, **params: rule(t, *primals, **params)


def defjvp2(primitive, *jvp_rules) -> None:
    """As :func:`defjvp` with rules ``rule(t, ans, *primals, **params)`` that also see the
    primal output ``ans``."""
    _single_result(primitive, "defjvp2")
    primitive_jvps[primitive] = jvp_by_parts(primitive, *jvp_rules)


def _zero_cotangents(operands) -> list:
    return [Zero(x.aval) if is_undefined(x) else None for x in operands]


def deflinear(primitive, transpose_rule) -> None:
    """Declare ``primitive`` linear in all its operands; ``transpose_rule(ct, **params)``
    returns the cotangents of the operands."""
    primitive_jvps[primitive] = linear_jvp(primitive)

    def transpose(ct, *operands, **params):
        if type(ct) is Zero:
            return _zero_cotangents(operands)
        return transpose_rule(ct, **params)
    primitive_transposes[primitive] = transpose


def deflinear2(primitive, transpose_rule) -> None:
    """As :func:`deflinear` with ``transpose_rule(ct, *operands, **params)``."""
    primitive_jvps[primitive] = linear_jvp(primitive)

    def transpose(ct, *operands, **params):
        if type(ct) is Zero:
            return _zero_cotangents(operands)
        return transpose_rule(ct, *operands, **params)
    primitive_transposes[primitive] = transpose


def defbilinear(primitive, lhs_rule, rhs_rule) -> None:
    """Declare ``primitive(x, y)`` linear in each operand separately; ``lhs_rule(ct, x, y,
    **params)`` transposes it in ``x`` (an UndefinedPrimal), ``rhs_rule`` in ``y``."""
    defjvp(primitive,
           lambda t, x, y, **params: primitive.bind(t, y, **params),
           lambda t, x, y, **params: primitive.bind(x, t, **params))

    def transpose(ct, x, y, **params):
        if is_undefined(x) == is_undefined(y):
            raise ValueError(f"transposing bilinear '{primitive.name}' needs exactly one "
                             "linear operand")
        if is_undefined(x):
            return (Zero(x.aval) if type(ct) is Zero else lhs_rule(ct, x, y, **params)), None
        return None, (Zero(y.aval) if type(ct) is Zero else rhs_rule(ct, x, y, **params))
    primitive_transposes[primitive] = transpose


def add_jaxvals(x, y):
    """The sum of two tangents (the ``add_any`` primitive)."""
    return add_tangents(x, y)


def __getattr__(name: str):
    if name == "add_jaxvals_p":
        return add_any_p
    raise AttributeError(f"module 'xjax.interpreters.ad' has no attribute '{name}'")

