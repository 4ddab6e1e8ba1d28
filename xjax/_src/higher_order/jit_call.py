"""The ``jit`` call primitive and compilation of closed jaxprs with XLA.

The call primitive holds a closed jaxpr (whose consts are passed as leading operands) and
has every rule, so ``jit`` composes with the transformations: jvp (trace the jvp of the
inner jaxpr), partial evaluation (split the inner jaxpr into known and unknown parts), and
transpose (trace the backward pass of the inner linear jaxpr).
"""

from __future__ import annotations

import functools
import time
import weakref
import numpy as np

from xjax._src.core import dtypes
from xjax._src.runtime.live_executables import BoundedCache
from xjax._src.core.array import Array, as_numpy
from xjax._src.core.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from xjax._src.higher_order.primitive import HigherOrderPrimitive
from xjax._src.lax.batch_rules import NeedsTrace
from xjax._src.core.trace import set_current_trace
from xjax._src.core.config import config
from xjax._src.lowering import effects
from xjax._src.lowering.lower_jaxpr import lower_jaxpr_body, lower_jaxpr_function, lower_module
from xjax._src.lowering.stablehlo import aval_type
from xjax._src.core import monitoring as _monitoring
from xjax._src.runtime.client import default_device
from xjax._src.core.ad_util import get_aval
from xjax._src.core.jaxpr import JaxprEqn, Var
from xjax._src.lax.batch_rules import move_axis, not_mapped
from xjax._src.runtime.compilation_cache import compile_or_load
from xjax._src.interpreters.batching import batch_flat
from xjax._src.interpreters.jvp import Zero, instantiate, jvp_flat, tangent_aval
from xjax._src.interpreters.partial_eval import partial_eval_jaxpr
from xjax._src.interpreters.staging import StagingTrace, trace_to_jaxpr
from xjax._src.interpreters.transpose import UndefinedPrimal, backward_pass, is_undefined


class CompiledFunction:
    """An XLA executable for a closed jaxpr, with the constants passed as leading arguments.

    ``donated`` lists the positions (among the jaxpr's inputs) whose buffers the program may
    reuse: an Array passed there is deleted once XLA has taken its buffer.
    """

    __slots__ = ("executable", "const_args", "in_avals", "out_avals", "text", "donated",
                 "float0_outputs")

    def __init__(self, executable, const_args, in_avals, out_avals, text, donated=()):
        self.executable = executable
        self.const_args = [_runtime_value(c, None) for c in const_args]
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self.text = text
        self.donated = tuple(donated)
        self.float0_outputs = tuple(i for i, aval in enumerate(out_avals)
                                    if aval.dtype == dtypes.float0)

    def execute_flat(self, args):
        """Run on flat operands (Arrays, NumPy values, Python scalars); returns device
        buffers without waiting for the computation."""
        return self._run_flat(args)

    def _run_flat(self, args):
        # execute_flat's body, which __call__ shares: the profiler's recorder wraps both
        # public methods, and a call must be recorded once.
        if self.donated:
            return self._execute_donating(args)
        values = self.const_args + [_runtime_value(a, aval)
                                    for a, aval in zip(args, self.in_avals, strict=True)]
        return self.executable.execute(values)

    def _execute_donating(self, args):
        donated_arrays = []
        for i in self.donated:
            x = args[i]
            if type(x) is Array:
                x._device_buffer(may_alias=False)  # a host value: donate a device copy
                donated_arrays.append(x)
        values = [_runtime_value(a, aval) for a, aval in zip(args, self.in_avals, strict=True)]
        outs = self.executable.execute(self.const_args + values)
        for x in donated_arrays:  # XLA took the buffer (the runtime marked it deleted)
            if x._buffer.is_deleted():
                x.delete()
        return outs

    def __call__(self, *args):
        # Every jitted call's path: Arrays on the device run in C (without donation); NumPy
        # values, host-resident Arrays and donation take execute_flat's path.
        outs = None if self.donated else self.executable.call_arrays(
            self.const_args, args, self.in_avals, self.out_avals)
        if outs is None:
            from_buffer = Array._from_buffer
            outs = [from_buffer(b, a)
                    for b, a in zip(self._run_flat(args), self.out_avals, strict=True)]
        if self.float0_outputs:
            self._float0_as_numpy(outs)
        return outs

    def _float0_as_numpy(self, outs):
        """Give ``float0`` outputs as NumPy zeros, as JAX does: no device array has that
        dtype, and the program's placeholder buffer holds no data."""
        for i in self.float0_outputs:
            outs[i] = np.zeros(self.out_avals[i].shape, dtypes.float0)


