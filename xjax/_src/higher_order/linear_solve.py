"""``lax.custom_linear_solve`` and its primitive ``linear_solve_p`` (JAX 0.10.2's semantics).

The primitive holds four closed jaxprs (``matvec``, its transpose ``vecmat``, ``solve`` and
``transpose_solve``), each taking its own consts as leading operands; ``const_lengths`` says
how many. Its rules never differentiate ``solve``: forward mode differentiates the equation
``A x = b`` implicitly,

    x = solve(b),    x_dot = solve(b_dot - A_dot x),

with ``A_dot x`` the jvp of ``matvec`` in its closed-over values; reverse mode transposes
the (linear in ``b``) solve by swapping ``matvec``/``vecmat`` and ``solve``/
``transpose_solve``. ``vecmat`` is derived by transposing ``matvec``'s jaxpr (or is
``matvec`` itself when ``symmetric``). Eagerly and under ``jit`` only ``solve`` runs.

``PUBLIC`` maps the names this module adds to ``xjax.lax``.
"""

from __future__ import annotations

from functools import partial
from typing import Any, NamedTuple

import numpy as np

from xjax._src.core.array import as_numpy
from xjax._src.core.ad_util import UndefinedPrimal, Zero, get_aval, is_undefined, tangent_aval
from xjax._src.core.jaxpr import eval_jaxpr
from xjax._src.higher_order.primitive import ALL_UNKNOWN, HigherOrderPrimitive
from xjax._src.core.pytree import tree_flatten, tree_leaves, tree_unflatten
from xjax._src.higher_order.common import closed, derived, split_list, trace_flat, trace_function
from xjax._src.higher_order.rules_common import batch_jaxpr, run_jaxpr
from xjax._src.lax.ad_rules import add_tangents, instantiate
from xjax._src.lax.batch_rules import NeedsTrace, bdim_at_front, not_mapped
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.interpreters.jvp import jvp_flat
from xjax._src.interpreters.transpose import backward_pass
from xjax._src.lax.elementwise import neg

__all__ = ["custom_linear_solve", "linear_solve_p"]


