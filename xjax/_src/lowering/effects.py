"""Ordering side effects (host callbacks) in lowered programs with ``!stablehlo.token``s.

Each block being emitted (a function body or a region) has at most one *current token*:
every side-effecting operation takes it as an operand and returns the next one, so XLA runs
them in program order. Control flow whose bodies have side effects threads the token
through: a loop carries it, each ``case`` branch starts from the outer token and returns its
own, and the block continues from the operation's token result. Primitives with side
effects register their names in ``EFFECTFUL_PRIMITIVES``; ``has_effects`` finds them inside
nested jaxprs. A nested ``jit`` (a ``func.call``) takes the token as its first argument
and returns it as its first result.
"""

from __future__ import annotations
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr

TOKEN_TYPE = "!stablehlo.token"

# Names of primitives whose lowering joins the token chain (filled by their modules).
EFFECTFUL_PRIMITIVES: set[str] = set()

_ATTR = "_xjax_effect_tokens"


def _tokens(builder) -> dict:
    return builder.__dict__.setdefault(_ATTR, {})


def get_token(builder):
    """The current token of the block ``builder`` is emitting into, or None."""
    entry = _tokens(builder).get(id(builder.lines))
    return None if entry is None else entry[1]


def set_token(builder, token) -> None:
    """Make ``token`` the current token of the block being emitted."""
    # the list is kept with its entry so that its id is not reused by another block
    _tokens(builder)[id(builder.lines)] = (builder.lines, token)


def current_token(builder) -> str:
    """The current token, starting the chain with ``stablehlo.after_all`` if there is none."""
    token = get_token(builder)
    if token is None:
        token = builder.op1("stablehlo.after_all", [], TOKEN_TYPE)
        set_token(builder, token)
    return token


def _jaxprs_in(value):
    if isinstance(value, ClosedJaxpr):
        yield value.jaxpr
    elif isinstance(value, Jaxpr):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _jaxprs_in(v)


def has_effects(*jaxprs) -> bool:
    """Whether any equation of these jaxprs (or of jaxprs nested in their params) is a
    side-effecting primitive."""
    if not EFFECTFUL_PRIMITIVES:
        return False
    for value in jaxprs:
        for jaxpr in _jaxprs_in(value):
            for eqn in jaxpr.eqns:
                if eqn.primitive.name in EFFECTFUL_PRIMITIVES:
                    return True
                if any(has_effects(p) for p in eqn.params.values()):
                    return True
    return False
