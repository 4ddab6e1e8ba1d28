"""What the debugging and guard flags do: ``debug_nans``/``debug_infs``, ``no_execution``,
``no_tracing``, transfer guards, ``log_compiles``, ``explain_cache_misses``,
``check_tracer_leaks``, ``enable_checks`` and ``array_garbage_collection_guard``
(``allow_f16_reductions`` is checked by ``reduce_sum``'s abstract eval).

Every check costs nothing while its flag is at its default: a listener on the config
routes eager primitives through checks (``eval.set_checks``) only while an eager check is on,
and jitted calls test the one derived flag ``config.xjax_jit_checks`` (which also covers
``disable_jit``, the test they made before).

Transfers. A *host-to-device* transfer in xjax is a host value (a NumPy array or scalar, a
Python scalar) becoming an xjax array when computation is dispatched: an argument of a
top-level ``jit`` call, an operand of an eager primitive, an operand an eager ``xjax.numpy``
function converts (implicit transfers), or ``device_put`` (explicit). Arrays xjax creates
itself (``jnp.ones``, ``jnp.arange``) are not transfers (JAX transfers their fill constants).
A *device-to-host* transfer is reading the value of an array held only in the memory of a
non-CPU device; as in JAX, reading a CPU array is never guarded (its memory is the host's).
A *device-to-device* transfer is ``device_put`` of an array onto another device. Levels:
``"allow"``; ``"log"`` and ``"disallow"`` log or refuse implicit transfers only;
``"log_explicit"`` and ``"disallow_explicit"`` all transfers. Refusals raise
:class:`xjax.errors.JaxRuntimeError` with JAX's text.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import logging
import time
import weakref

import numpy as np

from xjax._src.core import array as array_module
from xjax._src.core.array import Array
from xjax._src.core.config import config
from xjax._src.core.pytree import tree_unflatten
from xjax._src.core.trace import Tracer, ctx as trace_ctx
from xjax._src.core.errors import JaxRuntimeError
from xjax._src.interpreters import eval as eval_interpreter
from xjax._src.core import dtypes
from xjax._src.core.jaxpr import eval_jaxpr
from xjax._src.runtime import devices
from xjax._src.transformations import jit

_flags = config.__dict__
compile_logger = logging.getLogger("xjax.interpreters.jit_call")  # the names JAX users configured before the move
trace_logger = logging.getLogger("xjax.api")
transfer_logger = logging.getLogger("xjax.transfer_guard")

# --------------------------------------------------------------------------------------------
# debug_nans / debug_infs


def special_value(values) -> str | None:
    """``"nan"`` or ``"inf"`` when an inexact value among ``values`` holds one that a
    ``debug_nans``/``debug_infs`` flag watches, else None."""
    nans, infs = _flags["jax_debug_nans"], _flags["jax_debug_infs"]
    for v in values:
        if isinstance(v, Tracer):
            continue
        v = v._value() if type(v) is Array else v
        dtype = getattr(v, "dtype", None)
        if dtype is None or dtype.kind not in "fc":
            if dtype is None or not _is_ml_float(dtype):
                continue
        v = np.asarray(v)
        if nans and np.any(np.isnan(v)):
            return "nan"
        if infs and np.any(np.isinf(v)):
            return "inf"
    return None


def _is_ml_float(dtype) -> bool:
    try:
        return dtypes.is_inexact(dtype)
    except Exception:  # an extended dtype (PRNG keys)
        return False


def _deoptimized_message(name: str, ty: str) -> str:
    return (f"{('jit(' + name + ')', ty)}. Because jax_config.debug_nans.value and/or "
            "config.jax_debug_infs is set, the de-optimized function (i.e., the function as "
            "if the `jit` decorator were removed) was called in an attempt to get a more "
            "precise error message. However, the de-optimized function did not produce "
            "invalid values during its execution. This behavior can result from `jit` "
            "optimizations causing the invalid value to be produced. It may also arise from "
            "having nan/inf literals as inputs or outputs, like "
            "`jax.jit(lambda ...: jax.numpy.nan)(...)`. \n\nIt may be possible to avoid the "
            "invalid value by removing the `jit` decorator, at the cost of losing "
            "optimizations. \n\nIf you see this error, consider opening a bug report at "
            "https://github.com/jax-ml/jax.")


def _rerun_deoptimized(name: str, ty: str, run) -> None:
    """JAX's recovery: say so, run the function op by op so the primitive producing the
    value raises, and raise the generic error if none does."""
    print("Invalid nan value encountered in the output of a jax.jit function. Calling the "
          "de-optimized version.")
    try:
        with config.override(jax_disable_jit=True):
            run()
    except (FloatingPointError, ZeroDivisionError) as e2:
        raise e2 from None
    raise FloatingPointError(_deoptimized_message(name, ty))


# --------------------------------------------------------------------------------------------
# the checked eager path

def _eager_checks(run, primitive, args, params):
    if _flags["jax_no_execution"]:
        name = f"jit({params['name']})" if primitive.name == "jit" else primitive.name
        raise RuntimeError(f"JAX tried to execute function {name}, but the no_execution "
                           "config option is set")
    if _flags["jax_transfer_guard_host_to_device"] not in (None, "allow"):
        for x in args:
            if type(x) is not Array and not isinstance(x, (Array, Tracer)):
                guard_host_to_device(x, explicit=False)
    out = run()
    if _flags["jax_debug_nans"] or _flags["jax_debug_infs"]:
        outs = out if primitive.multiple_results else (out,)
        ty = special_value(outs)
        if ty is not None:
            if primitive.name == "jit":  # a compiled call: locate the primitive op by op
                closed = params["jaxpr"]
                _rerun_deoptimized(params["name"], ty,
                                   lambda: eval_jaxpr(closed.jaxpr, closed.consts, *args))
            raise FloatingPointError(f"invalid value ({ty}) encountered in {primitive.name}")
    return out


def _install_eager_checks(name, value) -> None:
    eval_interpreter.set_checks(_eager_checks if _flags["xjax_eager_checks"] else None)


# --------------------------------------------------------------------------------------------
# jitted calls (api.PjitFunction.__call__ when config.xjax_jit_checks is set)


def checked_jit_call(jit_fun, args, kwargs):
    """A jitted call under ``disable_jit``, ``debug_nans``/``debug_infs``, ``no_execution``
    or a host-to-device transfer guard."""
    if _flags["jax_disable_jit"]:
        return jit_fun._fun(*args, **kwargs)
    entry, flat, _ = jit_fun._entry(args, kwargs)
    if type(trace_ctx.trace) is not eval_interpreter.EvalTrace:  # under a transformation: the eval trace
        outs = jit.pjit_p.bind(*entry.call_consts, *flat, jaxpr=entry.call_jaxpr,
                           name=jit_fun._name)
        return tree_unflatten(entry.out_tree, outs)
    check_execution(jit_fun._name, flat)
    outs = entry.executable(jit_fun._name)(*flat)
    check_outputs(jit_fun._name, outs, lambda: jit_fun._fun(*args, **kwargs))
    return outs[0] if entry.single_leaf else tree_unflatten(entry.out_tree, outs)


def check_execution(name: str, flat_args) -> None:
    """Before running a compiled function: ``no_execution`` and host-to-device guards."""
    if _flags["jax_no_execution"]:
        raise RuntimeError(f"JAX tried to execute function jit({name}), but the "
                           "no_execution config option is set")
    if _flags["jax_transfer_guard_host_to_device"] not in (None, "allow"):
        for x in flat_args:
            if type(x) is not Array:
                guard_host_to_device(x, explicit=False)


def check_outputs(name: str, outs, deoptimized) -> None:
    """After running a compiled function: ``debug_nans``/``debug_infs``."""
    if _flags["jax_debug_nans"] or _flags["jax_debug_infs"]:
        ty = special_value(outs)
        if ty is not None:
            _rerun_deoptimized(name, ty, deoptimized)


# --------------------------------------------------------------------------------------------
# transfer guards


def _transfer_text(x) -> str:
    try:
        aval = jit.shaped_abstractify(x)
    except TypeError:
        aval = type(x).__name__
    return (f"aval={aval!r}, dst_sharding=SingleDeviceSharding(device={devices()[0]!r}, "
            "memory_kind=device)")


def _guard(direction: str, level, explicit: bool, describe) -> None:
    if level is None or level == "allow":
        return
    if explicit and level in ("log", "disallow"):
        return  # these levels watch implicit transfers only
    text = describe()
    if level in ("disallow", "disallow_explicit"):
        raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {direction} transfer: {text}")
    transfer_logger.warning("%s transfer: %s", direction, text)


def guard_host_to_device(x, explicit: bool) -> None:
    """Apply ``jax_transfer_guard_host_to_device`` to host value ``x`` moving to a device."""
    _guard("host-to-device", _flags["jax_transfer_guard_host_to_device"], explicit,
           lambda: _transfer_text(x))


def guard_device_put(x, device) -> None:
    """The guards of an explicit ``device_put`` of leaf ``x`` to ``device`` (or default)."""
    if type(x) is Array:
        if device is None or x.is_deleted():
            return
        if x._buffer is not None and x._buffer.device != device:
            _guard("device-to-device", _flags["jax_transfer_guard_device_to_device"], True,
                   lambda: f"aval={x._aval!r}, dst_device={device!r}")
        return
    if isinstance(x, Tracer):
        return
    guard_host_to_device(x, explicit=True)


_explicit_device_get = [0]


@contextlib.contextmanager
def explicit_device_get():
    """Device-to-host reads inside the block are explicit (``device_get``)."""
    _explicit_device_get[0] += 1
    try:
        yield
    finally:
        _explicit_device_get[0] -= 1


def _device_to_host_guard(array) -> None:
    device = getattr(array._buffer, "device", None)
    if device is not None and getattr(device, "platform", "cpu") != "cpu":
        _guard("device-to-host", _flags["jax_transfer_guard_device_to_host"],
               _explicit_device_get[0] > 0, lambda: f"aval={array._aval!r}")


def _install_transfer_guards(name, value) -> None:
    d2h = _flags["jax_transfer_guard_device_to_host"] not in (None, "allow")
    array_module.set_value_guard(_device_to_host_guard if d2h else None)


# --------------------------------------------------------------------------------------------
# tracing: no_tracing, explain_cache_misses, check_tracer_leaks


def fun_sourceinfo(fun) -> str:
    """``name at file:line`` of a Python function, as JAX names traced functions."""
    name = getattr(fun, "__name__", repr(fun))
    try:
        code = inspect.unwrap(fun).__code__
        return f"{name} at {code.co_filename}:{code.co_firstlineno}"
    except (AttributeError, ValueError):
        return name


def check_no_tracing(fun) -> None:
    if _flags["jax_no_tracing"]:
        raise RuntimeError(f"re-tracing function {fun_sourceinfo(fun)} for `jit`, but "
                           "'no_tracing' is set")


def explain_cache_miss(jit_fun, key, cache) -> None:
    """Log why a jitted call missed the tracing cache (``jax_explain_cache_misses``)."""
    log = trace_logger.warning if _flags["jax_explain_cache_misses"] else trace_logger.debug
    if not trace_logger.isEnabledFor(logging.WARNING if _flags["jax_explain_cache_misses"]
                                     else logging.DEBUG):
        return
    callsite = _user_callsite()
    lines = [f"TRACING CACHE MISS at {callsite} because:"]
    fun = jit_fun._fun
    if not cache:
        lines.append(f"  never seen function:\n    {fun_sourceinfo(fun)}")
    else:
        lines.append(f"  for {fun_sourceinfo(fun)}")
        lines.append("  all previously seen cache keys differ. For the closest previous key:")
        lines.extend("  " + r for r in _closest_key_reasons(key, list(cache)))
    log("\n".join(lines))


def _user_callsite() -> str:
    frame = inspect.currentframe()
    while frame is not None:
        filename = frame.f_code.co_filename
        if "/xjax/" not in filename.replace("\\", "/"):
            return f"{filename}:{frame.f_lineno} ({frame.f_code.co_name})"
        frame = frame.f_back
    return "<unknown>"


_KEY_PARTS = ("static arguments", "input pytree", "input types", "config", "donation")


def _closest_key_reasons(key, previous) -> list:
    """Describe how ``key`` (statics, in_tree, avals, config, donation) differs from the
    previous key sharing the most parts with it."""
    def differing(old):
        return [i for i, (a, b) in enumerate(zip(key, old, strict=True)) if a != b]

    closest = min(previous, key=lambda old: len(differing(old)))
    reasons = []
    for i in differing(closest):
        if i == 2 and len(key[2]) == len(closest[2]):
            reasons.append("different input types:")
            for pos, (new, old) in enumerate(zip(key[2], closest[2], strict=True)):
                if new != old:
                    reasons.append(f"  * at flat input {pos}, now {new.str_short(True)}"
                                   f"{_weak(new)} and before {old.str_short(True)}{_weak(old)}")
        elif i == 3:
            names = ("jax_enable_x64", "jax_threefry_partitionable",
                     "jax_numpy_dtype_promotion", "jax_allow_f16_reductions",
                     "jax_default_matmul_precision")
            changed = [f"{n}: now {a!s} and before {b!s}"
                       for n, a, b in zip(names, key[3], closest[3], strict=True) if a != b]
            reasons.append("different config: " + "; ".join(changed))
        else:
            reasons.append(f"different {_KEY_PARTS[i]}: now {key[i]} and before {closest[i]}")
    return reasons


def _weak(aval) -> str:
    return "{weak_type=True}" if aval.weak_type else ""


def find_leaked_tracers(trace_ref) -> None:
    """Raise JAX's leak error if the (finished) trace ``trace_ref`` points to is still alive
    because tracers of it escaped (``jax_check_tracer_leaks``)."""
    trace = trace_ref()
    if trace is None:
        return
    del trace
    gc.collect()
    trace = trace_ref()
    if trace is None:
        return
    tracers = [r for r in gc.get_referrers(trace) if isinstance(r, Tracer)]
    if not tracers:
        return
    described = []
    for t in tracers:
        holders = [type(r).__name__ for r in gc.get_referrers(t)
                   if not inspect.isframe(r) and r is not tracers]
        described.append(f"{t!r}\n<{type(t).__name__} {id(t)}> is referred to by "
                         f"{', '.join(holders) or 'an unknown object'}")
    raise Exception(f"Leaked trace {type(trace).__name__}. Leaked tracer(s):\n\n"
                    + "\n\n".join(described) + "\n")


@contextlib.contextmanager
def tracing_checks(fun):
    """Around tracing ``fun`` for jit or make_jaxpr: ``no_tracing``, then (on success) a
    leak check of the trace. Yields a callback recording the trace to check."""
    check_no_tracing(fun)
    box = []
    yield box.append
    if box and _flags["jax_check_tracer_leaks"]:
        find_leaked_tracers(box[0])


def record_current_trace(record) -> None:
    record(weakref.ref(trace_ctx.trace))


# --------------------------------------------------------------------------------------------
# log_compiles


class compile_timer:
    """Times one compilation and logs it as JAX does: at WARNING level with
    ``jax_log_compiles`` (DEBUG otherwise)."""

    def __init__(self, name, in_avals):
        self.name, self.in_avals = name, in_avals

    def __enter__(self):
        if _flags["jax_log_compiles"]:
            compile_logger.warning(
                "Compiling jit(%s) with global shapes and types %s. Argument mapping: %s.",
                self.name, tuple(self.in_avals),
                tuple("UnspecifiedValue" for _ in self.in_avals))
        self.start = time.perf_counter()

    def __exit__(self, exc_type, *exc):
        if exc_type is None:
            level = logging.WARNING if _flags["jax_log_compiles"] else logging.DEBUG
            if compile_logger.isEnabledFor(level):
                compile_logger.log(level, "Finished XLA compilation of jit(%s) in %.9f sec",
                                   self.name, time.perf_counter() - self.start)


def log_tracing(fun, elapsed: float) -> None:
    level = logging.WARNING if _flags["jax_log_compiles"] else logging.DEBUG
    if trace_logger.isEnabledFor(level):
        trace_logger.log(level, "Finished tracing + transforming %s for jit in %.9f sec",
                         getattr(fun, "__name__", repr(fun)), elapsed)


# --------------------------------------------------------------------------------------------
# enable_checks (allow_f16_reductions is checked by reduce_sum itself, in lax/reduce.py)

_checks_before = [False]


def _on_enable_checks(name, value) -> None:
    if name != "jax_enable_checks":
        return
    if value:  # JAX's internal invariant checks: here the type check of every jaxpr
        _checks_before[0] = _flags["xjax_check_jaxprs"]
        config.update("xjax_check_jaxprs", True)
    else:
        config.update("xjax_check_jaxprs", _checks_before[0])


# --------------------------------------------------------------------------------------------
# array_garbage_collection_guard: while "log" or "fatal", Arrays get a finalizer that reports
# those freed during a collection of the cyclic garbage collector (not by reference counting).

_gc_logger = logging.getLogger("xjax.array")
_GC_MESSAGE = ("`jax.Array` was deleted by the Python garbage collector instead of reference "
               "counting. Break the reference cycle that delays the deletion of this "
               "`jax.Array` to avoid hogging memory.")
_collecting = [False]


def _gc_phase(phase, info) -> None:
    _collecting[0] = phase == "start"


def _array_finalizer(self) -> None:
    if _collecting[0]:
        level = _flags["jax_array_garbage_collection_guard"]
        if level == "log":
            _gc_logger.error("%s Array: %r", _GC_MESSAGE, self._aval)
        elif level == "fatal":
            import os
            _gc_logger.critical("%s Array: %r", _GC_MESSAGE, self._aval)
            logging.shutdown()
            os.abort()


def _install_gc_guard(name, value) -> None:
    on = value in ("log", "fatal")
    if on and _gc_phase not in gc.callbacks:
        gc.callbacks.append(_gc_phase)
        array_module.set_finalizer(_array_finalizer)
    elif not on and _gc_phase in gc.callbacks:
        gc.callbacks.remove(_gc_phase)
        array_module.set_finalizer(None)
        _collecting[0] = False


def _on_update(name, value) -> None:
    if name in ("jax_debug_nans", "jax_debug_infs", "jax_no_execution", "jax_transfer_guard",
                "jax_transfer_guard_host_to_device", "jax_transfer_guard_device_to_host",
                "jax_transfer_guard_device_to_device", "xjax_eager_via_xla"):
        _install_eager_checks(name, value)
        _install_transfer_guards(name, value)
    elif name == "jax_enable_checks":
        _on_enable_checks(name, value)
    elif name == "jax_array_garbage_collection_guard":
        _install_gc_guard(name, value)


config.add_listener(_on_update)
# Flags set before this module was imported (environment, early updates) take effect now.
_install_eager_checks(None, None)
if _flags["jax_enable_checks"]:
    _on_enable_checks("jax_enable_checks", True)
_install_gc_guard(None, _flags["jax_array_garbage_collection_guard"])
