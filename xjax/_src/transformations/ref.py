"""Mutable array references (``jax.ref``): ``new_ref``, ``Ref`` reads and writes, ``freeze``.

A :class:`Ref` holds its current value: an Array eagerly, a tracer while being traced.
Reads index that value; writes replace it with a functional update (dynamic_update_slice
or scatter), so under ``jit`` a Ref program becomes an ordinary jaxpr (``make_jaxpr`` shows
the updates, not JAX's ``get``/``swap`` equations) and ``grad``/``vmap`` of functions that
use Refs internally need no rules of their own. Refs that cross into ``jit`` or
control-flow bodies are threaded through them (``xjax/interpreters/refs.py``).

Indexing follows JAX's Refs, which differ from array indexing: static integers and
``ds`` slices out of range raise ``ValueError``; traced integers and index arrays are
clamped (after negative indices wrap); a written value must have exactly the indexed
shape and the Ref's dtype (no broadcasting, no promotion).
"""

from __future__ import annotations

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes, errors
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.ref_avals import AbstractRef, Slice, is_ref
from xjax._src.core.trace import Tracer, current_trace
from xjax._src.interpreters import refs as _scopes
from xjax._src.lax.operands import to_operand
from xjax._src.interpreters.staging import StagingTrace
from xjax._src.lax.convert import _convert_element_type

__all__ = ["AbstractRef", "Ref", "addupdate", "free_ref", "freeze", "get", "new_ref",
           "empty_ref", "set", "swap", "ds"]


class Ref:
    """A mutable array reference. Make one with :func:`new_ref`.

    ``ref[idx]`` reads, ``ref[idx] = value`` writes, ``ref[idx] += value`` reads then writes;
    ``ref[...]`` is the whole value.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> ref = xjax.new_ref(jnp.arange(5))
    >>> ref[3] = 100
    >>> ref
    Ref([  0,   1,   2, 100,   4], dtype=int32)
    >>> ref[1:3]
    Array([1, 2], dtype=int32)
    """

    # _value: the current value; _trace/_scope: where that value lives (see
    # xjax/interpreters/refs.py), changed only by the ref scopes that thread it.
    __slots__ = ("_aval", "_value", "_trace", "_scope", "__weakref__")

    def __init__(self, aval: AbstractRef, value, trace=None, scope=None):
        self._aval = aval
        self._value = value
        self._trace = current_trace() if trace is None else trace
        self._scope = _scopes.innermost_scope() if scope is None else scope

    aval = property(lambda self: self._aval)
    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)
    ndim = property(lambda self: self._aval.ndim)
    size = property(lambda self: self._aval.size)
    committed = property(lambda self: True)

    @property
    def sharding(self):
        return _scopes.read_value(self).sharding

    def __len__(self) -> int:
        if not self._aval.shape:
            raise TypeError("len() of unsized object")  # NumPy's words, as JAX's
        return self._aval.shape[0]

    def __getitem__(self, idx):
        return get(self, idx)

    def __setitem__(self, idx, value):
        set(self, idx, value)

    def addupdate(self, x, idx=()):
        """Add ``x`` into ``self[idx]`` (repeated indices accumulate)."""
        addupdate(self, idx, x)

    @property
    def at(self):
        raise NotImplementedError("Ref.at is not implemented (nor in JAX 0.10.2)")

    def __repr__(self) -> str:
        value = self._value
        if type(value) is Array:
            return "Ref" + repr(value)[5:]
        trace_type = type(getattr(value, "_trace", None))  # a Ref being traced, as tracers print
        return f"Traced<{self._aval!r}>with<{getattr(trace_type, 'repr_name', trace_type.__name__)}>"


# -- creating and retiring Refs --------------------------------------------------------------

