"""Cumulative reductions along one axis: cumsum, cumprod, cummax, cummin, cumlogsumexp.

Lowered to ``stablehlo.reduce_window`` with a window spanning the whole axis and padding
``n - 1`` on the leading side (trailing for ``reverse``): simple and exact; the O(n^2)
work is fine for the sizes this lowering meets (JAX picks an associative scan on TPU).
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import NONLINEAR, Primitive, registry
from xjax._src.lax import sharding_rules
from xjax._src.lax.ad_helpers import linear_jvp_of
from xjax._src.lax.ad_rules import Zero, transpose_by_parts
from xjax._src.lax.batch_rules import batch_at_front, shifted_axis
from xjax._src.lax.compare import eq, ne, select_n
from xjax._src.lax.concat_pad import concatenate, pad
from xjax._src.lax.elementwise import abs as abs_op
from xjax._src.lax.elementwise import add, div, mul, neg, sub
from xjax._src.lax.elementwise import max as max_op
from xjax._src.lax.elementwise import min as min_op
from xjax._src.lax.naryop import combiner_body
from xjax._src.lax.reduce import accumulation_dtype, max_identity, min_identity
from xjax._src.lax.shape import as_operand, full_like, rev, scalar_constant
from xjax._src.lax.slicing import slice_in_dim
from xjax._src.lax.transcendental import exp, log1p
from xjax._src.lowering.stablehlo import aval_type, i64_array, tensor_type


def _cumulative_abstract_eval(name, floats_only, operand, axis, reverse):
    if floats_only and not dtypes.is_float(operand.dtype):
        raise TypeError(f"{name} does not accept dtype {operand.dtype.name}. Accepted dtypes "
                        "are subtypes of floating.")
    if operand.dtype == np.bool_:
        raise TypeError(f"{name} does not accept dtype bool. Accepted dtypes are subtypes of "
                        "number.")
    if axis < 0:
        raise ValueError("XLA operations do not allow negative axes")
    if axis >= operand.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of shape {operand.shape}")
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _accumulate(np_accumulate, wide):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        dtype = x.dtype
        if wide:  # accumulate at double precision, round once (see accumulation_dtype)
            x = x.astype(accumulation_dtype(dtype))
        if reverse:
            x = np.flip(x, axis)
        out = np_accumulate(x, axis)
        if reverse:
            out = np.flip(out, axis)
        return np.asarray(out).astype(dtype, copy=False)
    return impl


def _logaddexp_region(fb, args, dtype):
    """log(exp(a) + exp(b)) as JAX computes it: max + log1p(exp(-|a - b|)), and a + b where
    a - b is NaN (equal infinities, or a NaN input)."""
    a, c = args
    t = tensor_type((), dtype)
    amax = fb.op1("stablehlo.maximum", [a, c], t)
    delta = fb.op1("stablehlo.subtract", [a, c], t)
    is_nan = fb.op1("stablehlo.compare", [delta, delta], tensor_type((), np.bool_),
                    {"comparison_direction": "#stablehlo<comparison_direction NE>",
                     "compare_type": "#stablehlo<comparison_type FLOAT>"})
    neg_abs = fb.op1("stablehlo.negate", [fb.op1("stablehlo.abs", [delta], t)], t)
    softplus = fb.op1("stablehlo.log_plus_one", [fb.op1("stablehlo.exponential", [neg_abs], t)],
                      t)
    regular = fb.op1("stablehlo.add", [amax, softplus], t)
    total = fb.op1("stablehlo.add", [a, c], t)
    return [fb.op1("stablehlo.select", [is_nan, total, regular], t)]


def _window_lower(kind, identity):
    def lower(ctx, x, *, axis, reverse):
        aval = ctx.avals_in[0]
        n = aval.shape[axis]
        if n == 0:
            return x
        dtype = aval.dtype
        b = ctx.builder
        scalar = tensor_type((), dtype)
        if kind == "logaddexp":
            body = lambda fb, args: _logaddexp_region(fb, args, dtype)  # noqa: E731
        else:
            body = combiner_body(kind, dtype)
        region = b.region([scalar, scalar], body)
        window = [1] * aval.ndim
        window[axis] = n
        pads = [[0, 0] for _ in range(aval.ndim)]
        pads[axis] = [0, n - 1] if reverse else [n - 1, 0]
        padding = f"dense<{pads}> : tensor<{aval.ndim}x2xi64>"
        init = b.constant(identity(dtype))
        return b.op1("stablehlo.reduce_window", [x, init], aval_type(ctx.avals_out[0]),
                     {"window_dimensions": i64_array(window),
                      "window_strides": i64_array([1] * aval.ndim), "padding": padding},
                     regions=[region])
    return lower


# -- derivatives: the tangent by a parallel prefix scan over (value, tangent) pairs, whose
# combining steps apply the product rule (as JAX differentiates its associative scan) --

def _interleave(evens, odds, axis):
    """``evens[0], odds[0], evens[1], ...`` along ``axis`` (``evens`` as long as ``odds``
    or one longer)."""
    n_evens, n_odds = evens.shape[axis], odds.shape[axis]
    even_config = [(0, 0, 0)] * evens.ndim
    odd_config = [(0, 0, 0)] * odds.ndim
    even_config[axis] = (0, 1 if n_evens == n_odds else 0, 1)
    odd_config[axis] = (1, 0 if n_evens == n_odds else 1, 1)
    return add(pad(evens, scalar_constant(0, evens.dtype), tuple(even_config)),
               pad(odds, scalar_constant(0, odds.dtype), tuple(odd_config)))


def _prefix_scan(combine, elems, axis):
    """Inclusive scan of the list of arrays ``elems`` along ``axis``: combine neighbours
    pairwise, scan those recursively (the odd positions), then fill in the even ones."""
    n = elems[0].shape[axis]
    if n < 2:
        return elems

    def take(start, stop=None, stride=1):
        return [slice_in_dim(e, start, stop, stride, axis) for e in elems]

    odds = _prefix_scan(combine, combine(take(0, -1, 2), take(1, None, 2)), axis)
    if n % 2 == 0:
        evens = combine([slice_in_dim(e, 0, -1, 1, axis) for e in odds], take(2, None, 2))
    else:
        evens = combine(odds, take(2, None, 2))
    firsts = take(0, 1)
    evens = [concatenate([f, e], axis) if e.shape[axis] else f
             for f, e in zip(firsts, evens, strict=True)]
    return [_interleave(e, o, axis) for e, o in zip(evens, odds, strict=True)]


def _mul_pairs(a, b):
    (x, tx), (y, ty) = a, b
    return [mul(x, y), add(mul(tx, y), mul(x, ty))]


def _extremum_pairs(pick):
    """max/min of pairs; at a tie each tangent gets half, as JAX's max/min rules do."""

    def combine(a, b):
        (x, tx), (y, ty) = a, b
        out = pick(x, y)
        zeros, ones, twos = (full_like(x, v) for v in (0, 1, 2))
        x_wins, y_wins = eq(x, out), eq(y, out)
        x_share = div(select_n(x_wins, zeros, ones), select_n(y_wins, ones, twos))
        y_share = div(select_n(y_wins, zeros, ones), select_n(x_wins, ones, twos))
        return [out, add(mul(tx, x_share), mul(ty, y_share))]

    return combine