_UNRECORDED_METHODS = {"__call__": CompiledFunction.__call__,
                       "execute_flat": CompiledFunction.execute_flat}


def set_execution_recorder(record) -> None:
    """Call ``record(compiled, start_ns, end_ns)`` after each execution of a compiled program
    (the profiler's trace), or stop with ``record=None``: the unrecorded methods cost
    nothing extra."""
    for name, method in _UNRECORDED_METHODS.items():
        if record is None:
            setattr(CompiledFunction, name, method)
        else:
            setattr(CompiledFunction, name, _recorded(method, record))


def _recorded(method, record):
    @functools.wraps(method)
    def recorded(self, *args):
        start = time.time_ns()
        try:
            return method(self, *args)
        finally:
            record(self, start, time.time_ns())
    return recorded


def _runtime_value(x, aval):
    """What the runtime takes for an operand: a device buffer (an Array's, made once and
    kept), or a contiguous NumPy array of the dtype the executable was compiled for, which
    the runtime copies unless nothing can write it."""
    if type(x) is Array:
        return x._device_buffer()
    dtype = None if aval is None else aval.dtype
    if dtype == dtypes.float0:  # no data: the program takes booleans in its place (i1)
        return np.zeros(np.shape(x), np.bool_)
    return np.ascontiguousarray(np.asarray(x, dtype=dtype))


def compile_closed_jaxpr(closed: ClosedJaxpr, name: str, donated=None,
                         compiler_options=None) -> CompiledFunction:
    """Lower ``closed`` to StableHLO and compile it for the default device.

    ``donated`` flags the inputs whose buffers the caller donates (``jit``'s
    ``donate_argnums``); ``compiler_options`` are XLA options by name (AOT ``compile``'s);
    the persistent compilation cache is used when configured.
    """
    from xjax._src.transformations.debug_flags import compile_timer  # transformations is a higher layer than higher_order
    platform = default_device().platform
    with compile_timer(name, closed.in_avals):  # jax_log_compiles
        if _monitoring.active:  # xjax.monitoring's compile events (JAX's names)
            with _monitoring.timed(_monitoring.JAXPR_TO_MLIR_MODULE_EVENT, f"jit({name})"):
                lowered = lower_module(closed, name, donated, platform=platform)
            with _monitoring.timed(_monitoring.BACKEND_COMPILE_EVENT, f"jit({name})"):
                executable = compile_text(lowered.text, _options(lowered, compiler_options))
        else:
            lowered = lower_module(closed, name, donated, platform=platform)
            executable = compile_text(lowered.text, _options(lowered, compiler_options))
    n_consts = len(lowered.const_args)
    if lowered.donated_args:
        executable._set_donated(lowered.donated_args)
    return CompiledFunction(executable, lowered.const_args, closed.in_avals, closed.out_avals,
                            lowered.text, [i - n_consts for i in lowered.donated_args])


def _options(lowered, compiler_options):
    """The module's own XLA options under the caller's (which win)."""
    return merge_options(lowered.compiler_options, compiler_options)


def merge_options(under, over):
    """XLA options ``under`` with ``over``'s on top (either may be None)."""
    if not under:
        return over or None
    return {**under, **(over or {})}


# Options JAX applies to XLA's ExecutableBuildOptions rather than its DebugOptions.
_BUILD_OPTIONS = ("exec_time_optimization_effort", "memory_fitting_effort",
                  "optimization_level", "memory_fitting_level")


