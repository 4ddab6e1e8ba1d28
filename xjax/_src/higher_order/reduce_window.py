"""The generic ``reduce_window`` primitive: window reductions of one or several operands
with a computation traced to a jaxpr (``lax.reduce_window`` binds it when the computation
is not ``lax.add``/``lax.max``/``lax.min`` with its identity; those have primitives of
their own in ``xjax.lax.windowed``). It holds a jaxpr, so it lives above the interpreters.

Its jvp reduces (value, tangent) pairs with the jvp of the computation, as JAX's does;
like JAX's, it has no transpose (reverse mode needs a dedicated primitive).
"""

from __future__ import annotations

import numpy as np

from xjax._src.core.array import as_numpy
from xjax._src.core import dtypes
from xjax._src.core.ad_util import Zero, get_aval
from xjax._src.core.avals import ShapedArray
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from xjax._src.core.primitive import NONLINEAR
from xjax._src.higher_order.primitive import ALL_UNKNOWN, HigherOrderPrimitive
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.trace import Tracer
from xjax._src.higher_order.common import trace_flat, trace_function
from xjax._src.lax.ad_rules import instantiate, zeros_like_aval
from xjax._src.lax.batch_rules import bdim_at_front, batch_size, not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.lax.windowed import (check_window_params, padded_operand, reduce_window_shape_tuple,
                                    window_attributes, window_taps)
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.lowering.stablehlo import aval_type, tensor_type
from xjax._src.interpreters.jvp import jvp_flat
from xjax._src.lax.select_and_scatter import select_and_scatter_p

_WINDOW_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation",
                  "window_dilation")


def _split(args):
    n = len(args) // 2
    return list(args[:n]), list(args[n:])


def _abstract_eval(*args, jaxpr, consts, **window):
    operands, inits = _split(args)
    shape = operands[0].shape
    if any(x.dtype != init.dtype for x, init in zip(operands, inits, strict=True)):
        raise TypeError("reduce_window got inconsistent dtypes for operands and init_values: "
                        f"got operand dtypes {[x.dtype for x in operands]} and init_value "
                        f"dtypes {[init.dtype for init in inits]}.")
    for x, init in zip(operands, inits, strict=True):
        if x.shape != shape:
            raise TypeError("reduce_window operands must have the same shape, got "
                            f"{[o.shape for o in operands]}")
        if init.shape != ():
            raise TypeError(f"reduce_window init values must be scalars, got {init.shape}")
    check_window_params("reduce_window", shape, *(window[k] for k in _WINDOW_PARAMS))
    out_shape = reduce_window_shape_tuple(shape, *(window[k] for k in _WINDOW_PARAMS))
    return [ShapedArray(out_shape, x.dtype, x.weak_type) for x in operands]


def _impl(*args, jaxpr, consts, **window):
    """Per output element, fold the window's taps (row-major) into the init values with the
    computation, skipping padding and dilation holes (as XLA does): plain and exact, though
    slow (eager use of a generic window reduction is rare; jit compiles it)."""
    operands, inits = _split(args)
    shape = np.shape(operands[0])
    out_shape = reduce_window_shape_tuple(shape, *(window[k] for k in _WINDOW_PARAMS))

    def taps(x, fill):
        padded = padded_operand(x, fill, window["padding"], window["base_dilation"])
        return list(window_taps(padded, out_shape, window["window_dimensions"],
                                window["window_strides"], window["window_dilation"]))

    valid = taps(np.ones(shape, np.bool_), False)
    operand_taps = [taps(np.asarray(x), np.asarray(i)) for x, i in
                    zip(operands, inits, strict=True)]
    outs = [np.empty(out_shape, np.asarray(x).dtype) for x in operands]
    for index in np.ndindex(*out_shape):
        acc = [np.asarray(i) for i in inits]
        for k, mask in enumerate(valid):
            if mask[index]:
                elements = [t[k][index] for t in operand_taps]
                acc = [as_numpy(a) for a in
                       eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *acc, *elements)]
        for out, a in zip(outs, acc, strict=True):
            out[index] = a
    return outs


