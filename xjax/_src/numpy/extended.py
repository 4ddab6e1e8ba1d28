"""Arrays of extended dtypes (the typed PRNG key arrays of ``xjax.random``) in ``xjax.numpy``.

An extended array holds *physical data*: an ordinary array whose shape is the extended
array's shape followed by the element shape of its dtype (two uint32 words per Threefry
key). The library that defines such arrays registers their layout here
(:func:`register_extended_array`); this layer lies below that library and knows its arrays
only through the registration.

Functions that only move elements (broadcasting, reshaping, joining, selecting, indexing)
accept extended arrays through :func:`moves_elements`. Such a function commutes with any
renumbering of the elements, so it runs on the *positions* of the elements (int32 arrays
numbering the elements of every extended argument) and the physical data is then gathered
at the positions it returns. One mechanism serves them all, under every transformation,
with each function's own checks and error messages. Position 0 is a zero element: where a
function fills in zeros (``triu``), the result holds zero data, as JAX's does; where it
fills in out-of-bounds values (``take``'s default mode), the gather fills the data with
its own out-of-bounds value, as JAX's physical gather does.
"""

from __future__ import annotations

import functools
import inspect
import math
import re

import numpy as np

from xjax._src import lax
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.dtypes import ExtendedDType
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import aval_of, is_arraylike


class ExtendedLayout:
    """How the arrays of one extended dtype hold their physical data.

    Parameters
    ----------
    dtype : ExtendedDType
        The dtype of the arrays.
    element_shape : tuple of int
        The trailing dimensions of the data that make one element.
    element_dtype : numpy.dtype
        The dtype of the data.
    data_of : callable
        ``data_of(x)``: the physical data of array ``x``.
    wrap : callable
        ``wrap(data)``: an array over physical ``data`` (no checks).
    """

    __slots__ = ("dtype", "element_shape", "element_dtype", "data_of", "wrap")

    def __init__(self, dtype, element_shape, element_dtype, data_of, wrap):
        self.dtype = dtype
        self.element_shape = tuple(element_shape)
        self.element_dtype = np.dtype(element_dtype)
        self.data_of = data_of
        self.wrap = wrap


_POSITIONS_DTYPE = np.dtype(np.int32)
_LAYOUTS_BY_TYPE: dict = {}
_LAYOUTS_BY_DTYPE: dict = {}


def register_extended_array(array_type, layout: ExtendedLayout) -> None:
    """Let ``xjax.numpy`` handle instances of ``array_type``, arrays of ``layout.dtype``."""
    _LAYOUTS_BY_TYPE[array_type] = layout
    _LAYOUTS_BY_DTYPE[layout.dtype] = layout


def is_extended(x) -> bool:
    """Whether ``x`` is an array of a registered extended dtype (a PRNG key array)."""
    return type(x) in _LAYOUTS_BY_TYPE


def is_extended_dtype(dtype) -> bool:
    """Whether ``dtype`` is a registered extended dtype (``key<fry>``)."""
    return isinstance(dtype, ExtendedDType) and dtype in _LAYOUTS_BY_DTYPE


def data_of(x):
    """The physical data of extended array ``x``."""
    return _LAYOUTS_BY_TYPE[type(x)].data_of(x)


def physical_aval(aval) -> ShapedArray:
    """The aval of the data behind arrays of ``aval``, of an extended dtype (``key<fry>[3]``:
    ``uint32[3,2]``)."""
    layout = _LAYOUTS_BY_DTYPE[aval.dtype]
    return ShapedArray((*aval.shape, *layout.element_shape), layout.element_dtype)


def wrap_data(dtype, data):
    """An array of extended ``dtype`` over its physical ``data`` (no checks)."""
    return _LAYOUTS_BY_DTYPE[dtype].wrap(data)


def promotion_error(dtype) -> ValueError:
    """JAX's error for an extended array meeting an operand of another dtype."""
    return ValueError(f"dtype={dtype} is not a valid dtype for JAX type promotion.")


# --------------------------------------------------------------------------------------------
# filling


