"""Host callbacks: ``pure_callback``, ``io_callback`` and the debug callback primitive.

Three primitives, each holding the user's function as a hashable parameter:

- ``pure_callback`` (``xjax.pure_callback``): no side effects, may be called any number of
  times (or never); not differentiable (JAX's errors); vmap follows ``vmap_method``.
- ``io_callback`` (``xjax.experimental.io_callback``): side effects, never removed; with
  ``ordered=True`` it cannot be vmapped (JAX's error).
- ``debug_callback`` (``xjax.debug.callback`` and ``xjax.debug.print``): no results; its jvp
  runs it on the primals; vmap unrolls it over the batch, as JAX's rule does.

Eagerly (``impl``) the function is called at once on ``Array`` values. Under ``jit`` the
lowering emits an XLA FFI custom call to ``xjax_host_callback`` (xjax/runtime/_pjrt_ffi.c),
whose ``callback_id`` attribute names the function in ``xjax.runtime.ffi``'s table; XLA calls
back into Python when the program runs, on the CPU. Side-effecting callbacks are
``has_side_effect = true`` so XLA keeps them, and they thread a ``!stablehlo.token`` from
one to the next, through loops and ``cond`` too (xjax/lowering/effects.py), which keeps
their program order: for all of them, not only ``ordered=True`` ones, so that prints come
out in program order. A nested ``jit`` (a separate function) starts its own token chain, so
its callbacks are ordered among themselves but not against the caller's.

These rules transform their function (vmap's ``sequential`` method needs ``scan``), so the
module sits above the interpreters and control flow, beside ``custom_derivatives``.
"""

from __future__ import annotations

import traceback

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array, frozen_value
from xjax._src.core.avals import ShapedArray
from xjax._src.core.errors import JaxRuntimeError
from xjax._src.core.primitive import Absent, Primitive, applied_on_host
from xjax._src.core.pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten
from xjax._src.lowering.effects import EFFECTFUL_PRIMITIVES
from xjax._src import lax
from xjax._src.lax.batch_rules import batch_size, move_axis
from xjax._src.lowering import effects
from xjax._src.lowering.stablehlo import aval_type
from xjax._src.runtime import default_backend, ffi
from xjax._src.higher_order import scan

__all__ = ["pure_callback", "io_callback", "debug_callback"]

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None)


class _FlatCallback:
    """``callback`` taking the flat leaves of ``(args, kwargs)``; equal when the function and
    the argument structure are, so retracing reuses compiled programs and callback ids."""

    __slots__ = ("callback_func", "in_tree")

    def __init__(self, callback_func, in_tree):
        self.callback_func = callback_func
        self.in_tree = in_tree

    def __call__(self, *flat_args):
        args, kwargs = tree_unflatten(self.in_tree, flat_args)
        return tree_leaves(self.callback_func(*args, **kwargs))

    def __eq__(self, other):
        return (type(other) is type(self) and self.callback_func == other.callback_func
                and self.in_tree == other.in_tree)

    def __hash__(self):
        return hash((type(self), self.callback_func, self.in_tree))

    def __repr__(self):
        return getattr(self.callback_func, "__name__", repr(self.callback_func))


def _as_arrays(values, avals):
    return [Array._from_numpy(frozen_value(np.asarray(v, a.dtype), v),
                              ShapedArray(a.shape, a.dtype))
            for v, a in zip(values, avals, strict=True)]


def _check_results(outs, result_avals):
    """The callback's results as NumPy arrays of the declared shapes and dtypes (JAX's
    checks and messages)."""
    outs = list(outs)
    if len(outs) != len(result_avals):
        raise RuntimeError("Mismatched number of outputs from callback. "
                           f"Expected: {len(result_avals)}, Actual: {len(outs)}")
    checked = []
    for i, (out, aval) in enumerate(zip(outs, result_avals, strict=True)):
        out = np.asarray(out)
        dtype = dtypes.canonicalize_dtype(out.dtype)
        if out.shape != aval.shape:
            raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                               f"Expected: {aval.shape}, Actual: {out.shape}")
        if dtype != aval.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                               f"Expected: {aval.dtype}, Actual: {dtype}")
        checked.append(out.astype(aval.dtype, copy=False))
    return checked


def _run(callback, values, avals_in, result_avals):
    return _check_results(callback(*_as_arrays(values, avals_in)), result_avals)


# -- lowering: one custom call to xjax_host_callback --