class _LinearSolveTuple(NamedTuple):
    """One entry per held function (as JAX names the primitive's params)."""

    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self):
        return type(self)(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def check_tree(func_name, expected_name, actual_tree, expected_tree, has_aux=False):
    """Raise JAX's error when ``func_name``'s output tree differs from ``expected_name``'s
    (with ``has_aux``, the first element of a pair)."""
    if has_aux:
        actual_tree_children = actual_tree.children()
        if len(actual_tree_children) != 2:
            raise ValueError(f"{func_name}() produced a pytree with structure "
                             f"{actual_tree}, but a pytree tuple with auxiliary "
                             "output was expected because has_aux was set to True.")
        actual_tree = actual_tree_children[0]
    if actual_tree != expected_tree:
        raise TypeError(f"{func_name}() output pytree structure must match "
                        f"{expected_name}, got {actual_tree} and {expected_tree}.")


def _split_args(args, const_lengths):
    """``(_LinearSolveTuple of const lists, b leaves)``."""
    *consts, b = split_list(list(args), list(const_lengths))
    return _LinearSolveTuple(*consts), b


def _flatten(lists):
    return [x for xs in lists for x in xs]


def _num_aux(jaxprs):
    return len(jaxprs.solve.out_avals) - len(jaxprs.matvec.out_avals)


# -- the primitive ---------------------------------------------------------------------------

def _linear_solve_abstract_eval(*avals, const_lengths, jaxprs):
    n_consts = sum(const_lengths)
    b_avals = list(avals[n_consts:])
    solve_out = jaxprs.solve.out_avals
    for i, (b, x) in enumerate(zip(b_avals, solve_out, strict=False)):
        if b.shape != x.shape or b.dtype != x.dtype:
            raise TypeError("custom_linear_solve: solve() must return arrays of b's shapes and "
                            f"dtypes, got {x.str_short()} for b leaf {i} of type "
                            f"{b.str_short()}")
    return b_avals + list(solve_out[len(b_avals):])


def _linear_solve_impl(*args, const_lengths, jaxprs):
    params, b = _split_args(args, const_lengths)
    outs = eval_jaxpr(jaxprs.solve.jaxpr, [], *params.solve, *b)
    return [as_numpy(o) for o in outs]


def _linear_solve_lower(ctx, *args, const_lengths, jaxprs):
    # only the solve runs; an effectful solve continues the enclosing token chain inline
    params, b = _split_args(args, const_lengths)
    return lower_jaxpr_body(ctx.builder, jaxprs.solve.jaxpr, [], list(params.solve) + list(b))


def _linear_solve_jvp(primals, tangents, *, const_lengths, jaxprs):
    # A x = b  =>  A_dot x + A x_dot = b_dot  =>  x_dot = solve(b_dot - A_dot x)
    outs = linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    params, _ = _split_args(primals, const_lengths)
    params_dot, b_dot = _split_args(tangents, const_lengths)
    n = len(b_dot)
    x = outs[:n]
    rhs = list(b_dot)
    if any(type(t) is not Zero for t in params_dot.matvec):
        x_zeros = [Zero(tangent_aval(get_aval(v))) for v in x]
        _, matvec_dot = jvp_flat(run_jaxpr(jaxprs.matvec.jaxpr), list(params.matvec) + x,
                                 list(params_dot.matvec) + x_zeros)
        rhs = [add_tangents(r, t if type(t) is Zero else neg(t))
               for r, t in zip(rhs, matvec_dot, strict=True)]
    out_avals = [get_aval(o) for o in outs]
    if all(type(r) is Zero for r in rhs):
        return outs, [Zero(tangent_aval(a)) for a in out_avals]
    x_dot = linear_solve_p.bind(*_flatten(params), *[instantiate(r) for r in rhs],
                                const_lengths=const_lengths, jaxprs=jaxprs)
    # auxiliary outputs get no derivative
    return outs, list(x_dot[:n]) + [Zero(tangent_aval(a)) for a in out_avals[n:]]


def _linear_solve_transpose(cts, *primals, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic "
                        "differentiation of custom_linear_solve")
    params, b = _split_args(primals, const_lengths)
    if any(is_undefined(p) for p in _flatten(params)):
        raise NotImplementedError(
            "custom_linear_solve: transposing with respect to the closed-over values of "
            "matvec/solve is not supported (as in JAX); only b may be linear")
    n = len(b)
    x_ct, aux_ct = cts[:n], cts[n:]
    if any(type(c) is not Zero for c in aux_ct):
        raise NotImplementedError("custom_linear_solve: cotangents of the auxiliary outputs "
                                  "of solve are not supported (as in JAX)")
    no_cts = [None] * sum(const_lengths)
    if all(type(c) is Zero for c in x_ct):
        return no_cts + [Zero(a.aval) if is_undefined(a) else None for a in b]
    b_ct = linear_solve_p.bind(*_flatten(params.transpose()), *[instantiate(c) for c in x_ct],
                               const_lengths=const_lengths.transpose(),
                               jaxprs=jaxprs.transpose())
    return no_cts + [c if is_undefined(a) else None for a, c in zip(b, b_ct[:n], strict=True)]


def _linear_solve_batch(trace, args, dims, *, const_lengths, jaxprs):
    size, axis_name = trace.axis_size, trace.axis_name
    if all(d is not_mapped for d in dims):
        outs = linear_solve_p.bind(*args, const_lengths=const_lengths, jaxprs=jaxprs)
        return outs, [not_mapped] * len(outs)
    params, b = _split_args(args, const_lengths)
    params_dims, b_dims = _split_args(dims, const_lengths)
    params_bat = _LinearSolveTuple(*[tuple(d is not not_mapped for d in ds)
                                     for ds in params_dims])
    b_bat = tuple(d is not not_mapped for d in b_dims)

    new_jaxprs, extra_consts, b_now, out_bat = derived(
        "linear_solve_batch", tuple(jaxprs), (params_bat, b_bat, axis_name, size),
        lambda: _batch_jaxprs(jaxprs, params_bat, b_bat, axis_name, size))
    new_params = [[bdim_at_front(v, d, size) if d is not not_mapped else v
                   for v, d in zip(vs, ds, strict=True)]
                  for vs, ds in zip(params, params_dims, strict=True)]
    new_b = [bdim_at_front(v, d, size) if now else v
             for v, d, now in zip(b, b_dims, b_now, strict=True)]
    all_params = [list(e) + p for e, p in zip(extra_consts, new_params, strict=True)]
    lengths = _LinearSolveTuple(*[len(p) for p in all_params])
    outs = linear_solve_p.bind(*_flatten(all_params), *new_b, const_lengths=lengths,
                               jaxprs=new_jaxprs)
    return outs, [0 if bat else not_mapped for bat in out_bat]


def _batch_jaxprs(jaxprs, params_bat, b_bat, axis_name, size):
    """Batch the four jaxprs consistently: ``solve`` and ``vecmat`` map b-like values to
    x-like ones, ``matvec`` and ``transpose_solve`` x-like to b-like, and the jvp and
    transpose rules feed each one's outputs to the others, so a leaf batched in one must be
    batched in all (a fixed point, as JAX computes it)."""
    n, n_aux = len(b_bat), _num_aux(jaxprs)
    b_now, x_now = list(b_bat), [False] * n
    while True:
        solve_j, solve_c, solve_out = batch_jaxpr(jaxprs.solve.jaxpr,
                                                  list(params_bat.solve) + b_now, axis_name,
                                                  size, x_now + [False] * n_aux)
        x_next = [a or c for a, c in zip(x_now, solve_out[:n], strict=True)]
        vecmat = (None, [])
        if jaxprs.vecmat is not None:
            vm_j, vm_c, vm_out = batch_jaxpr(jaxprs.vecmat.jaxpr, list(params_bat.vecmat) + b_now,
                                             axis_name, size, x_now)
            vecmat = (vm_j, vm_c)
            x_next = [a or c for a, c in zip(x_next, vm_out, strict=True)]
        mv_j, mv_c, mv_out = batch_jaxpr(jaxprs.matvec.jaxpr, list(params_bat.matvec) + x_next,
                                         axis_name, size, b_now)
        b_next = [a or c for a, c in zip(b_now, mv_out, strict=True)]
        tsolve = (None, [])
        if jaxprs.transpose_solve is not None:
            ts_j, ts_c, ts_out = batch_jaxpr(jaxprs.transpose_solve.jaxpr,
                                             list(params_bat.transpose_solve) + x_next,
                                             axis_name, size, b_now + [False] * n_aux)
            tsolve = (ts_j, ts_c)
            b_next = [a or c for a, c in zip(b_next, ts_out[:n], strict=True)]
        if b_next == b_now and x_next == x_now:
            break
        b_now, x_now = b_next, x_next
    pairs = [(mv_j, mv_c), vecmat, (solve_j, solve_c), tsolve]
    new_jaxprs = _LinearSolveTuple(*[None if j is None else closed(j) for j, _ in pairs])
    extra = _LinearSolveTuple(*[list(c) for _, c in pairs])
    return new_jaxprs, extra, b_now, solve_out


linear_solve_p = HigherOrderPrimitive(
    "custom_linear_solve",
    abstract_eval=_linear_solve_abstract_eval,
    impl=_linear_solve_impl,
    lower=_linear_solve_lower,
    jvp=_linear_solve_jvp,
    transpose=_linear_solve_transpose,
    batch=NeedsTrace(_linear_solve_batch),
    multiple_results=True,
    partial_eval=ALL_UNKNOWN, partial_eval_jaxpr=ALL_UNKNOWN)


# -- the public function ---------------------------------------------------------------------

def _check_shapes(func_name, expected_name, actual, expected):
    actual_shapes = [np.shape(x) for x in actual]
    expected_shapes = [np.shape(x) for x in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match {expected_name}, "
                         f"got {actual_shapes} and {expected_shapes}")


def _shape_checked(fun, name, has_aux, b_leaves):
    def checked(x):
        y = fun(x)
        _check_shapes(name, "b", tree_leaves(y), b_leaves)
        return y

    def checked_aux(x):
        y, aux = fun(x)  # a ValueError unless fun returns a pair, as in JAX
        _check_shapes(name, "b", tree_leaves(y), b_leaves)
        return y, aux

    return checked_aux if has_aux else checked


def _transposed_matvec(matvec_jaxpr, n_consts, b_avals):
    """``(jaxpr, extra consts)`` of the transpose of ``matvec`` (its consts leading, then the
    cotangents), by transposing its jaxpr; the jaxpr takes ``extra + matvec consts``."""

    def vecmat(*args):
        consts, cts = args[:n_consts], args[n_consts:]
        linear = list(consts) + [UndefinedPrimal(a) for a in b_avals]
        results = backward_pass(matvec_jaxpr, [], linear, list(cts))
        return [instantiate(r) for r in results[n_consts:]]

    closed_jaxpr, extra = trace_flat(vecmat, list(matvec_jaxpr.in_avals))
    return closed_jaxpr.jaxpr, list(extra)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """Perform a matrix-free linear solve with implicitly defined gradients.

    Derivatives are defined by implicit differentiation at the solution of
    ``matvec(x) == b`` rather than by differentiating through ``solve``, which need not be
    differentiable (it may use ``lax.while_loop``).

    Parameters
    ----------
    matvec : callable
        The linear function to invert (``x -> A x``); must be differentiable in the values
        it closes over.
    b : pytree of arrays
        The right-hand side.
    solve : callable ``(matvec, b) -> x``
        Solves ``matvec(x) == b``, returning ``x`` with the structure and shapes of ``b``
        (with ``has_aux``: ``(x, aux)``).
    transpose_solve : callable ``(vecmat, b) -> x``, optional
        Solves the transposed system ``vecmat(x) == b``, ``vecmat`` being the transpose of
        ``matvec`` (derived automatically). Needed for reverse mode, unless ``symmetric``.
    symmetric : bool
        Whether the linear map is symmetric (``matvec == vecmat``); then ``solve`` also
        serves as ``transpose_solve`` by default.
    has_aux : bool
        Whether ``solve`` and ``transpose_solve`` return auxiliary data (e.g. solver
        diagnostics) as a second output; it gets no derivative.

    Returns
    -------
    pytree
        ``solve(matvec, b)``, with derivatives assuming ``matvec(x) == b`` holds.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> from xjax import lax
    >>> a = jnp.array([[2., 1.], [1., 3.]])
    >>> def f(b):
    ...     return lax.custom_linear_solve(lambda x: a @ x, b,
    ...                                    lambda mv, y: jnp.linalg.solve(a, y),
    ...                                    symmetric=True)
    >>> f(jnp.array([3., 4.]))
    Array([1., 1.], dtype=float32)
    >>> xjax.grad(lambda b: f(b).sum())(jnp.array([3., 4.]))
    Array([0.4, 0.2], dtype=float32)
    """
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    b_leaves, tree = tree_flatten(b)
    _, args_tree = tree_flatten((b,))  # the traced functions take b as their one argument
    b_leaves = [to_operand(x) for x in b_leaves]
    b_avals = [get_aval(x) for x in b_leaves]

    matvec_t = trace_function(_shape_checked(matvec, "matvec", False, b_leaves), args_tree,
                              b_avals, "custom_linear_solve")
    check_tree("matvec", "b", matvec_t.out_tree, tree)
    solve_t = trace_function(_shape_checked(partial(solve, matvec), "solve", has_aux, b_leaves),
                             args_tree, b_avals, "custom_linear_solve solve")
    check_tree("solve", "b", solve_t.out_tree, tree, has_aux)

    vecmat_jaxpr = tsolve_jaxpr = None
    vecmat_consts, tsolve_consts = [], []
    if transpose_solve is not None:
        if symmetric:
            vecmat_jaxpr, vecmat_consts = matvec_t.jaxpr.jaxpr, list(matvec_t.consts)
            vecmat = matvec
        else:
            vecmat_jaxpr, extra = _transposed_matvec(matvec_t.jaxpr.jaxpr,
                                                     len(matvec_t.consts), b_avals)
            vecmat_consts = extra + list(matvec_t.consts)

            def vecmat(x):
                outs = eval_jaxpr(vecmat_jaxpr, [], *vecmat_consts,
                                  *[to_operand(v) for v in tree_leaves(x)])
                return tree_unflatten(tree, outs)
        tsolve_t = trace_function(
            _shape_checked(partial(transpose_solve, vecmat), "transpose_solve", has_aux,
                           b_leaves),
            args_tree, b_avals, "custom_linear_solve transpose_solve")
        check_tree("transpose_solve", "b", tsolve_t.out_tree, tree, has_aux)
        tsolve_jaxpr, tsolve_consts = tsolve_t.jaxpr.jaxpr, list(tsolve_t.consts)

    all_consts = [list(matvec_t.consts), vecmat_consts, list(solve_t.consts), tsolve_consts]
    const_lengths = _LinearSolveTuple(*[len(c) for c in all_consts])
    jaxprs = _LinearSolveTuple(closed(matvec_t.jaxpr.jaxpr),
                               None if vecmat_jaxpr is None else closed(vecmat_jaxpr),
                               closed(solve_t.jaxpr.jaxpr),
                               None if tsolve_jaxpr is None else closed(tsolve_jaxpr))
    outs = linear_solve_p.bind(*_flatten(all_consts), *b_leaves, const_lengths=const_lengths,
                               jaxprs=jaxprs)
    return tree_unflatten(solve_t.out_tree, outs)


PUBLIC: dict = {"custom_linear_solve": custom_linear_solve, "linear_solve_p": linear_solve_p}
