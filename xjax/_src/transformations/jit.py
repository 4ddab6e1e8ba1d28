"""The public transformations: ``jit`` and ``make_jaxpr``; ``jit``'s ahead-of-time stages
(``trace``, ``lower``) are the classes of ``xjax.stages``."""

from __future__ import annotations

import functools
import inspect
import time
import weakref

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray, python_scalar_aval
from xjax._src.core.config import config
from xjax._src.core.jaxpr import ClosedJaxpr, eval_jaxpr
from xjax._src.core.pytree import flatten_call_args, tree_flatten, tree_unflatten
from xjax._src.core.ref_avals import AbstractRef
from xjax._src.core.trace import Tracer, ctx as trace_ctx
from xjax._src.interpreters import eval as eval_interpreter
from xjax._src.higher_order.jit_call import (check_compiler_options, compile_closed_jaxpr,
                                             consts_as_args, inline_when_eager, pjit_p)
from xjax._src.higher_order.ref_jit import trace_with_refs
from xjax._src.interpreters.staging import DebugInfo
from xjax._src.transformations import debug_flags as flag_checks
from xjax._src.core import monitoring, purity
from xjax._src import runtime
from xjax._src.core.placement import host_value, put_array, put_sharded
from xjax._src.core.pytree import is_leaf_node_type, prefix_leaves, tree_map
from xjax._src.core.pytree import tree_unflatten as unflatten
from xjax._src.core.sharding_types import (NamedSharding, PartitionSpec, Sharding, get_mesh,
                                           resolve_put_target)
from xjax._src.runtime.live_executables import LiveBound
from xjax._src.runtime.sharded import note_multi_device, state as sharded_state
from xjax._src.lax.placement import copy_semantics_of, device_put_p
from xjax._src.lax.operands import to_operand
from xjax._src.transformations import jit_shardings
from xjax._src.transformations.jit_shardings import UNSPECIFIED
from xjax._src.transformations.jit_partitioned import partition_mesh, partitioned_function
from xjax._src.transformations.wrapping import wraps

_ROOT = eval_interpreter.EvalTrace  # the root trace's class: top-level calls take the fast path


def shaped_abstractify(x) -> ShapedArray:
    """The aval jit traces an argument with: Arrays and tracers keep theirs; NumPy values get
    their canonical dtype; Python scalars are weakly typed."""
    aval = getattr(x, "aval", None)
    if type(aval) is ShapedArray:
        return aval
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return python_scalar_aval(x)
    if type(aval) is AbstractRef:  # a mutable array reference (threaded by trace_with_refs)
        return aval
    if type(x) is ShapeDtypeStruct:  # its weak type, and its sharding's Explicit split
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), x.weak_type,
                           sharding=x.sharding)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype), False)
    if isinstance(x, (list, tuple)) or x is None or isinstance(x, str):
        raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type.")
    try:
        value = np.asarray(x)
    except Exception:
        value = None
    if value is None or value.dtype == object:
        raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type.")
    return ShapedArray(value.shape, dtypes.canonicalize_dtype(value.dtype), False)


def _hashable_static(value, position):
    try:
        hash(value)
    except TypeError as e:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(value)}, {value!r}. The error was:\n"
            f"TypeError: {e}\n") from None
    return value


_LEAF_TREE = tree_flatten(0)[1]


def _options_key(options) -> tuple:
    """A hashable form of jit's compiler options (names sorted)."""
    if not options:
        return ()
    return tuple(sorted((str(name), repr(value)) for name, value in options.items()))