class _HostFunction:
    """What the runtime calls: NumPy operands in, checked NumPy results out."""

    __slots__ = ("callback", "avals_in", "result_avals")

    def __init__(self, callback, avals_in, result_avals):
        self.callback = callback
        self.avals_in = tuple(avals_in)
        self.result_avals = tuple(result_avals)

    def __call__(self, *values):
        return _run(self.callback, values, self.avals_in, self.result_avals)

    def _key(self):
        return (self.callback, self.avals_in, self.result_avals)

    def __eq__(self, other):
        return type(other) is _HostFunction and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


class _NumpyHostFunction(_HostFunction):
    """A host function called with the operands as NumPy arrays (JAX's lowering-level
    ``emit_python_callback`` convention), its results checked as any callback's."""

    __slots__ = ()

    def __call__(self, *values):
        operands = [np.asarray(v, a.dtype) for v, a in zip(values, self.avals_in, strict=True)]
        return _check_results(self.callback(*operands), self.result_avals)

    def __eq__(self, other):
        return type(other) is _NumpyHostFunction and self._key() == other._key()

    __hash__ = _HostFunction.__hash__


def _emit_host_callback(ctx, operands, callback, result_avals, *, side_effect, ordered):
    host_function = _HostFunction(callback, ctx.avals_in, result_avals)
    return _emit_host_function(ctx, operands, host_function, side_effect=side_effect,
                               ordered=ordered)


def emit_numpy_callback(ctx, operands, operand_avals, callback, result_avals, *,
                        side_effect: bool) -> list:
    """Emit, into the lowering ``ctx``, a call of ``callback`` on the host: it receives
    ``operands`` as NumPy arrays of ``operand_avals`` and returns a sequence of arrays of
    ``result_avals``. The results' values (builder values), in order."""
    if side_effect:
        raise NotImplementedError("a side-effecting host callback emitted by a lowering rule "
                                  "is not supported: use io_callback in the function")
    host_function = _NumpyHostFunction(callback, operand_avals, result_avals)
    return _emit_host_function(ctx, operands, host_function, side_effect=side_effect,
                               ordered=False)


def _emit_host_function(ctx, operands, host_function, *, side_effect, ordered):
    if default_backend() != "cpu":
        raise NotImplementedError(
            "host callbacks (pure_callback, io_callback, debug.print, debug.callback) in "
            f"compiled code on the {default_backend()} backend: xjax registers its callback "
            "handler with the CPU plugin only. Call it outside jit, or compute on the CPU "
            "(jax.device_put the operands to jax.devices('cpu')[0], or JAX_PLATFORMS=cpu)")
    if ffi.HOST_CALLBACK_TARGET not in ffi.ffi_targets("cpu"):
        raise NotImplementedError("host callbacks under jit need the CPU plugin's FFI "
                                  "extension, which this plugin lacks")
    builder = ctx.builder
    callback_id = ffi.register_host_callback(host_function)
    operands = list(operands)
    result_types = [aval_type(a) for a in host_function.result_avals]
    # Every side-effecting callback joins the block's token chain, not only ordered ones:
    # XLA may otherwise run two independent prints in either order (JAX allows that for
    # unordered effects; program order is what users read their prints in).
    ordered = ordered or side_effect
    if ordered:
        operands = [effects.current_token(builder), *operands]
        result_types = [effects.TOKEN_TYPE, *result_types]
    attrs = {"call_target_name": f'"{ffi.HOST_CALLBACK_TARGET}"', "api_version": "4 : i32",
             "has_side_effect": "true" if side_effect or ordered else "false",
             "backend_config": f"{{callback_id = {callback_id} : i64}}"}
    outs = builder.op("stablehlo.custom_call", operands, result_types, attrs)
    if ordered:
        effects.set_token(builder, outs[0])
        outs = outs[1:]
    return outs


# -- batching helpers --


def _move_to_front(args, dims):
    return [x if d is None else move_axis(x, d, 0) for x, d in zip(args, dims, strict=True)]


def _batch_sequential(primitive, args, dims, params, unroll=1):
    """One call per batch element, in a scan over the mapped operands."""
    moved = _move_to_front(args, dims)
    mapped = [x for x, d in zip(moved, dims, strict=True) if d is not None]

    def body(carry, xs):
        it = iter(xs)
        merged = [next(it) if d is not None else x for x, d in zip(moved, dims, strict=True)]
        return carry, primitive.bind(*merged, **params)

    _, outs = scan(body, (), mapped, unroll=unroll)
    return list(outs), [0] * len(outs)


def _batched_avals(size, avals):
    return tuple(ShapedArray((size, *a.shape), a.dtype) for a in avals)


def _axis_size(args, dims):
    return batch_size(args, dims)


# -- pure_callback --