def full(shape: tuple, fill, dtype):
    """An extended array of ``shape`` and ``dtype`` filled with ``fill``.

    A scalar extended array is broadcast; any other scalar fills the physical data (as in
    JAX, ``zeros_like`` of keys gives keys of zero data, ``ones_like`` keys of one data).
    """
    layout = _LAYOUTS_BY_DTYPE[dtype]
    out_shape = tuple(shape) + layout.element_shape
    if is_extended(fill):
        data = data_of(fill)
        lead = len(out_shape) - len(aval_of(data).shape)
        return layout.wrap(lax.broadcast_in_dim(data, out_shape,
                                                tuple(range(lead, len(out_shape)))))
    return layout.wrap(lax.full(out_shape, fill, layout.element_dtype))


# --------------------------------------------------------------------------------------------
# functions that move elements


def moves_elements(*names, each_alone: bool = False):
    """Decorator: let a function that only moves elements take extended arrays in the
    parameters ``names`` (arrays, sequences of arrays, or ``*args``).

    Arrays of one extended dtype may fill those parameters; another array there is JAX's
    promotion error, and a ``dtype`` argument must be the extended dtype. Calls without
    extended arrays go straight to the function.

    ``each_alone`` marks a function of ``*args`` whose i-th result comes from its i-th
    argument alone (``broadcast_arrays``, ``atleast_1d``): there other arrays may come along.
    """
    def decorate(fun):
        signature = inspect.signature(fun)
        spots = _spots(signature, names)
        on_positions = _each_on_positions if each_alone else _on_positions
        if len(spots) == 1 and not spots[0][2] and spots[0][0] is not None:
            return _wrap_one(fun, signature, names, spots[0][0], on_positions)

        @functools.wraps(fun)
        def wrapper(*args, **kwargs):
            if _holds_extended(spots, args, kwargs):
                return on_positions(fun, signature, names, args, kwargs)
            return fun(*args, **kwargs)
        return wrapper
    return decorate


def _wrap_one(fun, signature, names, index: int, on_positions):
    """:func:`moves_elements`'s wrapper for one positional parameter: the hot functions
    (``reshape``, ``take``, ``asarray``) pay one type test when they get no sequence."""
    (name,) = names
    sequences = (list, tuple)

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        value = args[index] if len(args) > index else kwargs.get(name)
        kind = type(value)
        if kind in _LAYOUTS_BY_TYPE or (kind in sequences and _holds(value)):
            return on_positions(fun, signature, names, args, kwargs)
        return fun(*args, **kwargs)
    return wrapper


def _spots(signature, names) -> tuple:
    """(positional index, name, whether it is ``*args``) of each parameter in ``names``."""
    parameters = list(signature.parameters.values())
    spots = []
    for name in names:
        parameter = signature.parameters[name]
        index = parameters.index(parameter)
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            index = None
        spots.append((index, name, parameter.kind is inspect.Parameter.VAR_POSITIONAL))
    return tuple(spots)


def _holds_extended(spots, args, kwargs) -> bool:
    """Whether the arguments at ``spots`` hold an extended array (the wrapper's fast test)."""
    for index, name, variadic in spots:
        if variadic:
            value = args[index:]
        elif index is not None and index < len(args):
            value = args[index]
        elif name in kwargs:
            value = kwargs[name]
        else:
            continue
        if _holds(value):
            return True
    return False


def _holds(value) -> bool:
    """Whether ``value`` is an extended array or a (nested) list or tuple holding one."""
    kind = type(value)
    if kind in _LAYOUTS_BY_TYPE:
        return True
    if kind is list or kind is tuple:
        for item in value:
            if _holds(item):
                return True
    return False


def _first_extended(value):
    """The first extended array in ``value`` (as :func:`_holds` searches), or None."""
    if is_extended(value):
        return value
    if type(value) in (list, tuple):
        for item in value:
            found = _first_extended(item)
            if found is not None:
                return found
    return None


def _on_positions(fun, signature, names, args, kwargs):
    """``fun`` run on element positions, its results gathered from the physical data."""
    bound = signature.bind(*args, **kwargs)
    bound.apply_defaults()  # a default (select's 0) is an operand as much as an argument
    first = next(found for found in (_first_extended(bound.arguments.get(name))
                                     for name in names) if found is not None)
    pool = _Pool(_LAYOUTS_BY_TYPE[type(first)])
    for name in names:
        if name in bound.arguments:
            bound.arguments[name] = pool.positions(bound.arguments[name])
    _restate_dtype_argument(bound, pool.layout.dtype)
    return pool.gather(_call(fun, bound, pool.layout.dtype))