def check_compiler_options(options) -> dict:
    """``options`` (a mapping of XLA option names to values) as a dict; NotImplementedError
    for the options JAX applies to XLA's build options."""
    if not hasattr(options, "items"):
        raise TypeError(f"compiler_options must be a dict of XLA option names to values, "
                        f"got {type(options).__name__}")
    unsupported = sorted(name for name in options if name in _BUILD_OPTIONS)
    if unsupported:
        raise NotImplementedError(
            f"compiler_options {unsupported}: JAX sets these on XLA's build options, which "
            "xjax's compile does not write; other options are passed to XLA by name")
    return dict(options)


_compile_wrapper = []  # set_compile_wrapper's


def set_compile_wrapper(wrapper) -> None:
    """Route every compile through ``wrapper(client, text, compiler_options, compile)``, where
    ``compile(client, text, compiler_options)`` compiles as without it (``None``: stop).
    Libraries restrict or count compiles this way (Chex's ``restrict_backends``)."""
    _compile_wrapper[:] = [] if wrapper is None else [wrapper]


def compile_text(text: str, compiler_options=None):
    """Compile StableHLO text on the default client (with XLA options by name, if any),
    through the persistent compilation cache when ``jax_compilation_cache_dir`` is set."""
    device = default_device()  # jax_default_device, else the default backend's first
    client = device.client
    compile_there = (compile_on_client if device is client.devices[0]
                     else functools.partial(compile_on_client, device=device))
    if _compile_wrapper:
        return _compile_wrapper[0](client, text, compiler_options, compile_there)
    return compile_there(client, text, compiler_options)


def compile_on_client(client, text: str, compiler_options=None, device=None):
    """:func:`compile_text` on ``client`` (for ``device``, default its first), without the
    wrapper."""
    cache_dir = config.jax_compilation_cache_dir
    if _cache_events_pending or _monitoring.active:
        _record_cache_request()
    if cache_dir is None or not config.jax_enable_compilation_cache:
        return client.compile(text, device, compiler_options=compiler_options)
    return compile_or_load(
        client, text, cache_dir, device=device, extra_key=_cache_key_extra(),
        min_compile_time_secs=config.jax_persistent_cache_min_compile_time_secs,
        min_entry_size_bytes=config.jax_persistent_cache_min_entry_size_bytes,
        monitor=_monitoring if _monitoring.active else None,
        compiler_options=compiler_options)


# -- xjax.monitoring: the compilation-cache events JAX records per compile --

_cache_events_pending = True  # the once-per-process event is still to be recorded


def _record_cache_request():
    """JAX's adoption events: once per process whether the cache is enabled, then one
    ``compile_requests_use_cache`` per compile while it is (with or without a directory)."""
    global _cache_events_pending
    enabled = config.jax_enable_compilation_cache
    if _cache_events_pending:
        _cache_events_pending = False
        _monitoring.record_event("/jax/compilation_cache/tasks_using_cache" if enabled
                                 else "/jax/compilation_cache/task_disabled_cache")
    if enabled:
        _monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")


def reset_cache_events() -> None:
    """Record the once-per-process cache adoption event again at the next compile (the
    compilation cache's ``reset_cache``)."""
    global _cache_events_pending
    _cache_events_pending = True


def _cache_key_extra() -> str:
    """What besides the program text a cached executable depends on: xjax's version and the
    flags that change what a program means."""
    global _XJAX_VERSION
    if _XJAX_VERSION is None:
        import importlib.metadata
        try:
            _XJAX_VERSION = importlib.metadata.version("xjax")
        except importlib.metadata.PackageNotFoundError:
            _XJAX_VERSION = "unknown"
    return (f"xjax={_XJAX_VERSION};x64={config.jax_enable_x64};"
            f"threefry_partitionable={config.jax_threefry_partitionable}")


_XJAX_VERSION = None


# -- the call primitive (named "jit" as JAX 0.10 prints it) --