def new_ref(init_val, *, memory_space=None, kind=None) -> Ref:
    """A new mutable array reference holding ``init_val``.

    Parameters
    ----------
    init_val : array_like
        The initial value (an array or scalar; not a list or other pytree).
    memory_space : optional
        Where the Ref lives (``jax.memory.Space`` ...). As in JAX, only accepted while
        being staged (under ``jit``); xjax has one memory space, so it only names the type.
    kind : optional
        Recorded on the Ref's type.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> ref = xjax.new_ref(jnp.zeros(3))
    >>> ref[...] += 1
    >>> xjax.freeze(ref)
    Array([1., 1., 1.], dtype=float32)
    """
    if isinstance(init_val, (list, tuple, dict)) or is_ref(init_val) or init_val is None:
        raise TypeError("Error interpreting argument to new_ref as a JAX value. The "
                        f"problematic value is of type {type(init_val)} and was passed to "
                        "new_ref at position 0.")
    if memory_space is not None and not _staging():
        raise NotImplementedError("array ref with memory space only works inside of a `jit`.")
    value = to_operand(init_val)
    aval = value.aval
    return Ref(AbstractRef(ShapedArray(aval.shape, aval.dtype, aval.weak_type), memory_space,
                           kind), value)


def empty_ref(ty, memory_space=None) -> Ref:
    """A new Ref of type ``ty`` (an aval, ``ShapeDtypeStruct`` or array) whose contents are
    unspecified until written (xjax fills it with zeros). As in JAX, it only works while
    being staged (under ``jit`` or in a control-flow body), not eagerly.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> def f(x):
    ...     ref = xjax.empty_ref(xjax.ShapeDtypeStruct(x.shape, x.dtype))
    ...     ref[...] = x * 2
    ...     return ref[...]
    >>> xjax.jit(f)(jnp.ones(2))
    Array([2., 2.], dtype=float32)
    """
    if isinstance(ty, AbstractRef):
        ty = ty.inner_aval
    try:
        shape, dtype = tuple(ty.shape), dtypes.canonicalize_dtype(np.dtype(ty.dtype))
    except AttributeError:
        raise TypeError(f"empty_ref expects a type with a shape and dtype, got {ty!r}") \
            from None
    if not _staging():  # JAX's empty_ref has no eager rule
        raise NotImplementedError("Evaluation rule for 'empty_ref' not implemented")
    weak = bool(getattr(ty, "weak_type", False))
    value = lax.full(shape, np.zeros((), dtype), dtype) if not weak else \
        Array._from_numpy(np.zeros(shape, dtype), ShapedArray(shape, dtype, True))
    return Ref(AbstractRef(ShapedArray(shape, dtype, weak), memory_space), value)


def _staging() -> bool:
    """Whether the code running now is staged into a jaxpr (``jit``, ``make_jaxpr``,
    control-flow bodies, maybe under other transformations) rather than evaluated: what
    JAX's ``empty_ref`` and Ref memory spaces need."""
    trace = current_trace()
    while trace is not None:
        if type(trace) is StagingTrace:  # not linearize's partial staging
            return True
        trace = trace.parent
    return False


def freeze(ref):
    """The final value of ``ref``, as an Array (the Ref should not be used afterwards).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> ref = xjax.new_ref(jnp.arange(3))
    >>> ref[0] = 7
    >>> xjax.freeze(ref)
    Array([7, 1, 2], dtype=int32)
    """
    if not is_ref(ref):
        return to_operand(ref)
    return _scopes.read_value(ref)


def free_ref(ref) -> tuple:
    """Declare ``ref`` no longer used; returns ``()`` as JAX's does."""
    if not is_ref(ref):
        raise ValueError(f"Can only call `free_ref` on a `Ref`: {ref}.")
    return ()


# -- reading and writing ---------------------------------------------------------------------

def get(ref, idx=None):
    """``ref[idx]``: a new Array (later writes to ``ref`` do not change it).

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> ref = xjax.new_ref(jnp.arange(5))
    >>> xjax.ref.get(ref, slice(1, 3))
    Array([1, 2], dtype=int32)
    """
    _check_ref(ref, "ref_get")
    entries = _parse_index(idx, ref.shape)
    return _read(_scopes.read_value(ref), entries)


