"""``fwd_and_bwd``: the forward and backward passes of a function as two (jitted) functions.

``fwd(*args)`` linearizes ``fun`` at ``args`` and returns ``(out, residuals)``, where
``residuals`` is a pytree (its leaves are the linearization's residual arrays, its static
part the linear jaxpr), so it can leave and enter ``jit``; ``bwd(residuals, ct)`` transposes
the linear jaxpr. Jitted, each compiles once per signature and is reused across iterations.
"""

from __future__ import annotations

from xjax._src.core.pytree import register_pytree_node, tree_flatten, tree_unflatten
from xjax._src.core.ad_util import get_aval
from xjax._src.lax.operands import to_operand
from xjax._src.transformations.jit import jit
from xjax._src.transformations.grad import (_Linearized, _argnums_tuple, _flatten_fun,
                                            _strip_tracers, linearize_flat)

__all__ = ["fwd_and_bwd"]


class _Residuals:
    """What ``fwd`` hands to ``bwd``: residual arrays and the static linear program."""

    __slots__ = ("arrays", "static")

    def __init__(self, arrays, static):
        self.arrays = list(arrays)
        self.static = static

    def __repr__(self):
        return f"Residuals({len(self.arrays)} arrays)"


class _Static:
    """The hashable static part: compared by the identity of the linear jaxpr."""

    __slots__ = ("jaxpr", "in_avals", "diff_mask", "out_avals", "out_tree", "in_tree")

    def __init__(self, jaxpr, in_avals, diff_mask, out_avals, out_tree, in_tree):
        self.jaxpr = jaxpr
        self.in_avals = tuple(in_avals)
        self.diff_mask = tuple(diff_mask)
        self.out_avals = tuple(out_avals)
        self.out_tree = out_tree
        self.in_tree = in_tree

    def __eq__(self, other):
        return type(other) is _Static and other.jaxpr is self.jaxpr

    def __hash__(self):
        return id(self.jaxpr)


register_pytree_node(_Residuals, lambda r: (r.arrays, r.static),
                     lambda static, arrays: _Residuals(arrays, static))


def fwd_and_bwd(fun, argnums, has_aux: bool = False, jitted: bool = True):
    """The forward and backward passes of ``fun`` as functions ``fwd`` and ``bwd``.

    Parameters
    ----------
    fun : callable
    argnums : int or sequence of int
        The positional arguments to differentiate with respect to.
    has_aux : bool
        ``fun`` returns ``(out, aux)``; ``fwd`` then returns ``(out, residuals, aux)``.
    jitted : bool
        Return ``jit(fwd)`` and ``jit(bwd)`` (default), so both compile once.

    Returns
    -------
    fwd, bwd : callables
        ``fwd(*args) -> (out, residuals)``; ``bwd(residuals, ct)`` returns the cotangents
        of the ``argnums`` arguments (one array for an int ``argnums``, else a tuple).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> fwd, bwd = xjax.fwd_and_bwd(lambda x, w: x * w, argnums=(0, 1))
    >>> y, res = fwd(jnp.float32(2.0), jnp.float32(3.0))
    >>> bwd(res, jnp.float32(1.0))
    (Array(3., dtype=float32), Array(2., dtype=float32))
    """
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    single = isinstance(argnums, int)

    def fwd(*args):
        nums = _argnums_tuple(argnums, len(args), "")
        dyn = tuple(args[i] for i in nums)

        def partial(*dyn_args):
            full = list(args)
            for i, a in zip(nums, dyn_args, strict=True):
                full[i] = a
            return fun(*full)

        flat, in_tree = tree_flatten(dyn)
        flat = [to_operand(x) for x in flat]
        box = {}
        lin = linearize_flat(_flatten_fun(partial, in_tree, has_aux, box), flat)
        static = _Static(lin.linear_jaxpr, lin.in_avals, lin.diff_mask, lin.out_avals,
                         box["out_tree"], in_tree)
        out = tree_unflatten(box["out_tree"], lin.primal_outs)
        residuals = _Residuals(lin.residuals, static)
        if has_aux:
            return out, residuals, _strip_tracers(box["aux"], None)
        return out, residuals

    def bwd(residuals, ct):
        static = residuals.static
        flat_cts, ct_tree = tree_flatten(ct)
        if ct_tree != static.out_tree:
            raise TypeError(f"Tree structure of cotangent input {ct_tree}, does not match "
                            f"structure of primal output {static.out_tree}.")
        cts = []
        for c, aval in zip(flat_cts, static.out_avals, strict=True):
            c = to_operand(c)
            if get_aval(c).shape != aval.shape:
                raise ValueError(f"Shape of cotangent input to vjp pullback function "
                                 f"{get_aval(c).shape} must be the same as the shape of "
                                 f"corresponding primal input {aval.shape}.")
            cts.append(c)
        lin = _Linearized(None, static.jaxpr, residuals.arrays, list(static.in_avals),
                          list(static.diff_mask), list(static.out_avals))
        grads = tree_unflatten(static.in_tree, lin.transpose(cts))
        return grads[0] if single else grads

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