def _result_abstract_eval(*avals, result_avals, **_):
    """Abstract eval of the callbacks that return values: the declared result avals."""
    return list(result_avals)


def _call_impl(*values, callback, result_avals, **_):
    """Eager evaluation of the callbacks that return values: call the Python function."""
    avals = [ShapedArray(np.shape(v), np.asarray(v).dtype) for v in values]
    try:
        return _run(callback, values, avals, result_avals)
    except Exception as error:  # as JAX, which runs even eager callbacks through XLA
        raise JaxRuntimeError("INTERNAL: CpuCallback error calling callback: " +
                              "".join(traceback.format_exception(error))) from error


def _pure_callback_lower(ctx, *operands, callback, result_avals, vmap_method):
    return _emit_host_callback(ctx, operands, callback, result_avals, side_effect=False,
                               ordered=False)


def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                     "callbacks while taking gradients.")


def _pure_callback_batch(args, dims, *, callback, result_avals, vmap_method):
    size = _axis_size(args, dims)
    params = dict(callback=callback, result_avals=result_avals, vmap_method=vmap_method)
    if vmap_method in ("sequential", "sequential_unrolled"):
        unroll = size if vmap_method == "sequential_unrolled" else 1
        return _batch_sequential(pure_callback_p, args, dims, params, max(unroll, 1))
    moved = _move_to_front(args, dims)
    if vmap_method in ("expand_dims", "broadcast_all"):
        width = size if vmap_method == "broadcast_all" else 1
        moved = [lax.broadcast(x, (width,)) if d is None else x
                 for x, d in zip(moved, dims, strict=True)]
    elif vmap_method != "legacy_vectorized":
        raise NotImplementedError(
            "vmap is only supported for the pure_callback primitive when vmap_method is one "
            "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}.")
    params["result_avals"] = _batched_avals(size, result_avals)
    outs = pure_callback_p.bind(*moved, **params)
    return outs, [0] * len(outs)


pure_callback_p = Primitive(
    "pure_callback", abstract_eval=_result_abstract_eval, impl=_call_impl,
    lower=_pure_callback_lower, jvp=_pure_callback_jvp,
    transpose=Absent("a Python function: use jax.custom_vjp to differentiate through it"),
    batch=_pure_callback_batch, multiple_results=True)


def _check_shape_dtype(shape_dtype):
    dt = np.dtype(shape_dtype.dtype)
    if dtypes.canonicalize_dtype(dt) != dt:
        raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                         "`jax_enable_x64` is disabled")


def _result_avals(result_shape_dtypes):
    tree_map(_check_shape_dtype, result_shape_dtypes)
    leaves, out_tree = tree_flatten(result_shape_dtypes)
    return tuple(ShapedArray(tuple(x.shape), np.dtype(x.dtype)) for x in leaves), out_tree


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
    """Call a pure Python function from (possibly compiled) xjax code.

    Parameters
    ----------
    callback : callable
        Called with ``Array`` values of ``args``/``kwargs``; returns arrays matching
        ``result_shape_dtypes``. It must be pure: it may run any number of times, or not at
        all when its results are unused.
    result_shape_dtypes : pytree
        Leaves with ``shape`` and ``dtype`` (e.g. ``xjax.ShapeDtypeStruct``).
    *args, **kwargs
        The arguments, pytrees of arrays.
    sharding : None
        Accepted for JAX's signature; only ``None`` is supported.
    vmap_method : {"sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                   "legacy_vectorized", None}
        How ``vmap`` treats the call: a loop of calls, or one call on arrays with a leading
        batch axis (size 1 for unmapped arguments with ``"expand_dims"``, broadcast to the
        batch size with ``"broadcast_all"``). ``None`` makes ``vmap`` an error.

    Returns
    -------
    pytree
        ``Array`` values with the structure of ``result_shape_dtypes``.

    Examples
    --------
    >>> import numpy as np, xjax, xjax.numpy as jnp
    >>> def f(x):
    ...     spec = xjax.ShapeDtypeStruct(x.shape, x.dtype)
    ...     return xjax.pure_callback(lambda a: np.cumsum(a), spec, x)
    >>> xjax.jit(f)(jnp.arange(4.0))
    Array([0., 1., 3., 6.], dtype=float32)
    """
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(_VMAP_METHODS)}"
                         f", but got: {vmap_method}")
    if sharding is not None:
        raise NotImplementedError("pure_callback with a sharding is not supported by xjax")
    flat_args, in_tree = tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = pure_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                                result_avals=result_avals, vmap_method=vmap_method)
    return tree_unflatten(out_tree, outs)


