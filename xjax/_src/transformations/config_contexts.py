"""JAX's configuration flags as context managers and decorators (``enable_x64``,
``debug_nans``, ``transfer_guard``, ...), and ``disable_jit``."""

from __future__ import annotations

from __future__ import annotations

import contextlib
import functools


from xjax._src.core.config import State, bool_state, config


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Run ``jit``-decorated functions as plain Python inside the block (for debugging)."""
    with config.override(jax_disable_jit=disable):
        yield


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
    xjax.errors.JaxRuntimeError: INVALID_ARGUMENT: Disallowed host-to-device transfer: ...
    """
    with contextlib.ExitStack() as stack:
        stack.enter_context(transfer_guard_host_to_device(new_val))
        stack.enter_context(transfer_guard_device_to_device(new_val))
        stack.enter_context(transfer_guard_device_to_host(new_val))
        stack.enter_context(_transfer_guard(new_val))
        yield


# -- flags about shard_map's varying-manual-axes types --
# ``auto_pcast`` (default True): JAX inserts ``pvary`` where an operand that varies over a
# manual axis meets one that does not. xjax's shard_map runs on vmap, which always broadcasts
# the invariant operand, so only True is supported. ``remove_size_one_mesh_axis_from_type``
# (default False): with True, mesh axes of size 1 are left out of types, so a value is never
# varying over one: shard_map's replication check (``check_vma``) accepts an ``out_specs``
# that does not mention such an axis.

auto_pcast = bool_state(
    "jax_auto_pcast", "If True, automatically insert `pvary` to match VMAs on simple ops "
    "(only True in xjax: its vmap-based shard_map always broadcasts invariant operands).")
remove_size_one_mesh_axis_from_type = bool_state(
    "jax_remove_size_one_mesh_axis_from_type", "Removes mesh axes of size 1 from "
    "ShapedArray.sharding and vma (in xjax: shard_map's replication check ignores them).")


__all__ = ["disable_jit", "enable_x64", "threefry_partitionable", "numpy_rank_promotion",
           "numpy_dtype_promotion", "default_matmul_precision", "debug_nans", "debug_infs",
           "log_compiles", "explain_cache_misses", "check_tracer_leaks", "checking_leaks",
           "enable_checks", "debug_key_reuse", "default_prng_impl", "enable_custom_prng",
           "legacy_prng_key", "softmax_custom_jvp", "jax2tf_associative_scan_reductions",
           "allow_f16_reductions", "array_garbage_collection_guard", "thread_guard",
           "no_tracing", "no_execution", "transfer_guard_host_to_device",
           "transfer_guard_device_to_device", "transfer_guard_device_to_host",
           "transfer_guard", "auto_pcast", "remove_size_one_mesh_axis_from_type"]