class _TraceEntry:
    """What tracing one signature produced: the jaxpr and, once needed, its executable."""

    __slots__ = ("closed", "out_tree", "compiled", "call_jaxpr", "call_consts", "donated",
                 "single_leaf", "ref_plan", "partitioned", "compiler_options", "__weakref__")

    def __init__(self, closed, out_tree, donated=None, ref_plan=None, compiler_options=None):
        self.closed = closed
        self.compiler_options = compiler_options  # jit's (XLA options by name), or None
        self.ref_plan = ref_plan  # Refs passed or closed over (xjax/interpreters/ref_jit.py)
        self.out_tree = out_tree
        self.single_leaf = out_tree == _LEAF_TREE  # the output is one array: skip unflatten
        self.compiled = None
        self.partitioned = None  # argument shardings -> SPMD executable (jit_partitioned)
        self.donated = donated  # per flat input: donated by the caller (or None: none)
        self.call_jaxpr, self.call_consts = consts_as_args(closed)
        if ref_plan is not None:  # its call passes the Refs' values and writes them back
            self.compiled = ref_plan

    def executable(self, name: str):
        """The compiled program, compiled on first need; at most ``MAX_LIVE_JIT_EXECUTABLES``
        entries of all jit wrappers hold one at a time (the longest held is dropped, and
        compiled again if called again: see ``runtime.live_executables``)."""
        compiled = self.compiled
        if compiled is None:
            compiled = self.compiled = compile_closed_jaxpr(self.closed, name, self.donated,
                                                            self.compiler_options)
            _live_entries.admit(self)
        return compiled


def _drop_executable(entry: _TraceEntry) -> None:
    entry.compiled = None


# About 9 memory mappings each (3 for small programs; see runtime.live_executables).
MAX_LIVE_JIT_EXECUTABLES = 1024
_live_entries = LiveBound(MAX_LIVE_JIT_EXECUTABLES, _drop_executable)


# One cache per function object, shared by every jit wrapper of it (JAX does the same: this
# is why the seed's impure function prints 4, 5 and then [14]).
class _WeakCaches(weakref.WeakKeyDictionary):
    """fun -> its cache. ``clear()`` (``xjax.clear_caches``) empties every cache in place:
    jit wrappers hold their cache dict, so dropping the mapping alone would not reach them."""

    def clear(self):
        for cache in list(self.values()):
            cache.clear()


class _OwnCache(dict):
    """The cache of one jit wrapper of a function that cannot be weakly referenced."""

    __slots__ = ("__weakref__",)
    __hash__ = object.__hash__  # members of a WeakSet: by identity, never by contents
    __eq__ = object.__eq__


class _OwnCaches(weakref.WeakSet):
    """The live caches of wrappers of functions that cannot be weakly referenced. Such a
    function's cache is not shared by id: a dead function's id is reused by new objects, and
    a shared entry would hand them the dead function's executables (wrong answers)."""

    def clear(self):
        for cache in list(self):
            cache.clear()


_caches: "weakref.WeakKeyDictionary" = _WeakCaches()
_strong_caches: _OwnCaches = _OwnCaches()


def _cache_for(fun) -> dict:
    try:
        cache = _caches.get(fun)
        if cache is None:
            cache = _caches[fun] = {}
    except TypeError:  # not weak-referenceable: a cache of this wrapper's own
        cache = _OwnCache()
        _strong_caches.add(cache)
    return cache