def _jit_abstract_eval(*avals, jaxpr: ClosedJaxpr, name: str):
    return jaxpr.out_avals


_impl_cache = BoundedCache(256)  # id(jaxpr) -> (jaxpr, its executable)
# Jaxprs of the nested jits jnp functions stage (as JAX's do): evaluated with the eager
# (NumPy) interpreter when an eager higher-order primitive (a scan body, say) meets one,
# as the same jnp call would run outside it, instead of compiling each.
_eager_inlined: weakref.WeakSet = weakref.WeakSet()  # closed jaxprs (a mark, not a cache)


def inline_when_eager(closed: ClosedJaxpr) -> None:
    """Evaluate ``closed`` eagerly (not compiled) where its call is not itself compiled."""
    _eager_inlined.add(closed)


def _jit_impl(*values, jaxpr: ClosedJaxpr, name: str):
    if jaxpr in _eager_inlined:
        outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *values)
        return [as_numpy(v) for v in outs]
    compiled = _impl_cache.get(id(jaxpr))
    if compiled is None or compiled[0] is not jaxpr:
        compiled = _impl_cache[id(jaxpr)] = (jaxpr, compile_closed_jaxpr(jaxpr, name))
    return [b.to_numpy() for b in compiled[1].execute_flat(values)]


def _jit_lower(ctx, *operands, jaxpr: ClosedJaxpr, name: str):
    """A ``func.call`` of the jaxpr lowered once per module. With side effects inside, the
    callee takes the caller's current token first and returns its last one first, so its
    callbacks stay ordered with the caller's."""
    module = ctx.module
    ordered = effects.has_effects(jaxpr.jaxpr)
    cache_key = ("jit", id(jaxpr.jaxpr))
    callee = module.cache.get(cache_key)
    if callee is None:
        if jaxpr.consts:
            raise ValueError("the jit primitive expects a jaxpr whose consts are arguments")
        lower = _lower_threading_token if ordered else lower_jaxpr_function
        callee = lower(module, name, jaxpr.jaxpr).name
        module.cache[cache_key] = (callee, jaxpr)
    else:
        callee = callee[0]
    out_types = [aval_type(a) for a in ctx.avals_out]
    if not ordered:
        return ctx.builder.op("func.call", operands, out_types, {"callee": f"@{callee}"})
    results = ctx.builder.op("func.call", [effects.current_token(ctx.builder), *operands],
                             [effects.TOKEN_TYPE, *out_types], {"callee": f"@{callee}"})
    effects.set_token(ctx.builder, results[0])
    return results[1:]


def _lower_threading_token(module, name: str, jaxpr: Jaxpr):
    """Like ``lower_jaxpr_function``, with a leading token argument and result."""
    arg_types = [aval_type(v.aval) for v in jaxpr.constvars + jaxpr.invars]
    fb = module.function(name, [effects.TOKEN_TYPE, *arg_types], "private")
    effects.set_token(fb, fb.args[0])
    n_consts = len(jaxpr.constvars)
    outs = lower_jaxpr_body(fb, jaxpr, fb.args[1:1 + n_consts], fb.args[1 + n_consts:])
    fb.ret([effects.current_token(fb), *outs])
    return fb


def _trace_flat(fun, in_avals, name):
    """Trace ``fun`` to a closed jaxpr whose consts are leading arguments, plus the consts."""
    return consts_as_args(trace_to_jaxpr(fun, in_avals))


_derived_cache: dict = {}


def _derived(kind, jaxpr, key, make):
    """Memoize a jaxpr derived from ``jaxpr`` (its jvp, partial eval, transpose)."""
    full_key = (kind, id(jaxpr), key)
    hit = _derived_cache.get(full_key)
    if hit is not None and hit[0] is jaxpr:
        return hit[1]
    value = make()
    _derived_cache[full_key] = (jaxpr, value)
    return value


