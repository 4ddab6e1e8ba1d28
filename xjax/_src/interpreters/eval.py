"""The root interpreter: runs each primitive eagerly.

On the CPU it calls the primitive's NumPy ``impl`` (no compilation, low overhead). On a GPU
default backend, with ``config.xjax_eager_via_xla``, and on large CPU arrays it runs the
primitive compiled alone by XLA (cached by primitive, params and avals), its results left
in device buffers.
"""

from __future__ import annotations

import numpy as np

from xjax._src import runtime
from xjax._src.runtime.live_executables import BoundedCache
from xjax._src.core import dtypes, errors
from xjax._src.core.array import Array, frozen_value
from xjax._src.core.primitive import applied_on_host, compiled_when_large
from xjax._src.core.avals import ShapedArray, python_scalar_aval
from xjax._src.core.config import config
from xjax._src.core.floating_errors import ignore_floating_errors, restore_floating_errors
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var
from xjax._src.core.primitive import Absent, abstract_eval_typed
from xjax._src.core.sharding_types import placement_mesh
from xjax._src.core.trace import Trace, Tracer, set_root_trace
from xjax._src.runtime.sharded import ShardedBuffer
from xjax._src.runtime.sharded import state as sharded_state


def concrete_operand(x):
    """(NumPy value, aval) of a concrete operand: an Array, a NumPy value or a Python scalar."""
    if type(x) is Array:
        npy = x._npy
        return (npy if npy is not None else x._value()), x._aval
    if isinstance(x, Tracer):
        raise errors.UnexpectedTracerError(
            f"Encountered an unexpected tracer: {x}. A function transformed by JAX had a side "
            "effect: it stored a traced value where it outlived the transformation (a global, "
            "a closure, an attribute), and the value was used after the transformation "
            "ended. Return the value from the transformed function instead.")
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        aval = python_scalar_aval(x)
        return np.asarray(x, aval.dtype), aval
    npy = np.asarray(x)
    dtype = dtypes.canonicalize_dtype(npy.dtype)
    if npy.dtype != dtype:
        npy = npy.astype(dtype)
    return frozen_value(npy, x), ShapedArray(npy.shape, dtype, False)


_new_array = object.__new__

# ``(primitive, params) -> Mesh or None``: the device mesh an application runs over by
# itself (a ``shard_map``, or a loop whose body holds one); set by ``jit_partitioned``. An
# eager application over several devices runs as one SPMD program there.
_own_mesh = None


def set_own_mesh_finder(finder) -> None:
    """Install the ``(primitive, params) -> Mesh or None`` function above."""
    global _own_mesh
    _own_mesh = finder


def _placed_elsewhere(x) -> bool:
    """Whether ``x`` is an Array over several devices, or committed to a device other
    than the default one: an eager operation on it runs there, as JAX's does (checked
    only once the process has placed something so). Uncommitted operands move."""
    if type(x) is not Array or (buffer := x._buffer) is None:
        return False
    if type(buffer) is ShardedBuffer:
        return True
    return buffer.device is not runtime.default_device() and x.committed


class EvalTrace(Trace):
    """Evaluates primitives on concrete values."""

    __slots__ = ()

    def process_primitive(self, primitive, args, params):
        if sharded_state.multi_device:
            mesh = _own_mesh(primitive, params) if _own_mesh is not None else None
            if mesh is None and primitive not in applied_on_host:
                mesh = placement_mesh()  # set_mesh's: results over its devices, as JAX's
            if mesh is not None or any(_placed_elsewhere(x) for x in args):
                # A jitted op over the operands' (or its own mesh's) devices, as JAX.
                from xjax._src.transformations.jit_partitioned import run_primitive_partitioned  # transformations is a higher layer than interpreters
                return run_primitive_partitioned(primitive, args, params, mesh)
            if (runtime.default_device().platform != "cpu"
                    and primitive not in applied_on_host):
                # On a GPU (or another device) the operands live there: the operation runs
                # compiled on it, its results stay there, as JAX's eager operations.
                return run_compiled(primitive, args, params)
        if config.xjax_eager_via_xla and primitive not in applied_on_host:
            return run_compiled(primitive, args, params)  # the GPU's eager path, forced
        if len(args) == 1 and type(x := args[0]) is Array and (npy := x._npy) is not None:
            # the common unary case, without lists
            if npy.size >= LARGE_ELEMENTS and primitive in compiled_when_large:
                return run_compiled(primitive, args, params)
            values, avals = (npy,), (x._aval,)
        else:
            values, avals = [], []
            for x in args:
                if type(x) is Array:
                    npy = x._npy
                    if ((npy.size if npy is not None else x._aval.size) >= LARGE_ELEMENTS
                            and primitive in compiled_when_large):
                        return run_compiled(primitive, args, params)
                    if npy is not None:
                        values.append(npy)
                        avals.append(x._aval)
                        continue
                elif (type(x) is np.ndarray and x.size >= LARGE_ELEMENTS
                      and primitive in compiled_when_large):
                    return run_compiled(primitive, args, params)
                npy, aval = concrete_operand(x)
                values.append(npy)
                avals.append(aval)
        out_aval = (primitive.abstract_eval(*avals, **params) if params
                    else primitive.abstract_eval(*avals))
        impl = primitive.impl
        if isinstance(impl, Absent):
            raise NotImplementedError(f"{primitive.name} has no eager implementation: "
                                      f"{impl.reason}")
        token = ignore_floating_errors()  # XLA never warns of 0/0 or overflow; NumPy would
        try:
            out = impl(*values, **params) if params else impl(*values)
        finally:
            restore_floating_errors(token)
        if primitive.multiple_results:
            return [Array._from_numpy(_as_dtype(o, a), a)
                    for o, a in zip(out, out_aval, strict=True)]
        if getattr(out, "dtype", None) is not out_aval.dtype:  # the usual case skips a call
            out = _as_dtype(out, out_aval)
        array = _new_array(Array)  # Array._from_numpy, inlined: this is the eager hot path
        array._aval = out_aval
        array._npy = out
        array._buffer = None
        return array