class PjitFunction:
    """The callable ``jit(fun)`` returns (named as JAX names its type, which libraries test)."""

    def __init__(self, fun, static_argnums=None, static_argnames=None, donate_argnums=None,
                 donate_argnames=None, keep_unused=False, inline=False, _eager_inline=False,
                 out_shardings=UNSPECIFIED, compiler_options=None):
        if not callable(fun):
            raise TypeError(f"Expected a callable value, got {fun!r}")
        wraps(fun)(self)  # first: the attributes set below must win over fun's
        self._fun = fun
        self._signature = _signature(fun)
        if self._signature is not None:  # as JAX's: inspect.signature(follow_wrapped=False)
            self.__signature__ = self._signature
        self._static_argnums, self._static_argnames = _resolve_static(
            self._signature, static_argnums, static_argnames)
        self._donate_argnums, self._donate_argnames = _resolve_static(
            self._signature, donate_argnums, donate_argnames)
        _check_static_donate_disjoint(self._static_argnums, self._static_argnames,
                                      self._donate_argnums, self._donate_argnames)
        self._compiler_options = compiler_options or None
        # the settings of this wrapper a trace entry depends on, beside the arguments (the
        # cache is shared by every jit wrapper of the function)
        self._settings_key = (self._donate_argnums, self._donate_argnames,
                              _options_key(self._compiler_options))
        self._inline = inline
        self._eager_inline = _eager_inline  # jnp's nested jits: see jit_call.inline_when_eager
        self._cache = _cache_for(fun)
        self._name = getattr(fun, "__name__", "fun")
        self._has_statics = bool(self._static_argnums or self._static_argnames)
        self._positional_trees: dict = {}  # number of positional Array args -> in_tree
        # jit(out_shardings=...): the result shardings of a program over several devices
        self._out_shardings = out_shardings
        if jit_shardings.has_multi_device(out_shardings):
            note_multi_device()

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return functools.partial(self, instance)

    # -- signature of a call --
    def _split(self, args, kwargs):
        """(static values, dynamic args, dynamic kwargs, dynamic arg names)."""
        statics = []
        dyn_args = []
        nums = self._static_argnums
        for i, a in enumerate(args):
            if i in nums:
                statics.append((i, _hashable_static(a, i)))
            else:
                dyn_args.append(a)
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self._static_argnames:
                statics.append((k, _hashable_static(v, k)))
            else:
                dyn_kwargs[k] = v
        return tuple(statics), dyn_args, dyn_kwargs

    def _arg_names(self, args, kwargs, dyn_args, dyn_kwargs):
        params = list(self._signature.parameters) if self._signature else []
        positions = [i for i in range(len(args)) if i not in self._static_argnums]
        return flat_arg_names(params, zip(positions, dyn_args, strict=True), dyn_kwargs)

    def _entry(self, args, kwargs):
        """Find or make the trace entry for these arguments; also return the flat args."""
        if not kwargs and not self._has_statics:
            # Dispatch fast path: positional Arrays only, whose pytree depends on their
            # number alone (the key is the one the general path below builds).
            avals = []
            for x in args:
                if type(x) is not Array:
                    break
                avals.append(x._aval)
            else:
                in_tree = self._positional_trees.get(len(args))
                if in_tree is None:
                    in_tree = self._positional_trees[len(args)] = tree_flatten((args, {}))[1]
                entry = self._cache.get(((), in_tree, tuple(avals), config.xjax_jit_context,
                                         self._settings_key))
                if entry is not None:
                    return entry, args, in_tree
        if self._has_statics or kwargs:
            statics, dyn_args, dyn_kwargs = self._split(args, kwargs)
        else:
            statics, dyn_args, dyn_kwargs = (), args, kwargs
        flat, in_tree = flatten_call_args(tuple(dyn_args), dyn_kwargs)
        # (an Array's own aval read inline: a training step's parameters are many Arrays)
        avals = tuple([aval if type(x) is Array and type(aval := x._aval) is ShapedArray
                       else shaped_abstractify(x) for x in flat])
        # xjax_jit_context: the flags a trace depends on (x64, promotion mode, ...)
        key = (statics, in_tree, avals, config.xjax_jit_context, self._settings_key)
        entry = self._cache.get(key)
        if entry is None:
            if config.jax_explain_cache_misses:
                flag_checks.explain_cache_miss(self, key, self._cache)
            entry = self._trace(args, kwargs, statics, dyn_args, dyn_kwargs, in_tree, avals)
            if not _has_tracer_consts(entry.closed):
                self._cache[key] = entry
        return entry, flat, in_tree

    def _trace(self, args, kwargs, statics, dyn_args, dyn_kwargs, in_tree, avals):
        static_map = dict(statics)
        out_tree_box = []

        def flat_fun(*flat_tracers):
            dyn_args_t, dyn_kwargs_t = tree_unflatten(in_tree, flat_tracers)
            full_args = _merge_args(len(args), static_map, dyn_args_t)
            full_kwargs = dict(dyn_kwargs_t)
            full_kwargs.update({k: v for k, v in static_map.items() if isinstance(k, str)})
            out = self._fun(*full_args, **full_kwargs)
            out_flat, out_tree = tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_flat

        info = DebugInfo("jit", self._fun, self._arg_names(args, kwargs, dyn_args, dyn_kwargs))
        frozen = purity.frozen_values(self._fun)
        start = time.perf_counter()
        with flag_checks.tracing_checks(self._fun) as record_trace:
            if config.jax_check_tracer_leaks:
                flat_fun = _recording(flat_fun, record_trace)
            with monitoring.timed(monitoring.JAXPR_TRACE_EVENT,
                                  getattr(self._fun, "__name__", "fun")):
                closed, ref_plan = trace_with_refs(
                    flat_fun, avals, info, lambda: tree_flatten((tuple(dyn_args), dyn_kwargs))[0])
        flag_checks.log_tracing(self._fun, time.perf_counter() - start)
        purity.check_retrace(self._fun, frozen, compiled_before=bool(self._cache),
                             name=self._name)
        donated = None
        if self._donate_argnums or self._donate_argnames:
            donated = self._donation_vector(args, dyn_args, dyn_kwargs)
        if ref_plan is not None:
            ref_plan.bind_compile(closed, self._name, donated, self._compiler_options)
        entry = _TraceEntry(closed, out_tree_box[0], donated, ref_plan, self._compiler_options)
        if self._eager_inline:
            inline_when_eager(entry.call_jaxpr)
        return entry

    def _donation_vector(self, args, dyn_args, dyn_kwargs):
        """Per flat dynamic input: whether the caller donates it (JAX's donation_vector)."""
        flags = []
        positions = [i for i in range(len(args)) if i not in self._static_argnums]
        for i, a in zip(positions, dyn_args, strict=True):
            flags.extend([i in self._donate_argnums] * len(tree_flatten(a)[0]))
        for k, v in dyn_kwargs.items():
            flags.extend([k in self._donate_argnames] * len(tree_flatten(v)[0]))
        return tuple(flags)

    def __call__(self, *args, **kwargs):
        if config.xjax_jit_checks:  # disable_jit, debug_nans/infs, no_execution, guards
            return flag_checks.checked_jit_call(self, args, kwargs)
        entry, flat, _ = self._entry(args, kwargs)
        if type(trace_ctx.trace) is _ROOT:
            if sharded_state.multi_device and entry.ref_plan is None:
                partitioned = self._partitioned(entry, flat, args, kwargs)
                if partitioned is not None:
                    outs = partitioned(*flat)
                    return (outs[0] if entry.single_leaf
                            else tree_unflatten(entry.out_tree, outs))
            compiled = entry.compiled
            if compiled is None:
                compiled = entry.executable(self._name)
            outs = compiled(*flat)
            return outs[0] if entry.single_leaf else tree_unflatten(entry.out_tree, outs)
        plan = entry.ref_plan
        if plan is not None:
            outs = pjit_p.bind(*entry.call_consts, *plan.in_values(flat),
                               jaxpr=entry.call_jaxpr, name=self._name)
            return tree_unflatten(entry.out_tree, plan.write_back(flat, outs))
        if self._inline:  # jit(inline=True) under a trace: its equations, not a call (JAX)
            outs = eval_jaxpr(entry.call_jaxpr.jaxpr, entry.call_jaxpr.consts,
                              *entry.call_consts, *flat)
        else:
            outs = pjit_p.bind(*entry.call_consts, *flat, jaxpr=entry.call_jaxpr,
                               name=self._name)
        return tree_unflatten(entry.out_tree, outs)

    def _partitioned(self, entry, flat, args, kwargs):
        """The SPMD program over several devices for these arguments, or None."""
        out_shardings = None
        if self._out_shardings is not UNSPECIFIED:
            out_shardings = jit_shardings.flat_out_shardings(self._out_shardings,
                                                             entry.out_tree)
        mesh = partition_mesh(entry, flat, out_shardings)
        if mesh is None:
            return None
        return partitioned_function(entry, self._name, flat, mesh, lambda: (
            self._arg_names(args, kwargs, *self._split(args, kwargs)[1:])), out_shardings)

    def trace(self, *args, **kwargs):
        """Trace for these arguments: an ``xjax.stages.Traced`` (``.jaxpr``, ``.lower()``)."""
        entry, _, in_tree = self._entry(args, kwargs)
        from xjax._src.transformations.stages import Traced  # stages imports this module
        return Traced(entry, self._name, in_tree)

    def lower(self, *args, **kwargs):
        """Trace and lower for these arguments: an ``xjax.stages.Lowered`` (``.as_text()``,
        ``.compile()``)."""
        entry, flat, in_tree = self._entry(args, kwargs)
        partitioned = None
        if entry.ref_plan is None:  # (lower is no hot path: look for shardings always)
            partitioned = self._partitioned(entry, flat, args, kwargs)
        from xjax._src.transformations.stages import Lowered  # stages imports this module
        return Lowered(entry, self._name, in_tree, partitioned)

    def eval_shape(self, *args, **kwargs):
        entry, _, _ = self._entry(args, kwargs)
        return shape_structs(entry.out_tree, entry.closed.out_avals)

    def clear_cache(self):
        self._cache.clear()

    def __repr__(self):
        return f"<PjitFunction of {self._fun!r}>"