def _jit_jvp(primals, tangents, *, jaxpr: ClosedJaxpr, name: str):
    nonzero = tuple(type(t) is not Zero for t in tangents)

    def make():
        in_avals = [get_aval(p) for p in primals]
        tangent_avals = [tangent_aval(a) for a, nz in zip(in_avals, nonzero, strict=True) if nz]
        n = len(in_avals)
        out_nonzero = []

        def jvp_fun(*args):
            ps, ts_nz = args[:n], iter(args[n:])
            ts = [next(ts_nz) if nz else Zero(tangent_aval(a))
                  for a, nz in zip(in_avals, nonzero, strict=True)]
            outs, out_ts = jvp_flat(lambda *xs: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *xs),
                                    ps, ts)
            out_nonzero.extend(type(t) is not Zero for t in out_ts)
            return list(outs) + [t for t in out_ts if type(t) is not Zero]

        closed, consts = _trace_flat(jvp_fun, in_avals + tangent_avals, name)
        return closed, consts, tuple(out_nonzero)

    closed, consts, out_nonzero = _derived("jvp", jaxpr, nonzero, make)
    tangents_nz = [t for t in tangents if type(t) is not Zero]
    # The derived call keeps the user's name, as JAX's does
    outs = pjit_p.bind(*consts, *primals, *tangents_nz, jaxpr=closed, name=name)
    n_out = len(jaxpr.out_avals)
    primal_out, tangent_iter = outs[:n_out], iter(outs[n_out:])
    tangent_out = [next(tangent_iter) if nz else Zero(tangent_aval(a))
                   for a, nz in zip(jaxpr.out_avals, out_nonzero, strict=True)]
    return primal_out, tangent_out


def _jit_partial_eval(trace, args, params):
    """Under a partial-staging trace: run the known part now, stage the unknown part."""
    jaxpr, name = params["jaxpr"], params["name"]
    unknowns = tuple(trace.is_unknown(x) for x in args)

    def make():
        known, unknown, out_unknowns, n_res = partial_eval_jaxpr(jaxpr.jaxpr, unknowns)
        return ClosedJaxpr(known, []), ClosedJaxpr(unknown, []), out_unknowns, n_res

    known, unknown, out_unknowns, n_res = _derived("partial_eval", jaxpr, unknowns, make)
    known_args = [x for x, u in zip(args, unknowns, strict=True) if not u]
    with set_current_trace(trace.parent):
        known_outs = pjit_p.bind(*known_args, jaxpr=known, name=name) if known.out_avals else []
    n_known = len(known_outs) - n_res
    residuals = known_outs[n_known:]
    unknown_args = [x for x, u in zip(args, unknowns, strict=True) if u]
    unknown_outs = StagingTrace.process_primitive(trace, pjit_p, [*residuals, *unknown_args],
                                                  {"jaxpr": unknown, "name": name})
    known_iter, unknown_iter = iter(known_outs[:n_known]), iter(unknown_outs)
    return [next(unknown_iter) if u else next(known_iter) for u in out_unknowns]


def _jit_transpose(cts, *operands, jaxpr: ClosedJaxpr, name: str):
    undefined = tuple(is_undefined(o) for o in operands)
    ct_nonzero = tuple(type(c) is not Zero for c in cts)

    def make():
        known_avals = [get_aval(o) for o, u in zip(operands, undefined, strict=True) if not u]
        ct_avals = [a for a, nz in zip(jaxpr.out_avals, ct_nonzero, strict=True) if nz]
        n_known = len(known_avals)

        def transpose_fun(*args):
            known_iter, ct_iter = iter(args[:n_known]), iter(args[n_known:])
            linear_args = [UndefinedPrimal(o.aval) if u else next(known_iter)
                           for o, u in zip(operands, undefined, strict=True)]
            cts_full = [next(ct_iter) if nz else Zero(a)
                        for a, nz in zip(jaxpr.out_avals, ct_nonzero, strict=True)]
            results = backward_pass(jaxpr.jaxpr, jaxpr.consts, linear_args, cts_full)
            return [instantiate(r) for r, u in zip(results, undefined, strict=True) if u]

        return _trace_flat(transpose_fun, known_avals + ct_avals, name)

    closed, consts = _derived("transpose", jaxpr, (undefined, ct_nonzero), make)
    known_vals = [o for o, u in zip(operands, undefined, strict=True) if not u]
    cts_nz = [c for c in cts if type(c) is not Zero]
    outs = iter(pjit_p.bind(*consts, *known_vals, *cts_nz, jaxpr=closed, name=name))
    return [next(outs) if u else None for u in undefined]




