"""Top-level conveniences of ``jax``: configuration context managers, host transfers,
process information and shape evaluation."""

from __future__ import annotations

import contextlib
import functools


import numpy as np

from xjax.core.config import State, bool_state, config
from xjax.core.pytree import tree_map


def eval_shape(fun, *args, **kwargs):
    """The shapes and dtypes ``fun`` would return for these arguments, without computing.

    Arguments may be arrays or anything with ``shape`` and ``dtype`` (``ShapeDtypeStruct``).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.eval_shape(lambda x: jnp.dot(x, x.T), xjax.ShapeDtypeStruct((3, 4), jnp.float32))
    ShapeDtypeStruct(shape=(3, 3), dtype=float32)
    """
    from xjax.api import make_jaxpr
    _, shapes = make_jaxpr(lambda *a: fun(*a, **kwargs), return_shape=True)(*args)
    return shapes


def device_get(x):
    """Copy the arrays of the pytree ``x`` to the host as NumPy arrays (an explicit
    device-to-host transfer)."""
    from xjax.flag_checks import explicit_device_get
    with explicit_device_get():
        return tree_map(lambda leaf: np.asarray(leaf) if hasattr(leaf, "__array__") else leaf,
                        x)


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Run ``jit``-decorated functions as plain Python inside the block (for debugging)."""
    with config.override(jax_disable_jit=disable):
        yield


# -- configuration flags as JAX exposes them: context managers (and decorators) --

enable_x64 = bool_state("jax_enable_x64", "Enable 64-bit types to be used.")
threefry_partitionable = bool_state(
    "jax_threefry_partitionable", "Use the partitionable layout of Threefry random bits.")
numpy_rank_promotion = State(
    "jax_numpy_rank_promotion", "Control NumPy-style automatic rank promotion broadcasting "
    '("allow", "warn", or "raise").')
numpy_dtype_promotion = State(
    "jax_numpy_dtype_promotion", 'Specify the rules used for implicit type promotion in '
    'operations between arrays. Options are "standard" or "strict"; in strict-mode, binary '
    "operations between arrays of differing strongly-specified dtypes will result in an "
    "error (:class:`xjax.dtypes.TypePromotionError`).")
default_matmul_precision = State(
    "jax_default_matmul_precision", "Control the default matmul and conv precision.")
debug_nans = bool_state(
    "jax_debug_nans", "Add nan checks to every operation. When a nan is detected on the "
    "output of a jit-compiled computation, call into the un-compiled version in an attempt "
    "to more precisely identify the operation which produced the nan.")
debug_infs = bool_state(
    "jax_debug_infs", "Add inf checks to every operation. When an inf is detected on the "
    "output of a jit-compiled computation, call into the un-compiled version in an attempt "
    "to more precisely identify the operation which produced the inf.")
log_compiles = bool_state(
    "jax_log_compiles", "Log a message each time `jit` compiles an XLA computation. Logging "
    "is performed with `logging`. When this option is set, the log level is WARNING; "
    "otherwise the level is DEBUG.")
explain_cache_misses = bool_state(
    "jax_explain_cache_misses", "Each time there is a miss on the tracing cache of `jit`, "
    "log an explanation. Logging is performed with `logging` at WARNING level.")
check_tracer_leaks = bool_state(
    "jax_check_tracer_leaks", "Turn on checking for leaked tracers as soon as a trace "
    "completes (traces of `jit` and `make_jaxpr`). Caching of traces with tracer "
    "constants is disabled, and a garbage collection runs after each trace.")
checking_leaks = functools.partial(check_tracer_leaks, True)
enable_checks = bool_state(
    "jax_enable_checks", "Turn on invariant checking for xjax internals (type-check every "
    "jaxpr). Makes things slower.")
debug_key_reuse = bool_state(
    "jax_debug_key_reuse", "Key reuse checking: not implemented by xjax (only False).")
default_prng_impl = State(
    "jax_default_prng_impl", "Select the default PRNG implementation (only "
    '"threefry2x32" exists in xjax).')
enable_custom_prng = bool_state(
    "jax_enable_custom_prng", "Custom PRNG upgrade: not implemented by xjax (only False).")
legacy_prng_key = State(
    "jax_legacy_prng_key", "Behavior when raw PRNG keys are passed to random APIs (only "
    '"allow" in xjax).')
softmax_custom_jvp = bool_state(
    "jax_softmax_custom_jvp", "Use a custom_jvp rule for nn.softmax (only False, JAX's "
    "default, in xjax).")
jax2tf_associative_scan_reductions = bool_state(
    "jax2tf_associative_scan_reductions", "Choose jax2tf's lowering of cumulative "
    "reductions. JAX 0.10.2 reads it nowhere outside jax2tf; it has no effect here either.")
allow_f16_reductions = bool_state(
    "jax_allow_f16_reductions", "If False, `reduce_sum` on `f16` or `bf16` inputs will "
    "raise an error.")
array_garbage_collection_guard = State(
    "jax_array_garbage_collection_guard", "Select garbage collection guard level for "
    "``Array`` objects: ``allow`` (default) does nothing; ``log`` logs an error when an "
    "Array is freed by the garbage collector (in a reference cycle) rather than by "
    "reference counting; ``fatal`` logs and aborts the process.")
thread_guard = bool_state(
    "jax_thread_guard", "Raise if a multi-process operation is called from another thread "
    "than the one that set the guard. A single process runs no multi-process operation, so "
    "it has no effect in xjax (as in JAX on one process).")
no_tracing = bool_state("jax_no_tracing", "Disallow tracing for JIT compilation.")
no_execution = bool_state("jax_no_execution", "Disallow JAX executions.")
transfer_guard_host_to_device = State(
    "jax_transfer_guard_host_to_device", "Select the transfer guard level for "
    'host-to-device transfers. Default is "allow".')
transfer_guard_device_to_device = State(
    "jax_transfer_guard_device_to_device", "Select the transfer guard level for "
    'device-to-device transfers. Default is "allow".')
transfer_guard_device_to_host = State(
    "jax_transfer_guard_device_to_host", "Select the transfer guard level for "
    'device-to-host transfers. Default is "allow".')
_transfer_guard = State("jax_transfer_guard", "Transfer guard level for all transfers.")


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """A contextmanager to control the transfer guard level for all transfers.

    Parameters
    ----------
    new_val : str
        ``"allow"``, ``"log"``, ``"disallow"``, ``"log_explicit"`` or
        ``"disallow_explicit"``; see :mod:`xjax.flag_checks` for what a transfer is in xjax.

    Examples
    --------
    >>> import numpy as np, xjax
    >>> with xjax.transfer_guard("disallow"):
    ...     xjax.jit(lambda x: x + 1)(np.ones(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    xjax.core.errors.JaxRuntimeError: INVALID_ARGUMENT: Disallowed host-to-device transfer: ...
    """
    with contextlib.ExitStack() as stack:
        stack.enter_context(transfer_guard_host_to_device(new_val))
        stack.enter_context(transfer_guard_device_to_device(new_val))
        stack.enter_context(transfer_guard_device_to_host(new_val))
        stack.enter_context(_transfer_guard(new_val))
        yield


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Evaluate operations on concrete values eagerly inside the block, even while tracing."""
    from xjax.core.trace import _Context, set_current_trace
    with set_current_trace(_Context.trace):
        yield


def named_call(fun, *, name=None):
    """``fun`` itself (xjax does not record call names in jaxprs)."""
    return fun


@contextlib.contextmanager
def named_scope(name: str):
    """A no-op context (xjax does not annotate compiled programs with scope names)."""
    yield


def clear_caches():
    """Forget every compiled executable and traced jaxpr."""
    from xjax import api
    from xjax.interpreters import eval as eval_interpreter, jit_call
    api._caches.clear()
    api._strong_caches.clear()
    jit_call._impl_cache.clear()
    jit_call._derived_cache.clear()
    eval_interpreter._xla_primitive_cache.clear()


def typeof(x):
    """The abstract value (``ShapedArray``, or ``AbstractRef`` for a Ref) of ``x``."""
    from xjax.core.ad_util import get_aval
    from xjax.core.ref_avals import AbstractRef
    aval = getattr(x, "aval", None)
    if type(aval) is AbstractRef:
        return aval
    return get_aval(x)


def effects_barrier():
    """Wait for every dispatched computation (results are awaited when read)."""


def process_count() -> int:
    return 1


def process_index() -> int:
    return 0


def process_indices():
    return [0]


host_count = process_count
host_id = process_index
host_ids = process_indices


def default_device():
    from xjax.runtime import devices
    return devices()[0]


def print_environment_info(return_string: bool = False):
    import platform
    import sys

    import xjax
    from xjax.runtime import plugin_version
    text = (f"xjax:    {xjax.__version__}\nnumpy:   {np.__version__}\n"
            f"python:  {sys.version}\nplatform: {platform.platform()}\n"
            f"backend: {xjax.default_backend()} ({plugin_version()})\n")
    if return_string:
        return text
    print(text)


def live_arrays(platform=None):
    """The arrays alive in this process that hold data (not deleted, not tracers).

    xjax keeps no registry of arrays (a registry would cost every eager operation a
    weak reference); it finds them among the objects the garbage collector tracks,
    which every ``Array`` is. ``platform`` names a backend (``"cpu"``).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> x = jnp.arange(3.0)
    >>> any(a is x for a in xjax.live_arrays())
    True
    """
    import gc

    from xjax.core.array import Array
    from xjax.runtime import devices
    if platform is not None:
        devices(platform)  # raises JAX's RuntimeError for an unknown or absent backend
    return [obj for obj in gc.get_objects() if type(obj) is Array and not obj.is_deleted()]


def pure_callback(callback, result_shape_dtypes, *args, vmap_method=None, **kwargs):
    """Call a Python function on host values. Eagerly it simply runs; inside jit (host
    callbacks from compiled code) it is not supported yet."""
    from xjax.core.trace import Tracer
    from xjax.core.pytree import tree_leaves
    if any(isinstance(leaf, Tracer) for leaf in tree_leaves((args, kwargs))):
        raise NotImplementedError("pure_callback under a transformation needs host callbacks "
                                  "from compiled code, which xjax does not support yet")
    return tree_map(np.asarray, callback(*args, **kwargs))



__all__ = ["eval_shape", "device_get", "disable_jit", "enable_x64", "threefry_partitionable",
           "numpy_rank_promotion", "debug_nans", "default_matmul_precision",
           "numpy_dtype_promotion", "debug_infs", "log_compiles", "explain_cache_misses",
           "check_tracer_leaks", "checking_leaks", "enable_checks", "debug_key_reuse",
           "default_prng_impl", "enable_custom_prng", "legacy_prng_key", "softmax_custom_jvp",
           "jax2tf_associative_scan_reductions", "allow_f16_reductions",
           "array_garbage_collection_guard", "thread_guard", "no_tracing", "no_execution",
           "transfer_guard", "transfer_guard_host_to_device", "transfer_guard_device_to_device",
           "transfer_guard_device_to_host",
           "ensure_compile_time_eval", "named_call", "named_scope", "clear_caches", "typeof",
           "effects_barrier", "process_count", "process_index", "process_indices",
           "host_count", "host_id", "host_ids", "default_device", "print_environment_info",
           "live_arrays", "pure_callback"]
