"""``custom_root``: a root solve differentiated implicitly (JAX 0.10.2's semantics).

JAX builds ``custom_root`` from a ``custom_jvp`` over the traced ``solve`` (no primitive of
its own), and so does xjax: the closed-over traced values of ``f``, ``solve`` and the
linearize-and-``tangent_solve`` function are hoisted into explicit arguments with
``closure_convert``, and the jvp rule applies the implicit function theorem,

    F(m, u*(m)) = 0   =>   du* = -(d_u F)^{-1} [d_m F . dm],

with ``tangent_solve`` inverting ``d_u F`` (``f`` linearized at the solution). Reverse
mode transposes that jvp (``tangent_solve`` must then be linear and transposable, as in
JAX); ``vmap`` and ``jit`` go through ``custom_jvp``'s rules.

``custom_linear_solve`` (a primitive holding four jaxprs, whose transpose swaps ``solve``
and ``transpose_solve``) is in ``linear_solve``.
"""

from __future__ import annotations

from xjax._src.higher_order.linear_solve import check_tree as _check_tree
from xjax._src.core.pytree import tree_map, tree_structure
from xjax._src.core import dtypes
from xjax._src.lax import full_like, neg
from xjax._src.lax.operands import to_operand
from xjax._src.transformations import custom_derivatives, grad
from xjax._src.transformations.eval_shape import eval_shape

__all__ = ["custom_root"]


def custom_root(f, initial_guess, solve, tangent_solve, has_aux: bool = False):
    """Differentiably solve for a root of ``f``.

    Gradients are defined with respect to the values ``f`` closes over, by the implicit
    function theorem, assuming ``f(solve(f, initial_guess)) == 0``; ``solve`` itself is
    never differentiated.

    Parameters
    ----------
    f : callable
        Takes one pytree of arrays and returns a pytree of the same structure.
    initial_guess : pytree of arrays
        A starting point for ``solve``.
    solve : callable ``(f, initial_guess) -> solution``
        Finds ``x`` with ``f(x) == 0`` (with ``has_aux``: returns ``(solution, aux)``).
    tangent_solve : callable ``(g, y) -> x``
        Solves the linear system ``g(x) = y``, ``g`` being ``f`` linearized at the root;
        e.g. ``lambda g, y: y / g(1.0)`` for scalars.
    has_aux : bool
        Whether ``solve`` returns auxiliary data as a second output (given zero tangents).

    Returns
    -------
    pytree
        ``solve(f, initial_guess)``, differentiable through ``f``'s closed-over values.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> from xjax import lax
    >>> def newton(f, x):
    ...     for _ in range(20):
    ...         x = x - f(x) / xjax.grad(f)(x)
    ...     return x
    >>> def sqrt(a):
    ...     return lax.custom_root(lambda x: x * x - a, 1.0, newton,
    ...                            lambda g, y: y / g(1.0))
    >>> xjax.grad(sqrt)(4.0)
    Array(0.25, dtype=float32, weak_type=True)
    """

    guess_tree = tree_structure(initial_guess)
    initial_guess = tree_map(to_operand, initial_guess)

    f_conv, f_consts = custom_derivatives.closure_convert(f, initial_guess)
    _check_tree("f", "initial_guess", tree_structure(eval_shape(f, initial_guess)),
                guess_tree)
    solve_conv, solve_consts = custom_derivatives.closure_convert(lambda x: solve(f, x), initial_guess)
    _check_tree("solve", "initial_guess",
                tree_structure(eval_shape(lambda x: solve(f, x), initial_guess)), guess_tree,
                has_aux)

    def linearize_and_solve(x, b):
        _, f_lin = grad.linearize(f, x)
        return tangent_solve(f_lin, b)

    ls_conv, ls_consts = custom_derivatives.closure_convert(linearize_and_solve, initial_guess, initial_guess)
    _check_tree("tangent_solve", "x",
                tree_structure(eval_shape(linearize_and_solve, initial_guess, initial_guess)),
                guess_tree)

    @custom_derivatives.custom_jvp
    def _root(f_consts, solve_consts, ls_consts, guess):
        return solve_conv(guess, *solve_consts)

    @_root.defjvp
    def _root_jvp(primals, tangents):
        f_consts_, _, ls_consts_, _ = primals
        f_consts_dot = tangents[0]
        out = _root(*primals)
        solution, aux = out if has_aux else (out, None)
        _, rhs = grad.jvp(lambda consts: f_conv(solution, *consts), (tuple(f_consts_),),
                     (tuple(f_consts_dot),))
        solution_dot = tree_map(neg, ls_conv(solution, rhs, *ls_consts_))
        if has_aux:
            aux_dot = tree_map(_zero_tangent, aux)
            return out, (solution_dot, aux_dot)
        return out, solution_dot

    return _root(tuple(f_consts), tuple(solve_consts), tuple(ls_consts), initial_guess)


def _zero_tangent(x):
    import numpy as np
    if dtypes.is_inexact(x.dtype):
        return full_like(x, 0)
    return np.zeros(x.shape, dtypes.float0)

