"""``xjax.interpreters.mlir``: lowering rules of primitives, as ``jax.interpreters.mlir``.

xjax writes StableHLO as text and has no MLIR Python bindings, so the lowering rules it
accepts are the ones written as JAX code: ``register_lowering(p, lower_fun(fun))`` lowers
each application of ``p`` by tracing ``fun`` (written with ``xjax.numpy``/``xjax.lax``) on
the operands' shapes and emitting the traced program in place. Other rules run with a
context holding ``avals_in``, ``avals_out`` and ``module_context``, and may call
``emit_python_callback`` (a host callback, as Equinox's ``noinline`` lowers); a rule that
builds MLIR operations itself (``hlo.AddOp(...)``) raises NotImplementedError when it runs.

>>> import numpy as np, xjax, xjax.numpy as jnp
>>> from xjax.core import ShapedArray
>>> from xjax.extend.core import Primitive
>>> from xjax.interpreters import mlir
>>> cube_p = Primitive("cube")
>>> _ = cube_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
>>> _ = mlir.register_lowering(cube_p, mlir.lower_fun(lambda x: x * x * x,
...                                                    multiple_results=False))
>>> xjax.jit(cube_p.bind)(2.0)
Array(8., dtype=float32)
"""

from __future__ import annotations

import numpy as np

from xjax._src.core.primitive import Absent, Primitive
from xjax._src.higher_order.callbacks import emit_numpy_callback
from xjax._src.core.trace import _Context, set_current_trace
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body
from xjax._src.runtime.client import default_backend
from xjax._src.interpreters.staging import trace_to_jaxpr

__all__ = ["LoweringFunction", "LoweringRuleContext", "ModuleContext", "emit_python_callback",
           "lower_fun", "register_lowering"]

# platform names as register_lowering takes them -> xjax's backend names
_PLATFORM_ALIASES = {"cuda": "gpu", "rocm": "gpu", "gpu": "gpu", "cpu": "cpu", "tpu": "tpu"}

# primitive -> {platform (None: any) -> rule}
_platform_rules: dict = {}
# xjax primitive -> the lowering it was defined with (xjax's convention)
_native_rules: dict = {}


class LoweringFunction:
    """A lowering rule made by :func:`lower_fun`: lowers a primitive by tracing ``fun``."""

    __slots__ = ("fun", "multiple_results")

    def __init__(self, fun, multiple_results: bool):
        self.fun = fun
        self.multiple_results = multiple_results

    def lower_into(self, name: str, ctx, operands, params) -> list:
        """Emit ``fun`` applied to ``operands`` (values of ``ctx.builder``); return the
        list of its results."""

        def flat(*xs):
            out = self.fun(*xs, **params)
            return list(out) if self.multiple_results else [out]
        with set_current_trace(_Context.trace):  # trace from the root, whatever is running
            closed = trace_to_jaxpr(flat, list(ctx.avals_in))
        _check_out_avals(name, closed.jaxpr.out_avals, ctx.avals_out)
        consts = [ctx.builder.constant(np.asarray(c)) for c in closed.consts]
        return lower_jaxpr_body(ctx.builder, closed.jaxpr, consts, list(operands))

    def __call__(self, ctx, *operands, **params) -> list:
        """Lower into ``ctx`` (an xjax LoweringContext); a list of results, as JAX's
        lowering rules return."""
        return self.lower_into(getattr(self.fun, "__name__", "lower_fun"), ctx, operands,
                               params)

    def __repr__(self) -> str:
        return f"lower_fun({getattr(self.fun, '__name__', self.fun)!r})"


def _check_out_avals(name: str, got, expected) -> None:
    got = [(tuple(a.shape), a.dtype) for a in got]
    want = [(tuple(a.shape), a.dtype) for a in expected]
    if got != want:
        shown = lambda avals: ", ".join(f"{d.name}{list(s)}" for s, d in avals)  # noqa: E731
        raise TypeError(f"the lowering of primitive '{name}' (lower_fun) returns "
                        f"[{shown(got)}], but its abstract evaluation says [{shown(want)}]")


def lower_fun(fun, multiple_results: bool = True) -> LoweringFunction:
    """A lowering rule that lowers a primitive by tracing ``fun(*operands, **params)``.

    Parameters
    ----------
    fun : callable
        Written with ``xjax.numpy`` / ``xjax.lax``; returns one array, or a sequence of
        arrays when ``multiple_results``.
    multiple_results : bool
        Whether ``fun`` returns a sequence (JAX's default, True).
    """
    if not callable(fun):
        raise TypeError(f"lower_fun expects a callable, got {fun!r}")
    return LoweringFunction(fun, bool(multiple_results))