class ShapeDtypeStruct:
    """A shape and dtype, standing for an array in ``eval_shape`` results."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, weak_type=False, *, sharding=None):
        self.shape = tuple(shape)
        self.dtype = dtype if isinstance(dtype, dtypes.ExtendedDType) else np.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding  # kept as given; eval_shape's: a type's Explicit split

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape)))

    @classmethod
    def like(cls, x) -> ShapeDtypeStruct:
        """The shape, dtype and weak type of ``x`` (an array, tracer, NumPy value, Python
        scalar or anything with ``shape`` and ``dtype``), as JAX's ``ShapeDtypeStruct.like``.

        xjax's structs carry no sharding, so a committed array's sharding is not kept.

        Raises
        ------
        NotImplementedError
            For a mutable array reference (as JAX).

        Examples
        --------
        >>> import xjax, xjax.numpy as jnp
        >>> xjax.ShapeDtypeStruct.like(jnp.ones((2, 3), jnp.int8))
        ShapeDtypeStruct(shape=(2, 3), dtype=int8)
        """
        aval = shaped_abstractify(x)
        if type(aval) is AbstractRef:
            raise NotImplementedError(
                "Ref/AbstractRef support is not implemented. Please file an issue at "
                "https://github.com/jax-ml/jax/issues")
        return cls(aval.shape, aval.dtype, bool(getattr(x, "weak_type", aval.weak_type)))

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
                and self.dtype == other.dtype and self.sharding == other.sharding)

    def __hash__(self):
        return hash((self.shape, self.dtype, self.sharding))

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        sharding = "" if self.sharding is None else f", sharding={self.sharding}"
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}{weak})"


def jit(fun=None, *, in_shardings=UNSPECIFIED, out_shardings=UNSPECIFIED, static_argnums=None,
        static_argnames=None, donate_argnums=None, donate_argnames=None, keep_unused=False,
        device=None, backend=None, inline=False, compiler_options=None, **unsupported):
    """Compile ``fun`` with XLA: trace it once per signature to a jaxpr and run the executable.

    Parameters
    ----------
    fun : callable
        A pure function of arrays (pytrees of arrays) returning arrays.
    static_argnums, static_argnames : int or str, or sequences of them
        Arguments that are hashable Python values baked into the trace; a new value retraces.
        When only one is given, the other is inferred through the signature, as in JAX.
    donate_argnums, donate_argnames : int or str, or sequences of them
        Arguments whose buffers XLA may reuse for the results (each inferred from the other
        through the signature, as in JAX). A donated input aliases an output of identical
        shape and dtype; when one does, the Array passed is deleted by the call (using it
        again raises ``RuntimeError: Array has been deleted ...``). Donations no output can
        use warn ("Some donated buffers were not usable: ...") and leave the input alive.
        A NumPy array or Python scalar passed there is copied to the device first and never
        modified; an Array whose value is on the host is copied too and then deleted like
        any donated Array. An Array whose memory a NumPy view shares (``np.asarray(x)`` on
        the CPU) is not donated: XLA copies it and it stays alive. Donation applies to
        top-level calls; under transformations (grad, vmap, an enclosing jit) it is ignored.
    in_shardings, out_shardings : Sharding, PartitionSpec, None, or a pytree prefix of them
        Checked against the arguments (positional, not static) and results, which are then
        placed as ``device_put`` places them (PartitionSpecs need ``xjax.set_mesh``).
    compiler_options : dict, optional
        XLA options by name for every compile of ``fun`` (``{"xla_cpu_enable_fast_math":
        True}``), values str, bool, int or float; XLA rejects unknown names and bad values
        when it compiles. ``lower(...).compile(options)`` adds its own on top.

    Raises
    ------
    NotImplementedError
        For ``compiler_options`` JAX applies to XLA's build options (``optimization_level``,
        ``exec_time_optimization_effort``, ``memory_fitting_effort``,
        ``memory_fitting_level``).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> f = xjax.jit(lambda x: x * 2 + 1)
    >>> f(jnp.arange(3.0))
    Array([1., 3., 5.], dtype=float32)
    """
    if unsupported:
        raise TypeError(f"jit() got unexpected keyword arguments {sorted(unsupported)}")
    if compiler_options is not None:
        compiler_options = check_compiler_options(compiler_options)
    if fun is None:
        return functools.partial(jit, in_shardings=in_shardings, out_shardings=out_shardings,
                                 static_argnums=static_argnums,
                                 static_argnames=static_argnames,
                                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                                 keep_unused=keep_unused, device=device, backend=backend,
                                 inline=inline, compiler_options=compiler_options)
    jitted = PjitFunction(fun, static_argnums, static_argnames, donate_argnums,
                          donate_argnames, keep_unused, inline, out_shardings=out_shardings,
                          compiler_options=compiler_options)
    if in_shardings is UNSPECIFIED and out_shardings is UNSPECIFIED:
        return jitted
    return jit_shardings.sharded(fun, jitted, in_shardings, out_shardings,
                                 _resolve_static(_signature(fun), static_argnums,
                                                 static_argnames)[0])


def shape_structs(out_tree, avals):
    """``ShapeDtypeStruct``s of ``avals`` arranged as ``out_tree``, with the sharding a type
    carries (split over Explicit axes; None otherwise, as JAX's). A key array (a leaf node
    holding its key data) becomes one struct of its key type, as in JAX."""
    structs = unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, a.weak_type,
                                                    sharding=getattr(a, "_sharding", None))
                                   for a in avals])
    is_key = lambda x: is_leaf_node_type(type(x))  # noqa: E731
    return tree_map(lambda x: ShapeDtypeStruct(x.shape, x.dtype) if is_key(x) else x, structs,
                    is_leaf=is_key)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    """A function returning the jaxpr of ``fun`` for the given arguments.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> print(xjax.make_jaxpr(lambda x: x + 1.0)(jnp.ones(3)))
    { lambda ; a:f32[3]. let b:f32[3] = add a 1.0:f32[] in (b,) }
    """
    signature = _signature(fun)
    static_nums = _resolve_static(signature, static_argnums, ())[0]

    @wraps(fun)
    def make(*args, **kwargs):
        statics = {i: a for i, a in enumerate(args) if i in static_nums}
        dyn_args = [a for i, a in enumerate(args) if i not in static_nums]
        flat, in_tree = tree_flatten((tuple(dyn_args), kwargs))
        avals = [shaped_abstractify(x) for x in flat]
        out_tree_box = []

        def flat_fun(*tracers):
            dyn, kw = tree_unflatten(in_tree, tracers)
            out = fun(*_merge_args(len(args), statics, dyn), **kw)
            out_flat, out_tree = tree_flatten(out)
            out_tree_box.append(out_tree)
            return out_flat

        params = list(signature.parameters) if signature else []
        names = []
        for i, a in enumerate(args):
            if i not in static_nums:
                names.extend(_leaf_names(params[i] if i < len(params) else f"args[{i}]", a))
        with flag_checks.tracing_checks(fun) as record_trace:
            if config.jax_check_tracer_leaks:
                flat_fun = _recording(flat_fun, record_trace)
            closed, _ = trace_with_refs(flat_fun, avals, DebugInfo("make_jaxpr", fun, names),
                                        lambda: flat)
        if return_shape:
            return closed, shape_structs(out_tree_box[0], closed.out_avals)
        return closed

    return make


# -- helpers --

def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


def _resolve_static(signature, argnums, argnames):
    """Positions and names of the static (or donated) arguments. As JAX does, when only one
    of the two is given (not None), the other is inferred through ``signature`` from its
    positional-or-keyword parameters; when both are given, they are taken as they are."""
    nums, names = set(_as_tuple(argnums)), set(_as_tuple(argnames))
    if signature is None:
        return frozenset(nums), frozenset(names)
    params = list(signature.parameters.values())
    n_positional = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    nums = {i + n_positional if i < 0 else i for i in nums}
    either = [(i, p.name) for i, p in enumerate(params) if p.kind is p.POSITIONAL_OR_KEYWORD]
    if argnums is None and argnames is not None:
        nums = {i for i, name in either if name in names}
    elif argnames is None and argnums is not None:
        names = {name for i, name in either if i in nums}
    return frozenset(nums), frozenset(names)


def _check_static_donate_disjoint(static_nums, static_names, donate_nums, donate_names):
    names = static_names & donate_names
    if names:
        raise ValueError("static_argnames and donate_argnames cannot intersect. Argument "
                         f"names {set(names)} appear in both static_argnames and "
                         "donate_argnames")
    nums = static_nums & donate_nums
    if nums:
        raise ValueError(f"static_argnums {sorted(static_nums)} and donate_argnums "
                         f"{sorted(donate_nums)} cannot intersect.")


def _merge_args(n_args, static_map, dyn_args):
    dyn = iter(dyn_args)
    return [static_map[i] if i in static_map else next(dyn) for i in range(n_args)]


def flat_arg_names(params, positional, kwargs) -> list:
    """One name per flat argument leaf, in flattening order (for errors and debug info):
    the parameter's name (``params[i]``, or ``args[i]`` past the signature) for the leaves
    of the ``(i, value)`` pairs of ``positional``, ``name[j]`` within containers, then the
    keyword arguments' names in sorted order, as dicts flatten."""
    names = []
    for i, value in positional:
        names.extend(_leaf_names(params[i] if i < len(params) else f"args[{i}]", value))
    for key in sorted(kwargs):
        names.extend(_leaf_names(key, kwargs[key]))
    return names


