"""Comparisons (``eq`` ... ``ge``, the total-order ``eq_to``/``le_to``/``lt_to``), ``select_n``
and ``clamp``."""

from __future__ import annotations

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.ad_util import Zero, get_aval, is_undefined, tangent_aval
from xjax._src.core.primitive import NONLINEAR, NOT_DIFFERENTIABLE, Primitive, compiled_when_large
from xjax._src.lax import sharding_rules
from xjax._src.lax.ad_rules import instantiate
from xjax._src.lax.batch_rules import batch_size, bdim_at_front, not_mapped
from xjax._src.lax.bitwise import bitwise_and
from xjax._src.lax.elementwise import _max_impl, _min_impl, add
from xjax._src.lax.naryop import (ANY, ORDERED, Emitter, batch_naryop, binary_wrapper,
                                  broadcast_args, broadcast_operand, check_same_dtypes,
                                  compare_type, naryop)
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import broadcast_in_dim, broadcast_to, full_like_shape
from xjax._src.lowering.stablehlo import aval_type

_BOOL = np.dtype(np.bool_)


def _to_bool(_):
    return _BOOL


def _compare_lower(direction: str, total_order: bool = False):
    def lower(ctx, x, y):
        dtype = ctx.avals_in[0].dtype
        kind = compare_type(dtype)
        if total_order and kind == "FLOAT":
            kind = "TOTALORDER"
        em = Emitter(ctx, ctx.avals_out[0].shape)
        return em.compare(*broadcast_args(ctx, (x, y)), direction, kind)

    return lower


def _comparison(name, accepted, impl, direction, doc, total_order=False):
    primitive = naryop(name, accepted, impl=impl, result_dtype=_to_bool,
                       lower=_compare_lower(direction, total_order), jvp=NOT_DIFFERENTIABLE,
                       batch=batch_naryop(name))
    return primitive, binary_wrapper(primitive, doc)


eq_p, eq = _comparison("eq", ANY, np.equal, "EQ", "Elementwise ``x == y`` (boolean result).")
ne_p, ne = _comparison("ne", ANY, np.not_equal, "NE", "Elementwise ``x != y``.")
lt_p, lt = _comparison("lt", ORDERED, np.less, "LT", "Elementwise ``x < y``.")
le_p, le = _comparison("le", ORDERED, np.less_equal, "LE", "Elementwise ``x <= y``.")
gt_p, gt = _comparison("gt", ORDERED, np.greater, "GT", "Elementwise ``x > y``.")
ge_p, ge = _comparison("ge", ORDERED, np.greater_equal, "GE", "Elementwise ``x >= y``.")

# -- IEEE total order: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN (sorting's order) --


def total_order_key(x):
    """Integers ordered as ``x`` is in IEEE 754's total order (floats); ``x`` otherwise."""
    if x.dtype.kind in "iub":
        return x
    if x.dtype.kind == "c":
        raise TypeError("total order keys are for real operands")
    signed = np.dtype(f"i{x.dtype.itemsize}")
    bits = np.asarray(x).view(signed)
    # negative floats order backwards: flip every bit but the sign
    return np.where(bits < 0, bits ^ np.iinfo(signed).max, bits)


def _total_order_compare(compare):
    def impl(x, y):
        if x.dtype.kind == "c":
            xr, yr = total_order_key(np.real(x)), total_order_key(np.real(y))
            xi, yi = total_order_key(np.imag(x)), total_order_key(np.imag(y))
            return np.where(xr == yr, compare(xi, yi), compare(xr, yr))
        return compare(total_order_key(x), total_order_key(y))

    return impl


eq_to_p = naryop("eq_to", ANY, impl=_total_order_compare(np.equal), result_dtype=_to_bool,
                 lower=_compare_lower("EQ", True), jvp=NOT_DIFFERENTIABLE,
                 batch=batch_naryop("eq_to"))
le_to_p = naryop("le_to", ORDERED, impl=_total_order_compare(np.less_equal),
                 result_dtype=_to_bool, lower=_compare_lower("LE", True),
                 jvp=NOT_DIFFERENTIABLE, batch=batch_naryop("le_to"))