def swap(ref, idx, value):
    """Write ``value`` into ``ref[idx]`` and return what was there."""
    _check_ref(ref, "ref_swap")
    entries = _parse_index(idx, ref.shape)
    update = _checked_update(ref, entries, value, "swap")
    current = _scopes.read_value(ref)
    old = _read(current, entries)
    _store(ref, _write(current, entries, update, "set"))
    return old


def set(ref, idx, value) -> None:  # noqa: A001  (JAX's name)
    """``ref[idx] = value``: ``value`` must have the indexed shape and the Ref's dtype."""
    _check_ref(ref, "ref_set")
    entries = _parse_index(idx, ref.shape)
    update = _checked_update(ref, entries, value, "swap")
    _store(ref, _write(_scopes.read_value(ref), entries, update, "set"))


def addupdate(ref, idx, x) -> None:
    """``ref[idx] += x``, where repeated indices in ``idx`` each accumulate."""
    _check_ref(ref, "ref_addupdate")
    entries = _parse_index(idx, ref.shape)
    update = _checked_update(ref, entries, x, "addupdate")
    _store(ref, _write(_scopes.read_value(ref), entries, update, "add"), "addupdate")


def _check_ref(ref, name):
    if not is_ref(ref):
        raise ValueError(f"Can only call `{name}` on a `Ref`: {ref}.")


def _checked_update(ref, entries, value, what):
    """``value`` as an operand, after JAX's exact shape and dtype checks."""
    value = to_operand(value)
    aval = value.aval
    expected = _indexed_shape(entries)
    if aval.shape != expected:
        raise ValueError(f"Invalid shape for `{what}`. Ref shape: {ref.shape}. Expected "
                         f"shape: {expected}. Value shape: {aval.shape}.")
    if aval.dtype != ref.dtype:
        raise ValueError(f"Invalid dtype for `{what}`. Ref dtype: {ref.dtype}. Value dtype: "
                         f"{aval.dtype}.")
    return value


def _store(ref, value, op="swap"):
    """Make ``value`` the Ref's value, keeping the Ref's weak type (its type is fixed)."""
    weak = ref._aval.weak_type
    if value.aval.weak_type != weak:
        value = _convert_element_type(value, ref.dtype, weak_type=weak)
    _scopes.write_value(ref, value, op)


# -- indices ---------------------------------------------------------------------------------

def ds(start, size=None, stride=None):
    """A slice of ``size`` elements from ``start`` (``jax.ds``, alias of ``dslice``).

    ``ds(None)`` is ``:``, ``ds(j)`` is ``:j``, ``ds(i, j)`` is ``i:i+j`` and
    ``ds(i, j, s)`` is ``i:i+j:s``; ``i`` may be traced.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> ref = xjax.new_ref(jnp.arange(10))
    >>> ref[xjax.ds(4, 2)]
    Array([4, 5], dtype=int32)
    """
    if start is None:
        return slice(None)
    if stride is None:
        stride = 1
    if not isinstance(stride, (int, np.integer)):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, size, int(stride))


dslice = ds


def _parse_index(idx, shape) -> list:
    """One ``(kind, value)`` per dimension of ``shape``: ('int', i) static in range,
    ('dyn', tracer), ('slice', Slice) or ('array', integer indices)."""
    if idx is None or idx is Ellipsis:
        idx = ()
    elif not isinstance(idx, tuple):
        idx = (idx,)
    if any(item is None for item in idx):
        raise ValueError("Ref indexing does not support None (np.newaxis)")
    n_ellipsis = sum(item is Ellipsis for item in idx)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_ellipsis:
        at = next(i for i, item in enumerate(idx) if item is Ellipsis)
        fill = (slice(None),) * (len(shape) - len(idx) + 1)
        idx = idx[:at] + fill + idx[at + 1:]
    if len(idx) > len(shape):
        raise ValueError(f"`indices` must not be longer than `shape`: indices={idx}, "
                         f"shape={shape}")
    idx = idx + (slice(None),) * (len(shape) - len(idx))
    return [_parse_item(item, dim) for item, dim in zip(idx, shape, strict=True)]