def _leaf_names(base, value):
    leaves = tree_flatten(value)[0]
    if len(leaves) == 1:
        return [base]
    return [f"{base}[{i}]" for i in range(len(leaves))]


def _recording(flat_fun, record_trace):
    """``flat_fun``, recording the trace it runs under (for the tracer leak check)."""
    def recorded(*tracers):
        flag_checks.record_current_trace(record_trace)
        return flat_fun(*tracers)
    return recorded


def _has_tracer_consts(closed: ClosedJaxpr) -> bool:
    return any(isinstance(c, Tracer) for c in closed.consts)


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Place ``x`` (a pytree of arrays) on ``device`` (the default device if None).

    Under a transformation (any leaf traced) it binds ``device_put`` once for all leaves,
    as JAX does: an identity on xjax's one device, visible in jaxprs.

    A NumPy array is copied unless nothing can write it (it is read-only down to the
    memory's owner), so the result never changes when the caller later writes the array
    (JAX aliases it on the CPU). ``may_alias=True`` lets a large array's memory be shared
    instead of copied; the caller then must not write it while the result lives.

    Examples
    --------
    >>> import numpy as np, xjax
    >>> x = np.ones(3, np.float32)
    >>> y = xjax.device_put(x)
    >>> x[0] = 5.0
    >>> y
    Array([1., 1., 1.], dtype=float32)
    """
    device = _specs_over_context_mesh(device)
    for target in tree_flatten(device, is_leaf=lambda t: t is None)[0]:
        if target is not None and not isinstance(target, (runtime.Device, Sharding)):
            raise ValueError("`xjax.device_put` only accepts `None`, an `xjax.sharding."
                             "Sharding`, an `xjax.Device` or a pytree of these values. "
                             f"Received invalid value: {target}")
    leaves, treedef = tree_flatten(x)
    if any(isinstance(leaf, Tracer) for leaf in leaves):

        def per_leaf(value):
            """``value`` for every leaf: one value, or a tree prefix of ``x``."""
            if not isinstance(value, (tuple, list, dict)):
                return [value] * len(leaves)
            return prefix_leaves(value, x, is_leaf=lambda t: t is None)

        devices, srcs = per_leaf(device), per_leaf(src)
        semantics = [copy_semantics_of(d, m) for d, m in
                     zip(per_leaf(donate), per_leaf(may_alias), strict=True)]
        outs = device_put_p.bind(*[to_operand(leaf) for leaf in leaves],
                                 devices=tuple(devices), srcs=tuple(srcs),
                                 copy_semantics=tuple(semantics))
        return tree_unflatten(treedef, outs)

    if isinstance(device, NamedSharding) or (isinstance(device, Sharding)
                                              and len(device._device_assignment) > 1):
        # Kept as placed (JAX reports the NamedSharding, even over one device).
        return tree_map(lambda leaf: put_sharded(leaf, device, may_alias), x)
    if isinstance(device, Sharding):  # one sharding for every leaf (checked per shape)
        sharding = device
        return tree_map(lambda leaf: _put_one(leaf, resolve_put_target(
            leaf.shape if hasattr(leaf, "shape") else np.shape(leaf), sharding), src, donate,
            may_alias), x)
    if device is not None and not isinstance(device, runtime.Device):  # a pytree of targets
        targets, target_tree = tree_flatten(device, is_leaf=lambda t: t is None)
        subtrees = target_tree.flatten_up_to(x)
        return tree_unflatten(target_tree, [
            device_put(sub, target, src=src, donate=donate, may_alias=may_alias)
            for sub, target in zip(subtrees, targets, strict=True)])
    return tree_map(lambda leaf: _put_one(leaf, device, src, donate, may_alias), x)


def _specs_over_context_mesh(targets):
    """``device_put`` targets with each PartitionSpec made a NamedSharding over the mesh
    set with ``set_mesh`` (JAX's ValueError without one)."""
    def resolve(target):
        if not isinstance(target, PartitionSpec):
            return target
        mesh = get_mesh()
        if mesh.empty:
            raise ValueError("Please set a mesh via `jax.set_mesh` if a PartitionSpec is "
                             "passed to device_put")
        return NamedSharding(mesh, target)
    if isinstance(targets, PartitionSpec):
        return resolve(targets)
    return tree_map(resolve, targets, is_leaf=lambda t: t is None or isinstance(
        t, PartitionSpec))


def _put_one(leaf, device, src=None, donate=False, may_alias=None):
    """``device_put`` of one leaf on ``device`` (a Device or None)."""

    if config.xjax_transfer_guards:
        flag_checks.guard_device_put(leaf, device)
    if may_alias and donate:
        copy_semantics_of(donate, may_alias)  # JAX's ValueError, as under a trace
    if type(leaf) is Array:
        # An Array's value never changes: the new buffer may share its memory.
        return leaf if device is None else put_array(leaf._value(), leaf._aval, device, True,
                                                      committed=True)
    if isinstance(leaf, Tracer):  # under a transformation: the value itself (one device)
        return leaf
    value, aval = host_value(leaf)
    if device is None:  # the default device, uncommitted (as JAX's)
        return put_array(value, aval, runtime.default_device(), may_alias)
    return put_array(value, aval, device, may_alias, committed=True)