lt_to_p = naryop("lt_to", ORDERED, impl=_total_order_compare(np.less), result_dtype=_to_bool,
                 lower=_compare_lower("LT", True), jvp=NOT_DIFFERENTIABLE,
                 batch=batch_naryop("lt_to"))

# -- select_n --


_select_avals: dict = {}


def _select_n_abstract_eval(which, *cases):
    key = (which, *cases)
    out = _select_avals.get(key)
    if out is None:
        out = _select_avals[key] = _select_n_aval(which, *cases)
    return out


def _select_n_aval(which, *cases):
    if not cases:
        raise TypeError("select must have at least one case")
    if any(c.shape != cases[0].shape for c in cases[1:]):
        raise TypeError("select cases must have the same shapes, got "
                        f"[{', '.join(str(c.shape) for c in cases)}].")
    if which.shape and which.shape != cases[0].shape:
        raise TypeError("select `which` must be scalar or have the same shape as cases, got "
                        f"`which` shape {which.shape} but case shape {cases[0].shape}.")
    check_same_dtypes("select", cases, tip_name="where")
    if which.dtype.kind not in "biu":
        raise TypeError(f"select `which` must be boolean or integer type, got "
                        f"{which.dtype.name}.")
    if which.dtype == _BOOL and len(cases) > 2:
        raise TypeError("select with boolean `which` cannot have > 2 cases.")
    weak = all(c.weak_type for c in cases)
    first = cases[0]
    return first if weak == first.weak_type else first.update(weak_type=weak)


# NumPy's where branches per element: ~3.7 ms on 1e6 random float32 where a bitwise
# blend takes ~0.3 ms, so large boolean selects blend (see _blend)
_BLEND_MIN_SIZE = 1 << 14
_BLEND_INT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return cases[0]
    if which.dtype == _BOOL:
        on_false, on_true = cases
        if (which.size >= _BLEND_MIN_SIZE and which.shape == on_true.shape
                and on_true.dtype.itemsize in _BLEND_INT):
            return _blend(which, on_true, on_false)
        return np.where(which, on_true, on_false)
    if which.ndim == 0:  # out-of-range indices clamp, as the lowering's binary search does
        return cases[int(np.clip(which, 0, len(cases) - 1))]
    if len(cases) == 2:
        return np.where(which < 1, cases[0], cases[1])
    return np.choose(which, cases, mode="clip")


def _blend(which, on_true, on_false):
    """``np.where(which, on_true, on_false)`` without branches: the bits of ``on_false``
    xor'ed with ``(on_true ^ on_false) & mask``, mask all ones where ``which``."""
    int_type = _BLEND_INT[on_true.dtype.itemsize]
    mask = which.view(np.int8).astype(int_type)
    np.negative(mask, out=mask)
    true_bits = np.ascontiguousarray(on_true).view(int_type)
    false_bits = np.ascontiguousarray(on_false).view(int_type)
    out = np.bitwise_xor(true_bits, false_bits)
    np.bitwise_and(out, mask, out=out)
    np.bitwise_xor(out, false_bits, out=out)
    return out.view(on_true.dtype)


def _select_n_lower(ctx, which, *cases):
    out_aval = ctx.avals_out[0]
    which_aval = ctx.avals_in[0]
    em = Emitter(ctx, out_aval.shape)
    which = broadcast_operand(ctx, which, which_aval, out_aval.shape)
    if len(cases) == 1:
        return cases[0]
    if which_aval.dtype == _BOOL:
        return em.select(which, cases[1], cases[0], out_aval.dtype)
    kind = compare_type(which_aval.dtype)

    def pick(offset, group):
        # binary search on ``which``: values below 0 take the first case, past the end the last
        if len(group) == 1:
            return group[0]
        mid = len(group) // 2
        below = em.compare(which, em.const(offset + mid, which_aval.dtype), "LT", kind)
        return em.select(below, pick(offset, group[:mid]), pick(offset + mid, group[mid:]),
                         out_aval.dtype)

    return pick(0, list(cases))


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n_p.bind(which, *cases)
    case_tangents = tangents[1:]
    if all(type(t) is Zero for t in case_tangents):
        return ans, Zero(tangent_aval(get_aval(ans)))
    # both branches are differentiated: NaN in an untaken branch's tangent stays there
    return ans, select_n_p.bind(which, *(instantiate(t) for t in case_tangents))


