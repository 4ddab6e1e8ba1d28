"""Primitives: named operations whose rules (abstract eval, impl, lowering, jvp, transpose,
batching) are given once, at definition, as required keyword arguments (DESIGN.md §4)."""

from __future__ import annotations

from xjax._src.core import trace as trace_module
from xjax._src.core.avals import ShapedArray, typed_shardings


class Absent:
    """A rule deliberately left out, with the reason (e.g. ``Absent("nonlinear")``)."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Absent({self.reason!r})"


# Reasons shared by many primitives.
NONLINEAR = Absent("nonlinear: reverse mode goes through its jvp")
NOT_DIFFERENTIABLE = Absent("integer or boolean output: no derivative")

_RULES = ("abstract_eval", "impl", "lower", "jvp", "transpose", "batch")

registry: dict[str, "Primitive"] = {}


class Primitive:
    """An operation of the lax layer.

    Parameters
    ----------
    name : str
        The name jaxprs print (JAX's lax name).
    abstract_eval, impl, lower, jvp, transpose, batch : callable or Absent
        The rules; every one must be given (an ``Absent`` says why one is missing).
    multiple_results : bool
        Whether ``bind`` returns a list of outputs.
    hidden_params : tuple
        Params jaxprs leave out, as JAX prints them: a name (hidden while None) or a
        ``(name, default)`` pair (hidden while equal to default; ``...`` hides it always).
        A subclass whose printed params are not its equations' params (JAX prints
        ``custom_jvp_call`` with the function's and rules' names) defines
        ``printed_params(params) -> dict``.
    sharding_rule : callable, FROM_ABSTRACT_EVAL or None
        ``rule(*avals, **params)``: the result's sharding (one per result for several), a
        ``NamedSharding`` or None, when an operand's type is split over Explicit mesh axes
        (raising ``ShardingTypeError`` where JAX does); ``FROM_ABSTRACT_EVAL`` where the
        abstract evaluation types the results itself (primitives holding jaxprs); None:
        the results' types are not split (see ``abstract_eval_typed``).
    """

    __slots__ = ("name", "multiple_results", "hidden_params", "sharding_rule") + _RULES + (
        "__weakref__",)
    # JAX's flags for primitives that call (or map) a jaxpr given as ``call_jaxpr``; none of
    # xjax's primitives is one (jit's call holds a closed ``jaxpr``, as JAX's pjit does)
    call_primitive = False
    map_primitive = False

    def __init__(self, name: str, *, abstract_eval, impl, lower, jvp, transpose, batch,
                 multiple_results: bool = False, hidden_params: tuple = (),
                 sharding_rule=None):
        self.name = name
        self.sharding_rule = sharding_rule
        self.abstract_eval = abstract_eval
        self.impl = impl
        self.lower = lower
        self.jvp = jvp
        self.transpose = transpose
        self.batch = batch
        self.multiple_results = multiple_results
        self.hidden_params = hidden_params
        for rule in _RULES:
            value = getattr(self, rule)
            if not (callable(value) or isinstance(value, Absent)):
                raise TypeError(f"primitive {name}: rule {rule} must be callable or Absent, "
                                f"got {value!r}")
        if name in registry:
            raise ValueError(f"primitive {name!r} is defined twice")
        registry[name] = self

    def bind(self, *args, **params):
        """Apply the primitive under the current trace (eager, staging, jvp, vmap, ...)."""
        return trace_module.ctx.trace.process_primitive(self, args, params)

    def get_bind_params(self, params) -> dict:
        """What rebinding an equation takes, as in the JAX release xjax matches: the
        ``bind_params`` of ``bind(*args, **bind_params)``. xjax's primitives take their
        jaxprs as params, so these are the equation's (``custom_jvp_call`` alone trades its
        jaxpr for ``subfuns``, as JAX's does)."""
        return dict(params)

    def __repr__(self) -> str:
        return self.name


# The sharding rule of primitives whose abstract evaluation types its results itself.
FROM_ABSTRACT_EVAL = "from abstract_eval"


def abstract_eval_typed(primitive, avals, params):
    """``primitive``'s result avals for operand ``avals``, with the shardings its
    ``sharding_rule`` gives them when an operand's type is split (what tracing records).
    A primitive without a rule gives unsplit result types: a type that says less than
    JAX's, never one that is wrong (the values are the partitioner's either way)."""
    out = primitive.abstract_eval(*avals, **params)
    if not typed_shardings[0] and primitive not in split_by_params:
        return out
    rule = getattr(primitive, "sharding_rule", None)  # (jax.extend primitives have none)
    if rule is FROM_ABSTRACT_EVAL or not (
            any(getattr(a, "_sharding", None) is not None for a in avals)
            or params.get("sharding") is not None or params.get("out_sharding") is not None
            or primitive in split_by_params):
        return out
    shardings = None if rule is None else rule(*avals, **params)
    if not primitive.multiple_results:
        return out.with_sharding(shardings) if isinstance(out, ShapedArray) else out
    if shardings is None:
        shardings = [None] * len(out)
    return [o.with_sharding(s) if isinstance(o, ShapedArray) else o
            for o, s in zip(out, shardings, strict=True)]


# Primitives whose params alone may split their results' types (device_put onto a
# NamedSharding): their rule runs even when no operand's type is split.
split_by_params: set = set()

# Primitives whose eager application on large operands runs as a cached XLA executable
# (``interpreters.eval``): the lax modules add the elementwise family and select.
compiled_when_large: set = set()

# Primitives whose eager application always runs their impl on host values, even where
# eager operations run compiled on a GPU: they call a Python function (the callbacks).
applied_on_host: set = set()
