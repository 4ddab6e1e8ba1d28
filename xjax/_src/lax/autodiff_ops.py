"""Primitives that exist for differentiation: ``stop_gradient``."""

from __future__ import annotations

from xjax._src.core.primitive import Absent, Primitive
from xjax._src.lax import sharding_rules
from xjax._src.lax.operands import to_operand
from xjax._src.core.ad_util import Zero, get_aval, tangent_aval
from xjax._src.core.pytree import tree_map


def _identity_abstract_eval(aval):
    return aval


def _stop_gradient_jvp(primals, tangents):
    (x,) = primals
    return stop_gradient_p.bind(x), Zero(tangent_aval(get_aval(x)))


stop_gradient_p = Primitive(
    "stop_gradient",
    abstract_eval=_identity_abstract_eval,
    impl=lambda x: x,
    lower=lambda ctx, x: x,
    jvp=_stop_gradient_jvp,
    transpose=Absent("its jvp is zero, so it never appears in a linear jaxpr"),
    batch=lambda args, dims: (stop_gradient_p.bind(*args), dims[0]),  # the identity
    sharding_rule=sharding_rules.same_as_operand,
)


def stop_gradient(x):
    """The identity, with a zero derivative: gradients do not flow through ``x``.

    Examples
    --------
    >>> import xjax
    >>> xjax.grad(lambda x: x * xjax.lax.stop_gradient(x))(3.0)
    Array(3., dtype=float32, weak_type=True)
    """
    return tree_map(lambda leaf: stop_gradient_p.bind(to_operand(leaf)), x)


__all__ = ["stop_gradient", "stop_gradient_p"]