# -- io_callback --


def _io_callback_lower(ctx, *operands, callback, result_avals, ordered):
    return _emit_host_callback(ctx, operands, callback, result_avals, side_effect=True,
                               ordered=ordered)


def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_batch(args, dims, *, callback, result_avals, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _batch_sequential(io_callback_p, args, dims,
                             dict(callback=callback, result_avals=result_avals, ordered=False))


io_callback_p = Primitive(
    "io_callback", abstract_eval=_result_abstract_eval, impl=_call_impl,
    lower=_io_callback_lower, jvp=_io_callback_jvp,
    transpose=Absent("a Python function with side effects: not differentiable"),
    batch=_io_callback_batch, multiple_results=True)
EFFECTFUL_PRIMITIVES.add(io_callback_p.name)


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False,
                **kwargs):
    """Call a Python function with side effects from (possibly compiled) xjax code.

    Parameters
    ----------
    callback : callable
        Called with ``Array`` values of ``args``/``kwargs``; returns arrays matching
        ``result_shape_dtypes`` (``None`` for no results).
    result_shape_dtypes : pytree or None
        Leaves with ``shape`` and ``dtype``.
    *args, **kwargs
        The arguments, pytrees of arrays.
    sharding : None
        Accepted for JAX's signature; only ``None`` is supported.
    ordered : bool
        Keep program order among ordered callbacks (then ``vmap`` is an error).

    Returns
    -------
    pytree
        ``Array`` values with the structure of ``result_shape_dtypes``.

    Examples
    --------
    >>> import numpy as np, xjax, xjax.numpy as jnp
    >>> from xjax.experimental import io_callback
    >>> seen = []
    >>> def log(x):
    ...     seen.append(float(x))
    ...     return np.float32(len(seen))
    >>> f = xjax.jit(lambda x: io_callback(log, xjax.ShapeDtypeStruct((), jnp.float32), x))
    >>> f(2.0)
    Array(1., dtype=float32)
    >>> seen
    [2.0]
    """
    if sharding is not None:
        raise NotImplementedError("io_callback with a sharding is not supported by xjax")
    flat_args, in_tree = tree_flatten((args, kwargs))
    result_avals, out_tree = _result_avals(result_shape_dtypes)
    outs = io_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                              result_avals=result_avals, ordered=bool(ordered))
    return tree_unflatten(out_tree, outs)


# -- debug_callback --


def _debug_callback_abstract_eval(*avals, callback, ordered):
    return []


def _debug_callback_impl(*values, callback, ordered):
    avals = [ShapedArray(np.shape(v), np.asarray(v).dtype) for v in values]
    callback(*_as_arrays(values, avals))
    return []


def _debug_callback_lower(ctx, *operands, callback, ordered):
    return _emit_host_callback(ctx, operands, callback, (), side_effect=True, ordered=ordered)


def _debug_callback_jvp(primals, tangents, *, callback, ordered):
    return debug_callback_p.bind(*primals, callback=callback, ordered=ordered), []


def _debug_callback_batch(args, dims, *, callback, ordered):
    """Unrolled over the batch: one call per element, in order (JAX's rule)."""
    size = _axis_size(args, dims)
    for i in range(size):
        debug_callback_p.bind(*[x if d is None else lax.index_in_dim(x, i, d, keepdims=False)
                                for x, d in zip(args, dims, strict=True)],
                              callback=callback, ordered=ordered)
    return [], []


debug_callback_p = Primitive(
    "debug_callback", abstract_eval=_debug_callback_abstract_eval, impl=_debug_callback_impl,
    lower=_debug_callback_lower, jvp=_debug_callback_jvp,
    transpose=Absent("has no outputs: nothing to transpose"),
    batch=_debug_callback_batch, multiple_results=True)
applied_on_host.update((pure_callback_p, io_callback_p, debug_callback_p))
EFFECTFUL_PRIMITIVES.add(debug_callback_p.name)


def debug_callback(callback, *args, ordered=False, **kwargs):
    """Call ``callback(*args, **kwargs)`` for its side effects, eagerly or from compiled code
    (``xjax.debug.callback``)."""
    flat_args, in_tree = tree_flatten((args, kwargs))
    debug_callback_p.bind(*flat_args, callback=_DebugFunction(callback, in_tree),
                          ordered=bool(ordered))


class _DebugFunction(_FlatCallback):
    """A debug callback on flat leaves; its result is ignored."""

    __slots__ = ()

    def __call__(self, *flat_args):
        args, kwargs = tree_unflatten(self.in_tree, flat_args)
        self.callback_func(*args, **kwargs)
        return []
