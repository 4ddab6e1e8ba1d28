"""``xjax.experimental.jet``: Taylor-mode automatic differentiation, as JAX's ``jet``.

``jet(fun, primals, series)`` pushes a truncated Taylor polynomial through ``fun`` in one
pass: from the primal point and K derivative coefficients of a curve through it, it
returns ``fun``'s value and K derivative coefficients of the image curve (what K nested
``jvp`` would give, at O(K^2) cost instead of O(2^K)).

xjax implements it as an interpreter over the jaxpr of ``fun`` (traced with
``xjax.make_jaxpr``): every equation's output series is computed from its inputs' by the
rule for its primitive (``_jet_rules``); equations whose inputs carry no series are just
evaluated. Nested ``jit``, ``checkpoint``, ``custom_jvp`` and ``custom_vjp`` calls are
interpreted inline (custom derivative rules are ignored, as in JAX). Because rules bind
primitives under the current trace, ``jet`` composes with ``jit``, ``vmap`` and ``grad``.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from xjax._src.core.jaxpr import ClosedJaxpr, Literal
from xjax._src.core.pytree import tree_flatten, tree_structure, tree_unflatten
from xjax._src.experimental._jet_rules import RULES
import xjax._src.numpy as jnp
from xjax._src.transformations.jit import make_jaxpr

__all__ = ["jet", "jet2"]


class JetRuleNotImplementedError(NotImplementedError, KeyError):
    """No Taylor rule for a primitive (a KeyError too, which JAX raises in that case)."""

    def __str__(self):
        return str(self.args[0])


# Primitives that call a sub-jaxpr: interpreted inline. Value: the parameter holding it.
_CALLS = {"jit": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
          "custom_vjp_call": "call_jaxpr", "closed_call": "call_jaxpr",
          "core_call": "call_jaxpr"}


def jet(fun, primals, series, factorial_scaled=True, **_):
    r"""Taylor-mode higher-order automatic differentiation.

    Parameters
    ----------
    fun : callable
        A function of arrays returning an array or a pytree of arrays.
    primals : tuple or list
        The point: one array (or scalar) per positional argument of ``fun``.
    series : tuple or list
        For each primal, a list of the same length K of arrays shaped like it: the
        derivatives ``h'(0), ..., h^(K)(0)`` of a curve ``h`` with ``h(0) = primal``.
    factorial_scaled : bool
        True (the default): terms are derivatives. False (``jet2``): terms are Taylor
        coefficients ``h^(k)(0) / k!``, in and out.

    Returns
    -------
    (primals_out, series_out)
        ``fun(*primals)`` and, for each of its leaves, the K derivatives of
        ``fun(h(t))`` at 0 (in ``fun``'s output structure, each leaf a list).

    Raises
    ------
    ValueError
        If the series have different lengths, or a primal or term is not an array.
    NotImplementedError
        For a primitive with no Taylor rule: "Jet rule for '<name>' not implemented"
        (also a KeyError, as JAX raises).

    Examples
    --------
    The derivatives of ``sin(h(t))`` for ``h(t) = t^3`` at ``t = 0.5``:

    >>> import xjax.numpy as jnp
    >>> from xjax.experimental.jet import jet
    >>> h0, h1, h2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5
    >>> f0, (f1, f2) = jet(jnp.sin, (h0,), ((h1, h2),))
    >>> bool(jnp.allclose(f2, -jnp.sin(h0) * h1 ** 2 + jnp.cos(h0) * h2))
    True
    """
    order = _check_inputs(primals, series)
    primals = [jnp.asarray(p) if not _is_python_scalar(p) else p for p in primals]
    series = [[jnp.asarray(t) for t in terms] for terms in series]
    if factorial_scaled:
        series = [[t / math.factorial(k + 1) for k, t in enumerate(terms)]
                  for terms in series]
    closed, out_shapes = make_jaxpr(fun, return_shape=True)(*primals)
    out_tree = tree_structure(out_shapes)
    outs = _interpret(closed.jaxpr, closed.consts, list(primals), series, order)
    out_primals = [p for p, _ in outs]
    out_terms = [[jnp.zeros_like(p)] * order if terms is None else list(terms)
                 for p, terms in outs]
    if factorial_scaled:
        out_terms = [[t * math.factorial(k + 1) for k, t in enumerate(terms)]
                     for terms in out_terms]
    return tree_unflatten(out_tree, out_primals), tree_unflatten(out_tree, out_terms)


jet2 = functools.partial(jet, factorial_scaled=False)
jet2.__doc__ = "``jet`` with ``factorial_scaled=False``: Taylor coefficients in and out."


def jet_composite(fn, primals, series):
    """Taylor coefficients (unscaled) of ``fn`` of several arrays: the rule of a primitive
    written as a composition of primitives that have rules."""
    closed = make_jaxpr(fn)(*primals)
    order = len(series[0])
    (out, terms), = _interpret(closed.jaxpr, closed.consts, list(primals), list(series),
                               order)
    return out, [jnp.zeros_like(out)] * order if terms is None else terms


def _is_python_scalar(x):
    return isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic)


def _check_inputs(primals, series):
    """The common series length K, after JAX's checks."""
    lengths = {len(terms) for terms in series}
    if len(lengths) != 1:
        raise ValueError("jet terms have inconsistent lengths for different arguments")
    if len(primals) != len(series):
        raise ValueError(f"jet got {len(primals)} primals but {len(series)} series: give "
                         "one series per primal")
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not _is_leaf(x):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not _is_leaf(t):
                raise ValueError(f"term {j} for argument {i} is not an array")
    return lengths.pop()


def _is_leaf(x):
    """Whether ``x`` is a single pytree leaf (an array or scalar, not a container)."""
    leaves = tree_flatten(x)[0]
    return len(leaves) == 1 and leaves[0] is x


def _interpret(jaxpr, consts, primals, series, order):
    """Run ``jaxpr`` on primals and their series (None: zero); return (primal, terms or
    None) per output."""
    env: dict = {}

    def read(atom):
        return (atom.val, None) if type(atom) is Literal else env[atom]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = (value, None)
    for var, value, terms in zip(jaxpr.invars, primals, series, strict=True):
        env[var] = (value, terms)
    for eqn in jaxpr.eqns:
        ins = [read(a) for a in eqn.invars]
        outs = _apply(eqn, [p for p, _ in ins], [s for _, s in ins], order)
        for var, out in zip(eqn.outvars, outs, strict=True):
            env[var] = out
    return [read(v) for v in jaxpr.outvars]


def _apply(eqn, primals, series, order):
    """One equation: a list of (primal, terms or None) for its outputs."""
    prim, params = eqn.primitive, eqn.params
    if all(s is None for s in series):
        outs = prim.bind(*primals, **params)
        outs = outs if prim.multiple_results else [outs]
        return [(o, None) for o in outs]
    if prim.name in _CALLS:
        callee = params[_CALLS[prim.name]]
        if isinstance(callee, ClosedJaxpr):
            return _interpret(callee.jaxpr, callee.consts, primals, series, order)
        return _interpret(callee, [], primals, series, order)
    if prim.name not in RULES:
        raise JetRuleNotImplementedError(f"Jet rule for '{prim.name}' not implemented")
    rule = RULES[prim.name]
    if rule is None:  # piecewise constant: the output's curve is flat
        outs = prim.bind(*primals, **params)
        outs = outs if prim.multiple_results else [outs]
        return [(o, None) for o in outs]
    if not getattr(rule, "zeros_as_none", False):
        series = [[jnp.zeros_like(p)] * order if s is None else s
                  for p, s in zip(primals, series)]
    out, terms = rule(prim, primals, series, **params)
    if not prim.multiple_results:
        return [(out, _fit(terms, eqn.outvars[0].aval))]
    return [(o, _fit(t, v.aval)) for o, t, v in zip(out, terms, eqn.outvars, strict=True)]


def _fit(terms, aval):
    """Terms shaped and typed as the equation's output (rules on scalar literals can
    return lower-rank or promoted terms)."""
    if terms is None:
        return None
    fitted = []
    for t in terms:
        if np.shape(t) != tuple(aval.shape):
            t = jnp.broadcast_to(t, aval.shape)
        if jnp.result_type(t) != aval.dtype:
            t = t.astype(aval.dtype)
        fitted.append(t)
    return fitted