def _parse_item(item, dim):
    if isinstance(item, slice):
        return ("slice", Slice.from_slice(item, dim))
    if isinstance(item, Slice):
        return ("slice", _checked_slice(item, dim))
    if isinstance(item, float) and float(item).is_integer():
        item = int(item)
    static = _static_int(item)
    if static is not None:
        if not -dim <= static < dim:
            raise ValueError(f"Out of bound indexer: idx={static}, dim={dim}.")
        return ("int", static + dim if static < 0 else static)
    if isinstance(item, (list, np.ndarray, Array, Tracer)) or np.ndim(item):
        operand = to_operand(np.asarray(item) if isinstance(item, list) else item)
        kind = operand.aval.dtype
        if kind == np.bool_:
            error = errors.NonConcreteBooleanIndexError.__new__(
                errors.NonConcreteBooleanIndexError)
            Exception.__init__(error, "Array boolean indices must be concrete; got "
                                      f"{operand.aval.str_short()}")
            raise error
        if not dtypes.is_integer(kind):
            raise TypeError(f"Ref indices must be integers, got {operand.aval.str_short()}")
        return ("dyn" if operand.aval.shape == () else "array", operand)
    raise TypeError(f"Ref indices must be integers, slices, ds(...) or integer arrays; got "
                    f"{item!r}")


def _static_int(item):
    """``item`` as a Python int when it is a concrete integer scalar, else None."""
    if isinstance(item, (bool, np.bool_)):
        error = errors.NonConcreteBooleanIndexError.__new__(errors.NonConcreteBooleanIndexError)
        Exception.__init__(error, "Array boolean indices must be concrete; got bool[]")
        raise error
    if isinstance(item, (int, np.integer)):
        return int(item)
    if type(item) is Array and item.aval.shape == () and dtypes.is_integer(item.dtype):
        return int(item._value())
    return None


def _checked_slice(item: Slice, dim: int) -> Slice:
    size, stride = _static_int(item.size), item.stride
    if size is None:
        raise NotImplementedError("ds with a traced size: Ref slices need a static size")
    start = _static_int(item.start)
    if start is None:  # traced: clamped when applied
        return Slice(item.start, size, stride)
    if start < 0:
        raise TypeError(f"slice start_indices must have every element be nonnegative, got "
                        f"({start},).")
    if size and start + (size - 1) * stride >= dim:
        raise ValueError(f"Out of bound slice: start={start}, size={size}, stride={stride}, "
                         f"dim={dim}.")
    return Slice(start, size, stride)


def _is_full(entry, dim) -> bool:
    kind, value = entry
    return (kind == "slice" and value.stride == 1 and value.size == dim
            and not isinstance(value.start, Tracer) and value.start == 0)


def _indexed_shape(entries) -> tuple:
    """The shape ``ref[idx]`` has (NumPy's placement of advanced indices)."""
    advanced = [i for i, (kind, _) in enumerate(entries) if kind != "slice"]
    arrays = [value.aval.shape for kind, value in entries if kind == "array"]
    if not arrays:
        return tuple(v.size for kind, v in entries if kind == "slice")
    broadcast = np.broadcast_shapes(*arrays)
    sliced = [(i, v.size) for i, (kind, v) in enumerate(entries) if kind == "slice"]
    if advanced == list(range(advanced[0], advanced[-1] + 1)):
        before = tuple(n for i, n in sliced if i < advanced[0])
        after = tuple(n for i, n in sliced if i > advanced[-1])
        return before + tuple(broadcast) + after
    return tuple(broadcast) + tuple(n for _, n in sliced)


