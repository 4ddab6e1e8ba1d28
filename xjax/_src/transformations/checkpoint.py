"""Rematerialisation helpers (``jax.ad_checkpoint``): naming values for checkpoint policies,
the policies themselves, and a report of what a function's ``vjp`` saves.

``checkpoint`` and ``remat`` are no longer here (removed in JAX 0.10.0): use
``xjax.checkpoint`` / ``xjax.remat``.
"""

from __future__ import annotations

import inspect

from xjax._src.transformations.grad import linearize_flat
from xjax._src.core.jaxpr import Literal
from xjax._src.core.pytree import (keystr, tree_flatten, tree_flatten_with_path, tree_map,
                                   tree_unflatten)
from xjax._src.transformations.custom_derivatives import checkpoint_policies  # noqa: F401
from xjax._src.interpreters.partial_eval import Offloadable, Recompute, Saveable  # noqa: F401
from xjax._src.interpreters.staging import trace_to_jaxpr
from xjax._src.lax.checkpoint_name import name_p
from xjax._src.lax.operands import to_operand
from xjax._src.core.ad_util import get_aval

__all__ = ["checkpoint_policies", "checkpoint_name", "print_saved_residuals", "Recompute",
           "Saveable", "Offloadable"]


def checkpoint_name(x, name):
    """Name a value (each leaf of a pytree) for the policies of ``checkpoint``.

    The identity at run time; in a jaxpr each leaf goes through a ``name`` equation that
    :func:`~xjax.checkpoint_policies.save_only_these_names` and its kin look for.

    Parameters
    ----------
    x : pytree of array_like
        The values to name.
    name : str
        The name the policies see.

    Returns
    -------
    pytree
        ``x`` unchanged (Python scalars become arrays).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> from xjax.ad_checkpoint import checkpoint_name
    >>> def f(x):
    ...     return jnp.cos(checkpoint_name(jnp.sin(x), "y"))
    >>> policy = xjax.checkpoint_policies.save_only_these_names("y")
    >>> float(xjax.grad(xjax.checkpoint(f, policy=policy))(0.0))
    -0.0
    """
    return tree_map(lambda leaf: name_p.bind(to_operand(leaf), name=name), x)


def saved_residuals(f, *args, **kwargs):
    """The residuals ``vjp(f, *args, **kwargs)`` saves: a list of ``(aval, where-from)``.

    Where-from is ``"from the argument NAME"``, ``"from a constant"``, ``"from a literal"``,
    ``"named 'NAME' from SRC"`` (a ``checkpoint_name``), ``"output of jitted function 'F'
    from SRC"`` or ``"output of PRIMITIVE from SRC"``. xjax's jaxprs do not record source
    locations, so SRC is ``unknown`` (JAX gives file:line:column and the function).
    """
    in_leaves, in_tree = tree_flatten((args, kwargs))
    in_leaves = [to_operand(x) for x in in_leaves]
    arg_names = _flat_arg_names(f, args, kwargs, len(in_leaves))

    def flat_f(*xs):
        a, kw = tree_unflatten(in_tree, list(xs))
        return [to_operand(o) for o in tree_flatten(f(*a, **kw))[0]]

    def residuals_of(*xs):
        return list(linearize_flat(flat_f, list(xs)).residuals)

    closed = trace_to_jaxpr(residuals_of, [get_aval(x) for x in in_leaves])
    return _describe_residuals(closed.jaxpr, arg_names)


def _describe_residuals(jaxpr, arg_names):
    """Where each output of ``jaxpr`` comes from, in JAX's order: literals, constants,
    arguments, then equation outputs in program order (each value once)."""
    results = [(x.aval, "from a literal") for x in jaxpr.outvars if type(x) is Literal]
    res_vars = {x for x in jaxpr.outvars if type(x) is not Literal}
    results += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res_vars]
    results += [(v.aval, f"from the argument {name}")
                for v, name in zip(jaxpr.invars, arg_names, strict=True) if v in res_vars]
    for eqn in jaxpr.eqns:
        src = eqn.source_info or "unknown"
        for v in eqn.outvars:
            if v not in res_vars:
                continue
            if eqn.primitive is name_p:
                results.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
            elif eqn.primitive.name == "jit":
                results.append((v.aval, f"output of jitted function '{eqn.params['name']}' "
                                        f"from {src}"))
            else:
                results.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
    return results


def _flat_arg_names(f, args, kwargs, n_leaves):
    """One name per flat argument leaf, as JAX's debug info gives them (``x``, ``d['a']``,
    ``args[0]``), or ``at flattened index i`` where the signature cannot tell."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [f"at flattened index {i}" for i in range(n_leaves)]
    names = []
    for param, value in bound.arguments.items():
        kind = bound.signature.parameters[param].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            # **kwargs flatten with the (args, kwargs) tuple: sorted keys, each its own name
            for key in sorted(value):
                names += [key + keystr(path) for path, _ in
                          tree_flatten_with_path(value[key])[0]]
            continue
        names += [param + keystr(path) for path, _ in tree_flatten_with_path(value)[0]]
    if len(names) != n_leaves:  # keyword arguments reorder the leaves: give up on names
        return [f"at flattened index {i}" for i in range(n_leaves)]
    return names


def print_saved_residuals(f, *args, **kwargs):
    """Print the residuals ``vjp(f, *args, **kwargs)`` saves for the backward pass, one a
    line: shape and dtype, then where each comes from (see :func:`saved_residuals`).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> from xjax.ad_checkpoint import print_saved_residuals
    >>> print_saved_residuals(xjax.checkpoint(lambda x: jnp.sin(jnp.sin(x))), 1.0)
    f32[] from the argument x
    """
    for aval, src in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {src}")


_REMOVED = {
    "checkpoint": "jax.ad_checkpoint.checkpoint was deprecated in JAX v0.8.2 and removed in "
                  "JAX v0.10.0; use jax.checkpoint instead.",
    "remat": "jax.ad_checkpoint.remat was deprecated in JAX v0.8.2 and removed in JAX "
             "v0.10.0; use jax.remat instead.",
}


def __getattr__(name):
    if name in _REMOVED:
        raise AttributeError(_REMOVED[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
