"""xjax's core layer (avals, arrays, jaxprs, traces, primitives), which also answers the
public names of ``jax.core`` (``ShapedArray``, ``Trace``, ``eval_jaxpr``, ...), loaded when
first read so importing a core module stays cheap and free of cycles."""

_PUBLIC = {
    "ShapedArray": "xjax.core.avals",
    "Trace": "xjax.core.trace",
    "Tracer": "xjax.core.trace",
    "ClosedJaxpr": "xjax.core.jaxpr",
    "Jaxpr": "xjax.core.jaxpr",
    "JaxprEqn": "xjax.core.jaxpr",
    "Literal": "xjax.core.jaxpr",
    "Var": "xjax.core.jaxpr",
    "DropVar": "xjax.core.jaxpr",
    "eval_jaxpr": "xjax.core.jaxpr",
    "check_jaxpr": "xjax.core.jaxpr",
    "JaxprTypeError": "xjax.core.errors",
    "ensure_compile_time_eval": "xjax.utilities",
    "DebugInfo": "xjax.interpreters.staging",
}


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'xjax.core' has no attribute '{name}'")
    import importlib
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_PUBLIC))
