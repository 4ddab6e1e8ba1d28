"""Helpers of the structural families' derivative rules (shape, slicing, gather/scatter,
reductions, dot, convolution): rules given to ``Primitive`` before the primitive exists, and
jvp rules of primitives linear in some operands."""

from __future__ import annotations

from xjax._src.core.primitive import registry
from xjax._src.lax.ad_rules import Zero, get_aval, instantiate, is_undefined, tangent_aval


def late_rule(factory, name: str):
    """The rule ``factory(primitive)`` for the primitive registered as ``name``, built on
    first use: a rule is given to ``Primitive`` before the primitive exists."""
    rule = None

    def call(*args, **params):
        nonlocal rule
        if rule is None:
            rule = factory(registry[name])
        return rule(*args, **params)

    return call


def zero_tangents(primitive, ans):
    """Symbolic zero tangents for the outputs ``ans`` of ``primitive``."""
    if primitive.multiple_results:
        return [Zero(tangent_aval(get_aval(a))) for a in ans]
    return Zero(tangent_aval(get_aval(ans)))


def linear_jvp_of(name: str, linear=None):
    """The jvp rule of the primitive ``name``, linear jointly in the operands at positions
    ``linear`` (default: all) and independent of the others (integer indices, passed as
    they are): it applies the primitive to the tangents."""

    def jvp(primals, tangents, **params):
        primitive = registry[name]
        ans = primitive.bind(*primals, **params)
        positions = range(len(primals)) if linear is None else linear
        if all(type(tangents[i]) is Zero for i in positions):
            return ans, zero_tangents(primitive, ans)
        args = list(primals)
        for i in positions:
            args[i] = instantiate(tangents[i])
        return ans, primitive.bind(*args, **params)

    return jvp


def operand_aval(x):
    """The aval of a transpose rule's operand, defined or not."""
    return x.aval if is_undefined(x) else get_aval(x)
