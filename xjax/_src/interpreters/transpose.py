"""Reverse mode: transposing a linear jaxpr (the backward pass).

The linear jaxpr comes from linearize (jvp + partial evaluation): its inputs are tangents,
its constvars the residuals. Each equation is linear in its tangent operands, which the
backward pass presents to the primitive's ``transpose`` rule as ``UndefinedPrimal``s:
``transpose(ct, *operands, **params)`` returns one cotangent per operand (None for operands
that are not linear inputs).
"""

from __future__ import annotations

from xjax._src.core import source_info
from xjax._src.core.ad_util import UndefinedPrimal, Zero, is_undefined
from xjax._src.core.jaxpr import Jaxpr, Literal
from xjax._src.core.primitive import Absent
from xjax._src.lax.ad_rules import add_tangents


def backward_pass(jaxpr: Jaxpr, consts, linear_args, cts_out):
    """Cotangents of ``jaxpr``'s inputs given those of its outputs.

    ``linear_args`` gives each input: an ``UndefinedPrimal`` for a linear input, or a value
    for a known one. ``cts_out`` may contain ``Zero``. Returns a list with a cotangent (or
    ``Zero``) per input.
    """
    primal_env = {}
    for var, value in zip(jaxpr.constvars, consts, strict=True):
        primal_env[var] = value
    for var, value in zip(jaxpr.invars, linear_args, strict=True):
        primal_env[var] = value
    linear_vars = {v for v, a in zip(jaxpr.invars, linear_args, strict=True) if is_undefined(a)}
    # Forward: evaluate equations that only read known values (non-linear parts, if any).
    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(a) is not Literal and a in linear_vars for a in eqn.invars):
            linear_eqns.append(eqn)
            linear_vars.update(eqn.outvars)
        else:
            values = [a.val if type(a) is Literal else primal_env[a] for a in eqn.invars]
            with source_info.restaging(eqn.source_info):
                outs = eqn.primitive.bind(*values, **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
            for var, value in zip(eqn.outvars, outs, strict=True):
                primal_env[var] = value

    ct_env = {}

    def write_ct(var, ct):
        if type(var) is Literal or var not in linear_vars or ct is None:
            return
        if type(ct) is Zero:
            return
        ct_env[var] = add_tangents(ct_env[var], ct) if var in ct_env else ct

    for var, ct in zip(jaxpr.outvars, cts_out, strict=True):
        write_ct(var, ct)
    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(v, None) for v in eqn.outvars]
        if all(ct is None for ct in cts):
            continue
        cts = [Zero(v.aval) if ct is None else ct for v, ct in zip(eqn.outvars, cts, strict=True)]
        operands = [a.val if type(a) is Literal else
                    (UndefinedPrimal(a.aval) if a in linear_vars else primal_env[a])
                    for a in eqn.invars]
        rule = eqn.primitive.transpose
        if isinstance(rule, Absent):
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                      f"'{eqn.primitive.name}' not implemented: {rule.reason}")
        ct_arg = cts if eqn.primitive.multiple_results else cts[0]
        with source_info.restaging(eqn.source_info):  # as JAX: the forward equation's
            cts_in = rule(ct_arg, *operands, **eqn.params)
            for var, ct in zip(eqn.invars, cts_in, strict=True):
                write_ct(var, ct)
    results = []
    for var, arg in zip(jaxpr.invars, linear_args, strict=True):
        if not is_undefined(arg):
            results.append(None)
        else:
            results.append(ct_env.pop(var, Zero(arg.aval)))
    return results
