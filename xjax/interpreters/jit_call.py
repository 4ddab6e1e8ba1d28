"""The ``jit`` call primitive and compilation of closed jaxprs with XLA."""

from __future__ import annotations

import numpy as np

from xjax.core.array import Array
from xjax.core.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from xjax.core.primitive import BATCH_TODO, JVP_TODO, TRANSPOSE_TODO, Primitive
from xjax.core.trace import Trace
from xjax.lowering.lower_jaxpr import lower_jaxpr_function, lower_to_module
from xjax.lowering.stablehlo import aval_type


class CompiledFunction:
    """An XLA executable for a closed jaxpr, with the constants passed as leading arguments."""

    __slots__ = ("executable", "const_args", "in_avals", "out_avals", "text")

    def __init__(self, executable, const_args, in_avals, out_avals, text):
        self.executable = executable
        self.const_args = [_runtime_value(c, None) for c in const_args]
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.text = text

    def execute_flat(self, args):
        """Run on flat operands (Arrays, NumPy values, Python scalars); returns device
        buffers without waiting for the computation."""
        values = self.const_args + [_runtime_value(a, aval)
                                    for a, aval in zip(args, self.in_avals, strict=True)]
        return self.executable.execute(values)

    def __call__(self, *args):
        buffers = self.execute_flat(args)
        return [Array._from_buffer(b, a) for b, a in zip(buffers, self.out_avals, strict=True)]


def _runtime_value(x, aval):
    """What the runtime takes for an operand: a device buffer or a contiguous NumPy array of
    the dtype the executable was compiled for."""
    if type(x) is Array:
        return x._buffer if x._buffer is not None else np.ascontiguousarray(x._npy)
    dtype = None if aval is None else aval.dtype
    return np.ascontiguousarray(np.asarray(x, dtype=dtype))


def compile_closed_jaxpr(closed: ClosedJaxpr, name: str) -> CompiledFunction:
    """Lower ``closed`` to StableHLO and compile it for the default device."""
    from xjax.runtime import get_client
    text, const_args = lower_to_module(closed, name)
    executable = get_client().compile(text)
    return CompiledFunction(executable, const_args, closed.in_avals, closed.out_avals, text)


# -- the call primitive (named "jit" as JAX 0.10 prints it) --

def _jit_abstract_eval(*avals, jaxpr: ClosedJaxpr, name: str):
    return jaxpr.out_avals


_impl_cache: dict = {}


def _jit_impl(*values, jaxpr: ClosedJaxpr, name: str):
    compiled = _impl_cache.get(id(jaxpr))
    if compiled is None or compiled[0] is not jaxpr:
        compiled = _impl_cache[id(jaxpr)] = (jaxpr, compile_closed_jaxpr(jaxpr, name))
    return [b.to_numpy() for b in compiled[1].execute_flat(values)]


def _jit_lower(ctx, *operands, jaxpr: ClosedJaxpr, name: str):
    module = ctx.module
    cache_key = ("jit", id(jaxpr.jaxpr))
    callee = module.cache.get(cache_key)
    if callee is None:
        inner = _closed_to_open(jaxpr)
        callee = lower_jaxpr_function(module, name, inner).name
        module.cache[cache_key] = callee
    out_types = [aval_type(a) for a in ctx.avals_out]
    return ctx.builder.op("func.call", operands, out_types, {"callee": f"@{callee}"})


def _closed_to_open(closed: ClosedJaxpr) -> Jaxpr:
    if closed.consts:
        raise ValueError("the jit primitive expects a jaxpr whose consts are arguments")
    return closed.jaxpr


pjit_p = Primitive(
    "jit",
    abstract_eval=_jit_abstract_eval,
    impl=_jit_impl,
    lower=_jit_lower,
    jvp=JVP_TODO,
    transpose=TRANSPOSE_TODO,
    batch=BATCH_TODO,
    multiple_results=True,
)


def consts_as_args(closed: ClosedJaxpr):
    """Turn a closed jaxpr's constvars into leading invars: ``(ClosedJaxpr, consts)``."""
    jaxpr = closed.jaxpr
    open_jaxpr = Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns,
                       jaxpr.debug_info)
    return ClosedJaxpr(open_jaxpr, []), list(closed.consts)


def inline_call(closed: ClosedJaxpr, *args):
    """Evaluate a closed jaxpr under the current trace (used when inlining)."""
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)