def _each_on_positions(fun, signature, names, args, kwargs):
    """``fun`` of ``*args`` run with the extended arguments as positions; only their own
    results are gathered."""
    (name,) = names
    bound = signature.bind(*args, **kwargs)
    arrays = bound.arguments[name]
    pools = [_Pool(_LAYOUTS_BY_TYPE[type(x)]) if is_extended(x) else None for x in arrays]
    bound.arguments[name] = tuple(x if pool is None else pool.positions(x)
                                  for x, pool in zip(arrays, pools, strict=True))
    out = _call(fun, bound, next(p for p in pools if p is not None).layout.dtype)
    if len(arrays) == 1:  # a single array: the result itself, not a list of one
        return pools[0].gather(out)
    return type(out)(item if pool is None else pool.gather(item)
                     for item, pool in zip(out, pools, strict=True))


def _restate_dtype_argument(bound, dtype) -> None:
    """A ``dtype`` argument may only restate the extended dtype: it becomes the positions'."""
    requested = bound.arguments.get("dtype")
    if requested is None:
        return
    if dtype != requested:
        name = requested if isinstance(requested, ExtendedDType) else np.dtype(requested).name
        raise ValueError(f"Cannot convert_element_type from {dtype} to {name}")
    bound.arguments["dtype"] = _POSITIONS_DTYPE


# how errors of a function run on positions name their aval (``int32[3]``)
_POSITIONS_AVAL = re.compile(r"\bint32\[")


def _call(fun, bound, dtype):
    """``fun`` run on positions; its errors name ``dtype`` where they name the positions'."""
    try:
        return fun(*bound.args, **bound.kwargs)
    except (TypeError, ValueError) as error:
        message = str(error)
        renamed = _POSITIONS_AVAL.sub(f"{dtype}[", message)
        if type(error) not in (TypeError, ValueError) or renamed == message:
            raise
        raise type(error)(renamed) from None


class _Pool:
    """The physical data of the extended arguments of one call, one element per row after a
    zero row, and the int32 positions of their elements in it."""

    def __init__(self, layout: ExtendedLayout):
        self.layout = layout
        self.rows = [np.zeros((1,) + layout.element_shape, layout.element_dtype)]
        self.count = 1
        self._table = None

    def positions(self, value):
        """``value`` with each extended array replaced by the positions of its elements."""
        if is_extended(value):
            return self._number(value)
        if type(value) in (list, tuple):
            return type(value)(self.positions(item) for item in value)
        if value is not None and is_arraylike(value):
            raise promotion_error(self.layout.dtype)
        return value  # not an array: the function raises its own error

    def _number(self, x):
        layout = _LAYOUTS_BY_TYPE[type(x)]
        if layout is not self.layout:
            raise promotion_error(layout.dtype)
        shape = tuple(x.shape)
        size = math.prod(shape)
        self.rows.append(lax.reshape(layout.data_of(x), (size,) + layout.element_shape))
        positions = np.arange(self.count, self.count + size, dtype=_POSITIONS_DTYPE)
        positions = positions.reshape(shape)
        self.count += size
        return Array._from_numpy(positions, ShapedArray(shape, positions.dtype, False))

    def gather(self, out):
        """The results of the function, positions replaced by extended arrays."""
        if type(out) in (list, tuple):
            return type(out)(self.gather(item) for item in out)
        if not (type(out) is Array or isinstance(out, Tracer)):
            return out
        if self._table is None:
            self._table = lax.concatenate(self.rows, 0)
        return self.layout.wrap(_take_rows(self._table, out, self.layout.element_shape))


def _take_rows(table, positions, element_shape: tuple):
    """``table[positions]``, rows outside the table filled (the gather's fill value)."""
    rank = len(aval_of(positions).shape)
    indices = lax.broadcast_in_dim(positions, tuple(aval_of(positions).shape) + (1,),
                                   tuple(range(rank)))
    numbers = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(rank, rank + len(element_shape))), collapsed_slice_dims=(0,),
        start_index_map=(0,), operand_batching_dims=(), start_indices_batching_dims=())
    return lax.gather(table, indices, numbers, (1,) + element_shape,
                      mode=lax.GatherScatterMode.FILL_OR_DROP)
