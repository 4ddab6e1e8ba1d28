"""The jaxpr: a typed, closed, first-order IR of primitive applications."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from xjax._src.core.avals import ShapedArray
from xjax._src.core.errors import JaxprTypeError
from xjax._src.core.primitive import abstract_eval_typed
from xjax._src.core import axis_env, source_info

_var_counter = itertools.count()

# The effects of every equation and jaxpr: xjax tracks none (JAX's ``core.no_effects``).
NO_EFFECTS: frozenset = frozenset()


class Var:
    """A variable of a jaxpr: an aval and an identity (names are given when printing)."""

    __slots__ = ("aval", "count")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.count = next(_var_counter)

    def __repr__(self) -> str:  # as JAX's: Var(id=140...):float32[3]
        return f"Var(id={id(self)}):{self.aval.str_short()}"


class DropVar(Var):
    """An output nobody reads; printed as ``_``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


class Literal:
    """A scalar constant written inline in the jaxpr, e.g. ``1.0:f32[]``."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val})"


# An operand of an equation (JAX's ``core.Atom``).
Atom = Var | Literal


class JaxprEqn:
    """One application ``outvars = primitive[params] invars``."""

    __slots__ = ("primitive", "invars", "outvars", "params", "source_info")

    # Side effects are not tracked on xjax's equations (host callbacks are ordered when
    # lowering instead), so every equation reports none, as a pure JAX equation does.
    effects = NO_EFFECTS

    def __init__(self, primitive, invars, outvars, params, source_info=None):
        self.primitive = primitive
        self.invars = invars
        self.outvars = outvars
        self.params = params
        self.source_info = source_info

    def __repr__(self) -> str:
        from xjax._src.core.pretty import pp_eqn  # pretty imports this module
        return pp_eqn(self)


class Jaxpr:
    """``{ lambda constvars ; invars . let eqns in outvars }``."""

    __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info")

    effects = NO_EFFECTS  # as JaxprEqn.effects: xjax's jaxprs track no effects

    def __init__(self, constvars, invars, outvars, eqns, debug_info=None):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.outvars = list(outvars)
        self.eqns = list(eqns)
        self.debug_info = debug_info

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __str__(self) -> str:
        from xjax._src.core.pretty import pp_jaxpr  # pretty imports this module
        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self, *, source_info: bool = False, **_) -> str:
        """The printed jaxpr; ``source_info=True`` ends each equation with the user's
        ``file:line:column (function)`` that staged it, as JAX's."""
        from xjax._src.core.pretty import pp_jaxpr  # pretty imports this module
        return pp_jaxpr(self, source_info=source_info)


class ClosedJaxpr:
    """A jaxpr with values for its constvars."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    effects = NO_EFFECTS  # as JaxprEqn.effects: xjax's jaxprs track no effects

    def __init__(self, jaxpr: Jaxpr, consts):
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    literals = property(lambda self: self.consts)  # JAX's older name, still read by Distrax

    def __str__(self) -> str:
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, **kwargs) -> str:
        return self.jaxpr.pretty_print(**kwargs)


def eval_jaxpr(jaxpr: Jaxpr, consts, *args) -> list:
    """Evaluate ``jaxpr`` by binding each equation under the current trace."""
    env: dict[Var, Any] = {}

    def read(atom):
        return atom.val if type(atom) is Literal else env[atom]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[var] = value
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[var] = value
    # Equations staged while this one is interpreted (by a transformation) keep its source.
    state = source_info.state
    outer = state.override
    try:
        for eqn in jaxpr.eqns:
            state.override = eqn.source_info or outer
            outs = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
            if not eqn.primitive.multiple_results:
                outs = (outs,)
            for var, value in zip(eqn.outvars, outs, strict=True):
                env[var] = value
    finally:
        state.override = outer
    return [read(v) for v in jaxpr.outvars]


def check_jaxpr(jaxpr: Jaxpr) -> None:
    """Type-check ``jaxpr``: every variable defined once before use, every equation's output
    avals equal to its primitive's abstract evaluation. Raises JaxprTypeError."""
    defined: set = set()

    def define(var):
        if var in defined:
            raise JaxprTypeError(f"variable {var} defined twice")
        defined.add(var)

    def check_atom(atom, where):
        if type(atom) is Literal:
            return
        if atom not in defined:
            raise JaxprTypeError(f"variable {atom} used before definition in {where}")

    for var in itertools.chain(jaxpr.constvars, jaxpr.invars):
        define(var)
    for eqn in jaxpr.eqns:
        for atom in eqn.invars:
            check_atom(atom, eqn.primitive.name)
        body_axes = axis_env.body_axis_sizes.get(eqn.primitive)
        if body_axes is None:
            for sub in _sub_jaxprs(eqn.params):
                check_jaxpr(sub)
        else:  # its body's collectives name axes the equation binds
            with axis_env.axes_bound(body_axes(eqn.params)):
                for sub in _sub_jaxprs(eqn.params):
                    check_jaxpr(sub)
        out_avals = abstract_eval_typed(eqn.primitive, [a.aval for a in eqn.invars],
                                        eqn.params)
        if not eqn.primitive.multiple_results:
            out_avals = (out_avals,)
        got = [v.aval for v in eqn.outvars]
        if list(out_avals) != got:
            raise JaxprTypeError(f"{eqn.primitive.name}: outputs typed {got} but its "
                                 f"abstract evaluation gives {list(out_avals)}")
        for var in eqn.outvars:
            if type(var) is not DropVar:
                define(var)
    for atom in jaxpr.outvars:
        check_atom(atom, "outputs")


def _sub_jaxprs(params):
    for value in params.values():
        if isinstance(value, ClosedJaxpr):
            yield value.jaxpr
        elif isinstance(value, Jaxpr):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, ClosedJaxpr):
                    yield item.jaxpr
                elif isinstance(item, Jaxpr):
                    yield item


def literal_value_repr(val, aval: ShapedArray) -> str:
    """How a literal prints: ``1.0:f32[]``, ``True:bool[]``, ``2:i32[]``."""
    scalar = np.asarray(val).item()
    if isinstance(scalar, bool):
        text = str(scalar)
    elif isinstance(scalar, float):
        text = repr(scalar)
    else:
        text = str(scalar)
    return f"{text}:{aval.str_short(True)}"