def _logaddexp_pairs(a, b):
    """log(exp(x) + exp(y)) as the lowering computes it; tangents weighted by
    exp(x - out) and exp(y - out), with +inf read as 0 there (JAX's rule)."""
    (x, tx), (y, ty) = a, b
    delta = sub(x, y)
    regular = add(max_op(x, y), log1p(exp(neg(abs_op(delta)))))
    out = select_n(ne(delta, delta), regular, add(x, y))

    def finite(v):
        inf = full_like(v, np.inf)
        return select_n(eq(v, inf), v, full_like(v, 0))

    weight_x = exp(sub(finite(x), finite(out)))
    weight_y = exp(sub(finite(y), finite(out)))
    return [out, add(mul(tx, weight_x), mul(ty, weight_y))]


def _scan_jvp(name, combine):
    """The jvp of a cumulative reduction: the primitive for the value, the scan of
    ``combine`` (on ``[value, tangent]`` pairs) for the tangent."""

    def jvp(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        ans = registry[name].bind(x, axis=axis, reverse=reverse)
        if type(t) is Zero:
            return ans, Zero(t.aval)
        if reverse:
            x, t = rev(x, (axis,)), rev(t, (axis,))
        _, t_out = _prefix_scan(combine, [x, t], axis)
        return ans, rev(t_out, (axis,)) if reverse else t_out

    return jvp


def _cumsum_transpose(ct, x, *, axis, reverse):
    return cumsum(ct, axis, not reverse)


def _cumulative(name, np_accumulate, kind, identity, *, jvp, transpose, floats_only=False,
                wide=True):
    prim = Primitive(
        name, abstract_eval=lambda x, *, axis, reverse: _cumulative_abstract_eval(
            name, floats_only, x, axis, reverse),
        impl=_accumulate(np_accumulate, wide),
        lower=_window_lower(kind, identity), jvp=jvp, transpose=transpose,
        batch=batch_at_front(name, shifted_axis("axis")),
        sharding_rule=sharding_rules.same_as_operand)

    def wrapper(operand, axis: int = 0, reverse: bool = False):
        return prim.bind(as_operand(operand), axis=operator.index(axis), reverse=bool(reverse))

    wrapper.__name__ = wrapper.__qualname__ = name
    return prim, wrapper


def _max(x, y):
    return max_op(x, y)


def _min(x, y):
    return min_op(x, y)


cumsum_p, cumsum = _cumulative(
    "cumsum", lambda x, axis: np.cumsum(x, axis, dtype=x.dtype),
    "add", lambda dtype: np.zeros((), dtype), jvp=linear_jvp_of("cumsum"),
    transpose=transpose_by_parts(_cumsum_transpose))
cumprod_p, cumprod = _cumulative(
    "cumprod", lambda x, axis: np.cumprod(x, axis, dtype=x.dtype),
    "mul", lambda dtype: np.ones((), dtype), jvp=_scan_jvp("cumprod", _mul_pairs),
    transpose=NONLINEAR)
cummax_p, cummax = _cumulative(
    "cummax", lambda x, axis: np.maximum.accumulate(x, axis),
    "max", max_identity, wide=False, jvp=_scan_jvp("cummax", _extremum_pairs(_max)),
    transpose=NONLINEAR)
cummin_p, cummin = _cumulative(
    "cummin", lambda x, axis: np.minimum.accumulate(x, axis),
    "min", min_identity, wide=False, jvp=_scan_jvp("cummin", _extremum_pairs(_min)),
    transpose=NONLINEAR)
cumlogsumexp_p, cumlogsumexp = _cumulative(
    "cumlogsumexp", lambda x, axis: np.logaddexp.accumulate(x, axis), "logaddexp",
    max_identity, floats_only=True, jvp=_scan_jvp("cumlogsumexp", _logaddexp_pairs),
    transpose=NONLINEAR)

for _fn, _what in ((cumsum, "sum"), (cumprod, "product"), (cummax, "maximum"),
                   (cummin, "minimum"), (cumlogsumexp, "log-sum-exp")):
    _fn.__doc__ = f"""Cumulative {_what} of ``operand`` along ``axis`` (from the end when
    ``reverse``).

    Parameters
    ----------
    operand : array_like
    axis : int
        A non-negative axis.
    reverse : bool
        Accumulate from the last element backwards.
    """

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp", "cumsum_p", "cumprod_p",
           "cummax_p", "cummin_p", "cumlogsumexp_p"]