def _select_n_transpose(ct, which, *cases):
    """Each linear case gets the cotangent where ``which`` picks it (a select_n with that
    case's position holding ``ct``: out-of-range ``which`` clamps as in the primal)."""
    if type(ct) is Zero:
        return [None] + [Zero(c.aval) if is_undefined(c) else None for c in cases]
    zeros = full_like_shape(ct, 0)
    cts = [None]
    for i, case in enumerate(cases):
        if not is_undefined(case):
            cts.append(None)
            continue
        picks = [ct if j == i else zeros for j in range(len(cases))]
        cts.append(select_n_p.bind(which, *picks))
    return cts


def _rank(x) -> int:
    return len(get_aval(x).shape)


def _select_n_batch(args, dims):
    which, *cases = args
    which_dim, *case_dims = dims
    case_rank = _rank(cases[0]) - (case_dims[0] is not not_mapped)
    which_rank = _rank(which) - (which_dim is not not_mapped)
    if all(d == which_dim for d in case_dims) and which_rank == case_rank:
        return select_n_p.bind(which, *cases), which_dim  # all mapped alike
    if which_dim is not_mapped and which_rank == 0 and len(set(case_dims)) == 1:
        return select_n_p.bind(which, *cases), case_dims[0]  # a scalar which
    size = batch_size(args, dims)
    cases = [bdim_at_front(c, d, size) for c, d in zip(cases, case_dims, strict=True)]
    if which_dim is not not_mapped or which_rank:
        which = bdim_at_front(which, which_dim, size)
        if which_rank < case_rank:  # a batch of scalars choosing among arrays
            which = broadcast_in_dim(which, get_aval(cases[0]).shape, (0,))
    return select_n_p.bind(which, *cases), 0


select_n_p = Primitive("select_n", abstract_eval=_select_n_abstract_eval, impl=_select_n_impl,
                       lower=_select_n_lower, jvp=_select_n_jvp, transpose=_select_n_transpose,
                       batch=_select_n_batch, sharding_rule=sharding_rules.elementwise("select_n"))
compiled_when_large.add(select_n_p)


def select_n(which, *cases):
    """Elementwise choice among ``cases`` by ``which``.

    Parameters
    ----------
    which : array_like
        Boolean (two cases at most: False picks ``cases[0]``) or integer (an index into
        ``cases``; out-of-range values clamp), scalar or of the cases' shape.
    *cases : array_like
        Arrays of one shape and dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> lax.select_n(np.array([0, 1, 2], np.int32), np.zeros(3, np.float32),
    ...              np.ones(3, np.float32), np.full(3, 2, np.float32))
    Array([0., 1., 2.], dtype=float32)
    """
    if not cases:
        raise ValueError("select_n() must have at least one case")
    return select_n_p.bind(to_operand(which), *(to_operand(c) for c in cases))


def select(pred, on_true, on_false):
    """Elementwise ``on_true if pred else on_false`` (``select_n(pred, on_false, on_true)``)."""
    return select_n(pred, on_false, on_true)


# -- clamp --


def _clamp_abstract_eval(min_aval, operand, max_aval):
    for label, bound in (("min", min_aval), ("max", max_aval)):
        if bound.shape and bound.shape != operand.shape:
            raise TypeError(f"clamp requires {label}.shape == operand.shape or {label}.shape "
                            f"== (), got {label}.shape={bound.shape}, "
                            f"operand.shape={operand.shape}.")
    avals = (min_aval, operand, max_aval)
    check_same_dtypes("clamp", avals)
    weak = min_aval.weak_type and operand.weak_type and max_aval.weak_type
    return operand if weak == operand.weak_type else operand.update(weak_type=weak)