def register_lowering(primitive, rule, platform: str | None = None, **_options):
    """Lower ``primitive`` with ``rule`` (on ``platform`` only, when given: ``"cpu"``,
    ``"cuda"``, ``"rocm"``, ``"tpu"``). Returns ``rule``.

    Rules made by :func:`lower_fun` and rules that emit host callbacks
    (:func:`emit_python_callback`) run in xjax; a rule that builds MLIR operations raises
    NotImplementedError when a program using ``primitive`` is compiled.
    """
    if not isinstance(primitive, Primitive):
        raise TypeError(f"register_lowering expects a primitive, got {primitive!r}")
    if not callable(rule):
        raise TypeError(f"lowering rule for '{primitive.name}' must be callable, got {rule!r}")
    if platform is not None and platform not in _PLATFORM_ALIASES:
        raise NotImplementedError(f"Unregistered platform {platform}")
    if primitive not in _platform_rules and not getattr(primitive.lower, "dispatching", False):
        # an xjax primitive keeps its own lowering for the platforms not registered here
        _native_rules[primitive] = primitive.lower
    rules = _platform_rules.setdefault(primitive, {})
    rules[None if platform is None else _PLATFORM_ALIASES[platform]] = rule
    primitive.lower = dispatching_lowering(primitive)
    return rule


def has_lowering(primitive) -> bool:
    """Whether a lowering rule was registered for ``primitive`` with :func:`register_lowering`."""
    return bool(_platform_rules.get(primitive))


class ModuleContext:
    """What a JAX lowering rule reaches through ``ctx.module_context``: the place to keep
    objects alive as long as the compiled program (the host functions of callbacks)."""

    __slots__ = ("platforms",)
    _kept: list = []  # xjax's host-function table lives for the process; so do these

    def __init__(self, platform: str):
        self.platforms = (platform,)

    def add_keepalive(self, keepalive) -> None:
        if keepalive is not None:
            ModuleContext._kept.append(keepalive)


class LoweringRuleContext:
    """The ``ctx`` a lowering rule written for JAX receives: the equation's ``avals_in``
    and ``avals_out``, ``module_context``, and xjax's own context for xjax's helpers."""

    __slots__ = ("lowering", "avals_in", "avals_out", "module_context")

    def __init__(self, lowering, platform: str):
        self.lowering = lowering
        self.avals_in = tuple(lowering.avals_in)
        self.avals_out = tuple(lowering.avals_out)
        self.module_context = ModuleContext(platform)


def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, *,
                         has_side_effect: bool, partitioned: bool = False, sharding=None,
                         **_options):
    """Emit a call of ``callback`` on the host into a lowering rule's ``ctx``, as
    ``jax.interpreters.mlir.emit_python_callback``: ``callback`` receives the operands as
    NumPy arrays and returns a sequence of arrays of ``result_avals``.

    Returns ``(results, token, keepalive)``; the token is None (xjax threads the tokens of
    side-effecting callbacks itself) and so is the keepalive.
    """
    if token is not None:
        raise NotImplementedError("emit_python_callback with a token: xjax orders host "
                                  "callbacks itself; pass token=None")
    lowering = ctx.lowering if isinstance(ctx, LoweringRuleContext) else ctx
    results = emit_numpy_callback(lowering, list(operands), list(operand_avals), callback,
                                  list(result_avals), side_effect=has_side_effect)
    return results, None, None


def _run_jax_rule(primitive, rule, ctx, platform, operands, params) -> list:
    """Run a lowering rule written for JAX: it may use what this module provides
    (``emit_python_callback``, ``lower_fun``); MLIR's own builders are not here."""
    try:
        return list(rule(LoweringRuleContext(ctx, platform), *operands, **params))
    except AttributeError as error:
        if "no MLIR Python bindings" not in str(error):
            raise
        raise NotImplementedError(
            f"lowering rule {getattr(rule, '__name__', rule)!r} of primitive "
            f"'{primitive.name}' builds MLIR operations with MLIR's Python bindings, "
            "which xjax does not have. xjax lowers a primitive by tracing JAX code: "
            "register mlir.lower_fun(fun, multiple_results=...) instead, with fun "
            "written with xjax.numpy / xjax.lax.") from error


def _current_platform() -> str:
    return default_backend()


def dispatching_lowering(primitive):
    """xjax's lowering rule for ``primitive``: runs the rule registered for the platform."""

    def lower(ctx, *operands, **params):
        platform = _current_platform()
        rules = _platform_rules.get(primitive, {})
        rule = rules.get(platform, rules.get(None))
        native = _native_rules.get(primitive)
        if rule is None and native is not None and not isinstance(native, Absent):
            return native(ctx, *operands, **params)
        if rule is None:
            shown = "cuda" if platform == "gpu" else platform  # JAX names the GPU plugin
            raise NotImplementedError(f"MLIR translation rule for primitive "
                                      f"'{primitive.name}' not found for platform {shown}")
        if isinstance(rule, LoweringFunction):
            outs = rule.lower_into(primitive.name, ctx, operands, params)
        else:
            outs = _run_jax_rule(primitive, rule, ctx, platform, operands, params)
        return outs if primitive.multiple_results else outs[0]
    lower.dispatching = True
    return lower


def __getattr__(name: str):
    if name in ("ir", "hlo", "aval_to_ir_type",
                "ir_constant", "dense_int_array", "i32_attr", "custom_call"):
        raise AttributeError(f"xjax.interpreters.mlir has no '{name}': xjax has no MLIR "
                             "Python bindings; write lowering rules with lower_fun or "
                             "emit_python_callback")
    raise AttributeError(f"module 'xjax.interpreters.mlir' has no attribute '{name}'")