def _as_dtype(value, aval):
    """Guard against a NumPy impl returning another dtype (e.g. a Python scalar)."""
    dtype = getattr(value, "dtype", None)
    if dtype is aval.dtype or dtype == aval.dtype:
        return value
    if config.xjax_check_jaxprs and dtype is not None:
        raise AssertionError(f"impl returned {dtype}, abstract eval says {aval.dtype}")
    return np.asarray(value, dtype=aval.dtype)


# Executables of single primitives, the earliest compiled dropped past the bound.
_xla_primitive_cache = BoundedCache(1024)

# The primitives of ``compiled_when_large`` (elementwise, select) run as a
# cached XLA executable instead of their NumPy kernel when an operand has at least
# LARGE_ELEMENTS elements: XLA's vectorized, multi-threaded loops then beat NumPy's, as
# JAX's eager operations do (and the results are JAX's to the bit). Their results stay in
# device buffers, which the next such operation reads without a copy.
LARGE_ELEMENTS = 1 << 15


def run_compiled(primitive, args, params):
    """``primitive`` on eager operands through its cached XLA executable; results are
    Arrays over device buffers."""
    operands, avals = [], []
    for x in args:
        if type(x) is Array:
            operands.append(x)
            avals.append(x._aval)
        else:
            npy, aval = concrete_operand(x)
            operands.append(npy)
            avals.append(aval)
    outs = _compiled_primitive(primitive, avals, params)(*operands)
    return outs if primitive.multiple_results else outs[0]


def _compiled_primitive(primitive, avals, params):
    """``primitive`` alone on inputs of ``avals``, compiled with XLA (cached)."""
    key = (primitive, tuple(sorted(params.items(), key=lambda kv: kv[0])), tuple(avals),
           runtime.default_device())  # compiled for it (jax_default_device may change it)
    compiled = _xla_primitive_cache.get(key)
    if compiled is None:
        from xjax._src.higher_order.jit_call import compile_closed_jaxpr  # higher_order is a higher layer than interpreters
        compiled = _xla_primitive_cache[key] = compile_closed_jaxpr(
            single_equation_jaxpr(primitive, avals, params), primitive.name)
    return compiled


def run_primitive_with_xla(primitive, values, avals, params):
    """Compile ``primitive`` alone with XLA (cached) and run it on ``values``."""
    compiled = _compiled_primitive(primitive, avals, params)
    return [np.asarray(b.to_numpy()) for b in compiled.execute_flat(values)]


def single_equation_jaxpr(primitive, avals, params) -> ClosedJaxpr:
    """A jaxpr applying ``primitive`` once to inputs of ``avals`` (an eager call compiled
    alone)."""
    out_avals = abstract_eval_typed(primitive, avals, params)
    if not primitive.multiple_results:
        out_avals = [out_avals]
    invars = [Var(a) for a in avals]
    outvars = [Var(a) for a in out_avals]
    return ClosedJaxpr(Jaxpr([], invars, outvars, [JaxprEqn(primitive, invars, outvars,
                                                            params)]), [])


_unchecked_process_primitive = EvalTrace.process_primitive


def set_checks(checks) -> None:
    """Route every eager primitive through ``checks(run, primitive, args, params)``, where
    ``run()`` computes it (the debug flags: nans, infs, no_execution, transfer guards), or
    restore the unchecked path, which costs nothing, with ``checks=None``."""
    if checks is None:
        EvalTrace.process_primitive = _unchecked_process_primitive
        return

    def process_primitive(self, primitive, args, params):
        return checks(lambda: _unchecked_process_primitive(self, primitive, args, params),
                      primitive, args, params)
    EvalTrace.process_primitive = process_primitive


set_root_trace(EvalTrace(None))
