"""Building blocks of jvp and transpose rules (DESIGN.md §4-5), used by every primitive
family. Rules are data: interpreters call them; nothing here imports an interpreter.

jvp rule: ``jvp(primals, tangents, **params) -> (primal_out, tangent_out)``; a tangent may
be ``Zero``. It runs with the parent trace current, so it computes with ordinary lax calls.

transpose rule: ``transpose(ct, *operands, **params) -> [ct per operand]``; the linear
operands are ``UndefinedPrimal``s, the others known values; None for operands that are not
linear. ``ct`` may be ``Zero`` for primitives with several results.

The rules use shape, elementwise and reduce ops, which import this module while they define
their primitives: those imports are function-local.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import (UndefinedPrimal, Zero, get_aval, is_undefined,  # noqa: F401
                               tangent_aval)


def zeros_like_aval(aval):
    """An array of zeros of ``aval`` (a broadcast, so staging records a small equation),
    weak when ``aval`` is: as in JAX, the zero tangent or cotangent of a Python scalar is.
    Zeros of ``float0`` are a NumPy array, as in JAX, where no device array has that
    dtype: it supports no operation, and NumPy's comparisons and copies work on it."""
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    from xjax._src.lax import shape  # shape imports this module
    return shape.full(aval.shape, shape._convert_scalar(0, aval.dtype, aval.weak_type))


def instantiate(tangent):
    """Replace a symbolic zero by zeros."""
    if type(tangent) is Zero:
        return zeros_like_aval(tangent.aval)
    return tangent


def add_tangents(x, y):
    """Sum of two tangents, either of which may be Zero."""
    if type(x) is Zero:
        return y
    if type(y) is Zero:
        return x
    from xjax._src.lax.elementwise import add_any_p  # elementwise imports this module
    return add_any_p.bind(x, y)


def jvp_by_parts(primitive, *rules):
    """A jvp rule from one rule per operand, ``rule(t, ans, *primals, **params)`` giving that
    operand's contribution to the output tangent (None: not differentiable in it).
    Contributions are summed; Zero tangents are skipped."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        total = Zero(tangent_aval(get_aval(ans)))
        for rule, t in zip(rules, tangents, strict=True):
            if type(t) is Zero or rule is None:
                continue
            total = add_tangents(total, rule(t, ans, *primals, **params))
        return ans, total

    return jvp


def linear_jvp(primitive):
    """The jvp rule of a primitive linear in all its operands: apply it to the tangents."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        if all(type(t) is Zero for t in tangents):
            if primitive.multiple_results:
                return ans, [Zero(tangent_aval(get_aval(a))) for a in ans]
            return ans, Zero(tangent_aval(get_aval(ans)))
        return ans, primitive.bind(*[instantiate(t) for t in tangents], **params)

    return jvp


def zero_jvp(primitive):
    """The jvp rule of a primitive without derivative (integer or boolean outputs, or
    piecewise-constant functions such as floor): the tangent is zero."""

    def jvp(primals, tangents, **params):
        ans = primitive.bind(*primals, **params)
        if primitive.multiple_results:
            return ans, [Zero(tangent_aval(get_aval(a))) for a in ans]
        return ans, Zero(tangent_aval(get_aval(ans)))

    return jvp


def transpose_by_parts(*rules):
    """A transpose rule from one rule per operand, ``rule(ct, *operands, **params)``,
    applied to the operands that are linear (undefined)."""

    def transpose(ct, *operands, **params):
        if type(ct) is Zero:
            return [Zero(o.aval) if is_undefined(o) else None for o in operands]
        return [rule(ct, *operands, **params) if is_undefined(o) and rule is not None else None
                for rule, o in zip(rules, operands, strict=True)]

    return transpose


def unbroadcast(ct, aval):
    """Sum ``ct`` down to ``aval``'s shape, undoing the implicit broadcasting of lax
    elementwise ops (rank-0 operands and size-1 dimensions)."""
    from xjax._src.lax.reduce import reduce_sum  # reduce imports this module
    from xjax._src.lax.shape import reshape  # shape imports this module
    ct_shape = get_aval(ct).shape
    if tuple(ct_shape) == tuple(aval.shape):
        return ct
    if aval.shape == ():
        return reduce_sum(ct, tuple(range(len(ct_shape))))
    axes = tuple(i for i, (c, a) in enumerate(zip(ct_shape, aval.shape, strict=True))
                 if a == 1 and c != 1)
    return reshape(reduce_sum(ct, axes), aval.shape)
