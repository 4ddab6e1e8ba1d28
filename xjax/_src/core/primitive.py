"""Primitives: named operations whose rules (abstract eval, impl, lowering, jvp, transpose,
batching) are given once, at definition, as required keyword arguments (DESIGN.md §4)."""

from __future__ import annotations

from xjax._src.core import trace as trace_module


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
    """

    __slots__ = ("name", "multiple_results", "hidden_params") + _RULES + ("__weakref__",)
    # JAX's flags for primitives that call (or map) a jaxpr given as ``call_jaxpr``; none of
    # xjax's primitives is one (jit's call holds a closed ``jaxpr``, as JAX's pjit does)
    call_primitive = False
    map_primitive = False

    def __init__(self, name: str, *, abstract_eval, impl, lower, jvp, transpose, batch,
                 multiple_results: bool = False, hidden_params: tuple = ()):
        self.name = name
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


# Primitives whose eager application on large operands runs as a cached XLA executable
# (``interpreters.eval``): the lax modules add the elementwise family and select.
compiled_when_large: set = set()

# Primitives whose eager application always runs their impl on host values, even where
# eager operations run compiled on a GPU: they call a Python function (the callbacks).
applied_on_host: set = set()