def computation_region(builder, jaxpr, init_avals):
    """The region of a reduction: ``jaxpr`` (accumulators, elements) -> accumulators, on
    scalars of the init values' types (shared with the generic ``reduce``)."""
    scalar_types = [tensor_type((), a.dtype) for a in init_avals]

    def body(fb, block_args):
        const_values = [fb.constant(np.asarray(c)) for c in jaxpr.consts]
        return lower_jaxpr_body(fb, jaxpr.jaxpr, const_values, block_args)

    return builder.region(scalar_types * 2, body)


def _lower(ctx, *args, jaxpr, consts, **window):
    b = ctx.builder
    operands, inits = _split(args)
    region = computation_region(b, jaxpr, ctx.avals_in[len(operands):])
    return b.op("stablehlo.reduce_window", operands + inits,
                [aval_type(a) for a in ctx.avals_out],
                window_attributes(*(window[k] for k in _WINDOW_PARAMS)), regions=[region])


def _pair_jaxpr(jaxpr: ClosedJaxpr):
    """The computation on (value, tangent) pairs: ``(acc, acc_dot, x, x_dot) ->
    (out, out_dot)``, each a list over the operands."""
    avals = jaxpr.in_avals
    m = len(avals) // 2

    def fun(*args):
        acc, acc_dot, x, x_dot = args[:m], args[m:2 * m], args[2 * m:3 * m], args[3 * m:]
        outs, out_dots = jvp_flat(
            lambda *a: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *a),
            [*acc, *x], [*acc_dot, *x_dot])
        return list(outs) + [instantiate(t) if type(t) is Zero else t for t in out_dots]

    traced, consts = trace_flat(fun, list(avals[:m]) * 2 + list(avals[m:]) * 2)
    return _closed_with_consts(traced, consts)


def _jvp(primals, tangents, *, jaxpr, consts, **window):
    operands, inits = _split(primals)
    operand_dots, init_dots = _split(tangents)
    if not all(type(t) is Zero for t in init_dots):
        raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
    if not all(dtypes.is_inexact(get_aval(x).dtype) for x in operands):
        raise NotImplementedError("reduce_window jvp with integer operands")
    operand_dots = [instantiate(t) for t in operand_dots]
    init_dots = [zeros_like_aval(get_aval(i)) for i in inits]
    outs = reduce_window_p.bind(*operands, *operand_dots, *inits, *init_dots,
                                jaxpr=_pair_jaxpr(jaxpr), consts=(), **window)
    m = len(operands)
    return outs[:m], outs[m:]


def _batch(args, dims, *, jaxpr, consts, **window):
    operands, inits = _split(args)
    operand_dims, init_dims = _split(dims)
    if any(d is not not_mapped for d in init_dims):
        raise NotImplementedError("reduce_window batching is not implemented for initial "
                                  "values")
    size = batch_size(operands, operand_dims)
    moved = [bdim_at_front(x, d, size) for x, d in zip(operands, operand_dims, strict=True)]
    batched = {"window_dimensions": (1, *window["window_dimensions"]),
               "window_strides": (1, *window["window_strides"]),
               "padding": ((0, 0), *window["padding"]),
               "base_dilation": (1, *window["base_dilation"]),
               "window_dilation": (1, *window["window_dilation"])}
    outs = reduce_window_p.bind(*moved, *inits, jaxpr=jaxpr, consts=consts, **batched)
    return outs, [0] * len(outs)


reduce_window_p = HigherOrderPrimitive("reduce_window", abstract_eval=_abstract_eval, impl=_impl,
                            lower=_lower, jvp=_jvp, transpose=NONLINEAR, batch=_batch,
                            multiple_results=True,
    partial_eval=ALL_UNKNOWN, partial_eval_jaxpr=ALL_UNKNOWN)


def _closed_with_consts(jaxpr: Jaxpr, consts) -> ClosedJaxpr:
    """A jaxpr whose leading inputs are ``consts`` as a closed jaxpr; the computation of a
    window reduction may only close over concrete values (as in JAX)."""
    if any(isinstance(c, Tracer) for c in consts):
        raise NotImplementedError("Reduction computations can't close over Tracers. Please "
                                  "open an issue at https://github.com/jax-ml/jax.")
    if isinstance(jaxpr, ClosedJaxpr):  # consts_as_args leaves a ClosedJaxpr without consts
        jaxpr = jaxpr.jaxpr
    n = len(consts)
    inner = Jaxpr(jaxpr.invars[:n], jaxpr.invars[n:], jaxpr.outvars, jaxpr.eqns,
                  jaxpr.debug_info)
    return ClosedJaxpr(inner, [as_numpy(c) for c in consts])