def _jit_partial_eval_jaxpr(eqn, unknowns):
    """Split a jit equation of a jaxpr into a known and an unknown jit equation."""
    jaxpr, name = eqn.params["jaxpr"], eqn.params["name"]
    unknowns = tuple(unknowns)

    def make():
        known, unknown, out_unknowns, n_res = partial_eval_jaxpr(jaxpr.jaxpr, unknowns)
        return ClosedJaxpr(known, []), ClosedJaxpr(unknown, []), out_unknowns, n_res

    known, unknown, out_unknowns, n_res = _derived("partial_eval", jaxpr, unknowns, make)
    residuals = [Var(a) for a in known.out_avals[len(known.out_avals) - n_res:]]
    known_outvars = [v for v, u in zip(eqn.outvars, out_unknowns, strict=True) if not u]
    unknown_outvars = [v for v, u in zip(eqn.outvars, out_unknowns, strict=True) if u]
    known_invars = [a for a, u in zip(eqn.invars, unknowns, strict=True) if not u]
    unknown_invars = [a for a, u in zip(eqn.invars, unknowns, strict=True) if u]
    known_eqn = JaxprEqn(pjit_p, known_invars, known_outvars + residuals,
                         {"jaxpr": known, "name": name}, source_info=eqn.source_info)
    unknown_eqn = JaxprEqn(pjit_p, residuals + unknown_invars, unknown_outvars,
                           {"jaxpr": unknown, "name": name}, source_info=eqn.source_info)
    return known_eqn, unknown_eqn, out_unknowns, residuals


def _jit_batch(trace, vals, dims, *, jaxpr: ClosedJaxpr, name: str):
    """Batch the body: trace it under a BatchTrace with this trace's axis name and size.
    Batched outputs come out along axis 0; outputs the body leaves unbatched (a ``psum``
    over the name, a constant) stay unbatched, as in JAX."""
    dims = tuple(dims)
    axis_name, size = trace.axis_name, trace.axis_size

    def make():
        in_avals = [get_aval(v) for v in vals]
        out_batched = []

        def batched_fun(*xs):
            outs, out_dims = batch_flat(
                lambda *ys: eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *ys), xs, dims, axis_name,
                size)
            out_batched[:] = [d is not not_mapped for d in out_dims]
            return [o if d is not_mapped else move_axis(o, d, 0)
                    for o, d in zip(outs, out_dims, strict=True)]

        closed, consts = _trace_flat(batched_fun, in_avals, name)
        return closed, consts, tuple(out_batched)

    closed, consts, out_batched = _derived("batch", jaxpr, (dims, axis_name, size), make)
    outs = pjit_p.bind(*consts, *vals, jaxpr=closed, name=name)
    return outs, [0 if b else not_mapped for b in out_batched]


pjit_p = HigherOrderPrimitive(
    "jit",
    abstract_eval=_jit_abstract_eval,
    impl=_jit_impl,
    lower=_jit_lower,
    jvp=_jit_jvp,
    transpose=_jit_transpose,
    batch=NeedsTrace(lambda *args, **params: _jit_batch(*args, **params)),
    multiple_results=True,
    partial_eval=_jit_partial_eval, partial_eval_jaxpr=_jit_partial_eval_jaxpr)


def consts_as_args(closed: ClosedJaxpr):
    """Turn a closed jaxpr's constvars into leading invars: ``(ClosedJaxpr, consts)``."""
    jaxpr = closed.jaxpr
    open_jaxpr = Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars, jaxpr.eqns,
                       jaxpr.debug_info)
    return ClosedJaxpr(open_jaxpr, []), list(closed.consts)