def _rest_index(entries):
    """The NumPy-style index for what remains after the slices are applied."""
    return tuple(slice(None) if kind == "slice" else value for kind, value in entries)


def _apply_slices(value, entries):
    """``value`` restricted to the entries' slices (other dimensions whole)."""
    shape = value.aval.shape
    slices = [(i, v) for i, (kind, v) in enumerate(entries)
              if kind == "slice" and not _is_full(entries[i], shape[i])]
    if not slices:
        return value
    starts, spans, strides = [0] * len(shape), list(shape), [1] * len(shape)
    for i, s in slices:
        starts[i], spans[i], strides[i] = s.start, max((s.size - 1) * s.stride + 1, 0), s.stride
    if s.size == 0 or any(v.size == 0 for _, v in slices):
        limits = [st + sp if not isinstance(st, Tracer) else sp for st, sp in
                  zip(starts, spans, strict=True)]
        return lax.slice(value, [0] * len(shape), [0 if lim == 0 else n for lim, n in
                                                   zip(spans, shape, strict=True)])
    if any(isinstance(st, Tracer) for st in starts):
        value = lax.dynamic_slice(value, starts, spans)
        starts = [0] * len(shape)
    limits = [st + sp for st, sp in zip(starts, spans, strict=True)]
    if starts == [0] * len(shape) and limits == list(value.aval.shape) and \
            strides == [1] * len(shape):
        return value
    return lax.slice(value, starts, limits, strides if any(s != 1 for s in strides) else None)


def _read(value, entries):
    shape = value.aval.shape
    if all(_is_full(e, n) for e, n in zip(entries, shape, strict=True)):
        return value
    value = _apply_slices(value, entries)
    if all(kind == "slice" for kind, _ in entries):
        return value
    from xjax._src.numpy.indexing import rewriting_take  # numpy is a higher layer than transformations
    return rewriting_take(value, _rest_index(entries))


def _write(value, entries, update, kind):
    """``value`` with ``update`` set into (kind 'set') or added to ('add') ``value[entries]``."""
    shape = value.aval.shape
    if all(_is_full(e, n) for e, n in zip(entries, shape, strict=True)):
        return update if kind == "set" else lax.add(value, update)
    if all(k in ("int", "dyn") or _is_full((k, v), n) for (k, v), n in zip(entries, shape,
                                                                           strict=True)):
        # Integers and whole dimensions: one block, a dynamic_update_slice (which clamps
        # traced starts, as Ref writes do).
        block = [1 if k != "slice" else n for (k, _), n in zip(entries, shape, strict=True)]
        starts = [v if k != "slice" else 0 for k, v in entries]
        if kind == "add":
            update = lax.add(_read(value, entries), update)
        return lax.dynamic_update_slice(value, update.reshape(block), starts)
    if all(k != "slice" or _is_full((k, v), n) for (k, v), n in zip(entries, shape,
                                                                     strict=True)):
        from xjax._src.numpy.indexing import scatter_update  # numpy is a higher layer than transformations
        return scatter_update(value, _rest_index(entries), update, kind, mode="clip")
    if all(k == "slice" and v.stride == 1 for k, v in entries):
        starts = [v.start for _, v in entries]
        if kind == "add":
            update = lax.add(_apply_slices(value, entries), update)
        return lax.dynamic_update_slice(value, update, starts)
    # Strided slices mixed with other indices: find the positions a read would take and
    # scatter there (the read's clamping decides, so reads and writes always agree).
    from xjax._src.numpy.indexing import scatter_update  # numpy is a higher layer than transformations
    positions = lax.iota(np.int32, int(np.prod(shape))).reshape(shape)
    flat_positions = _read(positions, entries).reshape(-1)
    flat = scatter_update(value.reshape(-1), flat_positions, update.reshape(-1), kind,
                          mode="clip")
    return flat.reshape(shape)