def generic_reduce_window(operand, init_value, computation, window_dimensions,
                          window_strides, padding, base_dilation, window_dilation,
                          window_params):
    """``lax.reduce_window`` for any computation (see ``xjax.lax.windowed.reduce_window``)."""
    flat_operands, operand_tree = tree_flatten(operand)
    flat_inits, init_tree = tree_flatten(init_value)
    if operand_tree != init_tree:
        raise ValueError("Operands must have the same tree structure as init_values: "
                         f"{operand_tree} vs. {init_tree}")
    flat_operands = [to_operand(x) for x in flat_operands]
    flat_inits = [to_operand(x) for x in flat_inits]
    if not flat_operands:
        raise TypeError("reduce_window needs at least one operand")
    params = window_params(get_aval(flat_operands[0]).shape, window_dimensions,
                           window_strides, padding, base_dilation, window_dilation)
    init_avals = [ShapedArray((), get_aval(i).dtype, get_aval(i).weak_type)
                  for i in flat_inits]
    pair_tree = tree_flatten((init_value, init_value))[1]
    traced = trace_function(computation, pair_tree, init_avals * 2, "reduce_window")
    if traced.out_tree != init_tree:
        raise TypeError(f"reduce_window output must have the same tree structure as the "
                        f"operands {init_tree} vs. {traced.out_tree}")
    jaxpr = _closed_with_consts(traced.jaxpr, traced.consts)
    outs = reduce_window_p.bind(*flat_operands, *flat_inits, jaxpr=jaxpr, consts=(),
                                **params)
    return tree_unflatten(operand_tree, outs)


def _scalar_jaxpr(fun, dtype, what):
    """``fun(a, b)`` on scalars of ``dtype``, traced to a closed jaxpr with one output."""
    aval = ShapedArray((), np.dtype(dtype))
    pair_tree = tree_flatten((0, 0))[1]
    traced = trace_function(fun, pair_tree, [aval, aval], what)
    if traced.out_tree != tree_flatten(0)[1]:
        raise TypeError(f"{what} must return one scalar, got {traced.out_tree}")
    return _closed_with_consts(traced.jaxpr, traced.consts)


def select_and_scatter(operand, select, window_dimensions, window_strides, padding, source,
                       init_value, scatter):
    """XLA's SelectAndScatter: in each window of ``operand`` select one element with
    ``select`` (a ``(current, candidate) -> bool`` "keep current" test), and combine the
    window's ``source`` element into the output there with ``scatter``.

    Parameters
    ----------
    operand : array
    select : callable
        ``(a, b) -> bool`` on scalars of ``operand``'s dtype, e.g. ``lax.ge`` (max pooling).
    window_dimensions, window_strides : sequence of int
    padding : sequence of (int, int)
        Only zeros are supported (XLA's padded form has crashed on CPU and GPU).
    source : array
        One element per window.
    init_value : scalar
        The output's value where nothing is scattered.
    scatter : callable
        ``(a, b) -> c`` on scalars of ``source``'s dtype, e.g. ``lax.add``.

    Returns
    -------
    array
        Of ``operand``'s shape and ``source``'s dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> from xjax.control_flow.reduce_window import select_and_scatter
    >>> select_and_scatter(np.array([1., 3., 2., 2.], np.float32), lax.ge, (2,), (2,),
    ...                    ((0, 0),), np.array([5., 7.], np.float32), np.float32(0), lax.add)
    Array([0., 5., 7., 0.], dtype=float32)
    """
    operand, source, init_value = (to_operand(a) for a in (operand, source, init_value))
    select_jaxpr = _scalar_jaxpr(select, get_aval(operand).dtype, "select_and_scatter select")
    scatter_jaxpr = _scalar_jaxpr(scatter, get_aval(init_value).dtype,
                                  "select_and_scatter scatter")
    return select_and_scatter_p.bind(
        operand, source, init_value, select_jaxpr=select_jaxpr, select_consts=(),
        scatter_jaxpr=scatter_jaxpr, scatter_consts=(),
        window_dimensions=tuple(int(w) for w in window_dimensions),
        window_strides=tuple(int(s) for s in window_strides),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding))


__all__ = ["reduce_window_p", "generic_reduce_window", "select_and_scatter"]
