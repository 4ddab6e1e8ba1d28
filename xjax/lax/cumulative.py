"""Cumulative reductions along one axis: cumsum, cumprod, cummax, cummin, cumlogsumexp.

Lowered to ``stablehlo.reduce_window`` with a window spanning the whole axis and padding
``n - 1`` on the leading side (trailing for ``reverse``): simple and exact; the O(n^2)
work is fine for the sizes this lowering meets (JAX picks an associative scan on TPU).
"""

from __future__ import annotations

import operator

import numpy as np

from xjax.core import dtypes
from xjax.core.avals import ShapedArray
from xjax.core.primitive import Primitive
from xjax.lax.reduce import accumulation_dtype, combiner_body, max_identity, min_identity
from xjax.lax.rules import BATCH_TODO, JVP_TODO, TRANSPOSE_TODO
from xjax.lax.shape import as_operand
from xjax.lowering.stablehlo import aval_type, i64_array, tensor_type


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


def _cumulative(name, np_accumulate, kind, identity, *, floats_only=False, wide=True):
    prim = Primitive(
        name, abstract_eval=lambda x, *, axis, reverse: _cumulative_abstract_eval(
            name, floats_only, x, axis, reverse),
        impl=_accumulate(np_accumulate, wide),
        lower=_window_lower(kind, identity), jvp=JVP_TODO, transpose=TRANSPOSE_TODO,
        batch=BATCH_TODO)

    def wrapper(operand, axis: int = 0, reverse: bool = False):
        return prim.bind(as_operand(operand), axis=operator.index(axis), reverse=bool(reverse))

    wrapper.__name__ = wrapper.__qualname__ = name
    return prim, wrapper


cumsum_p, cumsum = _cumulative(
    "cumsum", lambda x, axis: np.cumsum(x, axis, dtype=x.dtype),
    "add", lambda dtype: np.zeros((), dtype))
cumprod_p, cumprod = _cumulative(
    "cumprod", lambda x, axis: np.cumprod(x, axis, dtype=x.dtype),
    "mul", lambda dtype: np.ones((), dtype))
cummax_p, cummax = _cumulative(
    "cummax", lambda x, axis: np.maximum.accumulate(x, axis),
    "max", max_identity, wide=False)
cummin_p, cummin = _cumulative(
    "cummin", lambda x, axis: np.minimum.accumulate(x, axis),
    "min", min_identity, wide=False)
cumlogsumexp_p, cumlogsumexp = _cumulative(
    "cumlogsumexp", lambda x, axis: np.logaddexp.accumulate(x, axis), "logaddexp",
    max_identity, floats_only=True)

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