def _clamp_impl(low, x, high):
    if x.dtype.kind == "c":
        # XLA compares complex clamp operands by real part: low if low >= x, then high unless
        # that result <= high (so a NaN low is ignored, and NaN x or high gives high)
        above_low = np.where(np.real(low) >= np.real(x), low, x)
        return np.where(np.real(above_low) <= np.real(high), above_low, high)
    if x.dtype.kind == "f" or x.dtype == dtypes.bfloat16:
        return _min_impl(_max_impl(x, low), high)  # XLA: min(max(x, low), high), NaN-propagating
    return np.minimum(np.maximum(x, low), high)


def _clamp_lower(ctx, low, x, high):
    out = ctx.avals_out[0]
    low, x, high = broadcast_args(ctx, (low, x, high))
    return ctx.builder.op1("stablehlo.clamp", [low, x, high], aval_type(out))


def _where_else_zero(pred, t, x):
    """``t`` (broadcast to ``x``'s shape) where ``pred``, else 0."""
    shape = get_aval(x).shape
    return select(pred, broadcast_to(t, shape), full_like_shape(t, 0, shape))


def _clamp_jvp(primals, tangents):
    """The derivative flows to whichever of ``low``, ``x``, ``high`` the result is (``x``
    only strictly inside the bounds; ``low`` only when below ``high``), as in JAX."""
    low, x, high = primals
    ans = clamp_p.bind(low, x, high)
    t_low, t_x, t_high = tangents
    out = Zero(tangent_aval(get_aval(ans)))
    shares = []
    if type(t_low) is not Zero:
        shares.append(_where_else_zero(bitwise_and(gt(low, x), lt(low, high)), t_low, x))
    if type(t_x) is not Zero:
        shares.append(_where_else_zero(bitwise_and(gt(x, low), lt(x, high)), t_x, x))
    if type(t_high) is not Zero:
        shares.append(_where_else_zero(lt(high, x), t_high, x))
    if shares:
        out = shares[0]
        for share in shares[1:]:
            out = add(out, share)
    return ans, out


def _clamp_batch(args, dims):
    low, x, high = args
    low_dim, x_dim, high_dim = dims
    shapes = {get_aval(a).shape for a in args}
    if low_dim == x_dim == high_dim and len(shapes) == 1:
        return clamp_p.bind(low, x, high), x_dim  # all mapped alike
    if low_dim is high_dim is not_mapped and not _rank(low) and not _rank(high):
        return clamp_p.bind(low, x, high), x_dim  # scalar bounds
    size = batch_size(args, dims)
    x_rank = _rank(x) - (x_dim is not not_mapped)
    x = bdim_at_front(x, x_dim, size)
    bounds = []
    for bound, dim in ((low, low_dim), (high, high_dim)):
        if dim is not not_mapped or _rank(bound):
            bound_rank = _rank(bound) - (dim is not not_mapped)
            bound = bdim_at_front(bound, dim, size)
            if bound_rank < x_rank:  # a batch of scalar bounds
                bound = broadcast_in_dim(bound, get_aval(x).shape, (0,))
        bounds.append(bound)
    return clamp_p.bind(bounds[0], x, bounds[1]), 0


clamp_p = Primitive("clamp", abstract_eval=_clamp_abstract_eval, impl=_clamp_impl,
                    lower=_clamp_lower, jvp=_clamp_jvp, transpose=NONLINEAR,
                    batch=_clamp_batch)


def clamp(min, x, max):
    """Elementwise ``min(max(x, min), max)``; ``min`` and ``max`` are scalars or of ``x``'s
    shape.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.clamp(0.0, 2.5, 1.0)
    Array(1., dtype=float32, weak_type=True)
    """
    return clamp_p.bind(to_operand(min), to_operand(x), to_operand(max))


__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "select_n", "select", "clamp",
           "eq_p", "ne_p", "lt_p", "le_p", "gt_p", "ge_p", "eq_to_p", "le_to_p", "lt_to_p",
           "select_n_p", "clamp_p"]
