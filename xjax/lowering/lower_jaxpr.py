"""Lowering a jaxpr to a StableHLO module by running each primitive's ``lower`` rule."""

from __future__ import annotations

import numpy as np

from xjax.core.jaxpr import ClosedJaxpr, Jaxpr, Literal
from xjax.core.primitive import Absent
from xjax.lowering.stablehlo import FunctionBuilder, ModuleBuilder, aval_type

# Constants at most this many bytes are embedded in the module; larger ones become arguments
# so compiling does not copy them and the executable can be reused with other values.
MAX_EMBEDDED_CONSTANT_BYTES = 1024


class LoweringContext:
    """What a lowering rule sees besides its operands: the function being built and the
    avals of the equation's inputs and outputs."""

    __slots__ = ("builder", "avals_in", "avals_out")

    def __init__(self, builder: FunctionBuilder, avals_in, avals_out):
        self.builder = builder
        self.avals_in = avals_in
        self.avals_out = avals_out

    @property
    def module(self) -> ModuleBuilder:
        return self.builder.module


def lower_jaxpr_body(builder: FunctionBuilder, jaxpr: Jaxpr, const_values, arg_values):
    """Emit ``jaxpr``'s equations into ``builder``; return the names of its outputs."""
    env = {}

    def read(atom):
        if type(atom) is Literal:
            return builder.constant(np.asarray(atom.val, dtype=atom.aval.dtype))
        return env[atom]

    for var, value in zip(jaxpr.constvars, const_values, strict=True):
        env[var] = value
    for var, value in zip(jaxpr.invars, arg_values, strict=True):
        env[var] = value
    for eqn in jaxpr.eqns:
        rule = eqn.primitive.lower
        if isinstance(rule, Absent):
            raise NotImplementedError(f"primitive {eqn.primitive.name} cannot be compiled "
                                      f"with XLA yet: {rule.reason}")
        ctx = LoweringContext(builder, [a.aval for a in eqn.invars],
                              [v.aval for v in eqn.outvars])
        outs = rule(ctx, *[read(a) for a in eqn.invars], **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = (outs,)
        for var, value in zip(eqn.outvars, outs, strict=True):
            env[var] = value
    return [read(v) for v in jaxpr.outvars]


def lower_jaxpr_function(module: ModuleBuilder, name: str, jaxpr: Jaxpr,
                         visibility="private") -> FunctionBuilder:
    """A function taking (constvars..., invars...) and returning the outvars."""
    arg_types = [aval_type(v.aval) for v in jaxpr.constvars + jaxpr.invars]
    fb = module.function(name, arg_types, visibility)
    n_consts = len(jaxpr.constvars)
    outs = lower_jaxpr_body(fb, jaxpr, fb.args[:n_consts], fb.args[n_consts:])
    fb.ret(outs)
    return fb


def lower_to_module(closed: ClosedJaxpr, name: str = "main_module"):
    """Lower a closed jaxpr to module text.

    Returns ``(text, const_args)``: the consts too large to embed, which the caller passes
    as the leading arguments of ``main``.
    """
    jaxpr = closed.jaxpr
    module = ModuleBuilder(f"jit_{name}")
    embedded, passed, passed_vars = [], [], []
    for var, value in zip(jaxpr.constvars, closed.consts, strict=True):
        if var.aval.size * var.aval.dtype.itemsize <= MAX_EMBEDDED_CONSTANT_BYTES:
            embedded.append((var, value))
        else:
            passed.append(value)
            passed_vars.append(var)
    arg_vars = passed_vars + jaxpr.invars
    fb = module.function("main", [aval_type(v.aval) for v in arg_vars], "public")
    const_names = {}
    for var, value in embedded:
        const_names[var] = fb.constant(np.asarray(value, dtype=var.aval.dtype))
    for var, arg in zip(passed_vars, fb.args, strict=False):
        const_names[var] = arg
    outs = lower_jaxpr_body(fb, jaxpr, [const_names[v] for v in jaxpr.constvars],
                            fb.args[len(passed_vars):])
    fb.ret(outs)
    return module.text(), passed
