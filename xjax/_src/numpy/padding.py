"""``pad``: NumPy's ``np.pad`` with every mode JAX supports, composed from ``lax`` slices,
concatenations and pads (so it works under ``jit``, ``grad`` and ``vmap``).

The widths, ``stat_length`` and ``end_values`` shape the result, so they must be concrete
(static under ``jit``); ``constant_values`` may be traced. Departures from JAX 0.10:
``stat_length`` and ``end_values`` may be lists, as in NumPy (JAX's ``jit`` rejects them
as unhashable static arguments, and traced ones with that ValueError where we raise a
ConcretizationTypeError naming the argument); a ``reflect_type`` other than
``'even'``/``'odd'`` raises a ValueError (JAX fails an assertion); 'empty' pads with zeros
through one ``lax.pad`` (JAX concatenates ``jnp.empty``, which is ``jnp.zeros``).
"""

from __future__ import annotations

import numpy as np

import xjax._src.numpy as jnp
from xjax._src import lax
from xjax._src.core import dtypes, errors
from xjax._src.core.array import Array
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import (aval_of, check_arraylike, convert_element_type,
                                        dtype_and_weak, to_jax)

# The keyword arguments each string mode accepts (any other is a ValueError, as in JAX).
_MODE_KWARGS = {
    "constant": ("constant_values",),
    "edge": (),
    "empty": (),
    "wrap": (),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "minimum": ("stat_length",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


def _shape(x) -> tuple:
    return tuple(aval_of(x).shape)


def _concrete_leaves(value, name: str):
    """``value`` (nested sequences of scalars/arrays) with every leaf as a concrete value."""
    if isinstance(value, (list, tuple)):
        return [_concrete_leaves(v, name) for v in value]
    if isinstance(value, Tracer):
        concrete = value.to_concrete_value()
        if concrete is None:
            raise errors.ConcretizationTypeError(value, f"{name} argument of jnp.pad")
        return np.asarray(concrete)
    if type(value) is Array:
        return value._value()
    return value


def _broadcast_to_pairs(value, nd: int, name: str) -> tuple:
    """``value`` as ``nd`` pairs ``(before, after)``: it may be one scalar, ``(v,)``,
    ``(before, after)``, ``((before, after),)`` or one pair per axis (JAX's shapes)."""
    try:
        values = np.asarray(_concrete_leaves(value, name))
    except ValueError as e:
        if "inhomogeneous" in str(e):
            raise TypeError(f"`{name}` entries must be the same shape: {value}") from e
        raise
    if values.dtype == object:
        raise TypeError(f"`{name}` entries must be the same shape: {value}")
    if values.shape == (nd, 2):
        return tuple((row[0], row[1]) for row in values)
    if values.shape in ((1, 2), (2,)):
        pair = tuple(values.reshape(2))
        return (pair,) * nd
    if values.shape in ((1,), ()):
        v = values.reshape(())[()]
        return ((v, v),) * nd
    raise ValueError(f"jnp.pad: {name} with nd={nd} has unsupported shape {values.shape}. "
                     f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ().")


def _as_int_pairs(pairs, name: str) -> tuple:
    """Integer pairs as Python ints; anything else (floats, bools) is JAX's TypeError."""
    for pair in pairs:
        for v in pair:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"`{name}` must be of integral type.")
    return tuple((int(lo), int(hi)) for lo, hi in pairs)


def _slice_axis(array, start, stop, axis):
    return lax.slice_in_dim(array, start, stop, axis=axis)


def _repeat_along(piece, axis, count):
    """``piece`` (size 1 along ``axis``) repeated ``count`` times along ``axis``."""
    shape = list(_shape(piece))
    if shape[axis] == count:
        return piece
    shape[axis] = count
    return lax.broadcast_in_dim(piece, tuple(shape), tuple(range(len(shape))))


def _join(before, array, after, axis):
    """``before + [array] + after`` concatenated along ``axis`` (empty pieces left out)."""
    parts = [p for p in before if _shape(p)[axis]] + [array] + \
        [p for p in after if _shape(p)[axis]]
    return array if len(parts) == 1 else lax.concatenate(parts, axis)


def _check_no_padding(pair, mode: str) -> None:
    if pair[0] > 0 or pair[1] > 0:
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _scalar_at(values, i, j):
    return lax.reshape(lax.slice(values, (i, j), (i + 1, j + 1)), ())


# -- the modes --

def _pad_constant(array, widths, constant_values):
    nd = len(widths)
    dtype, weak = dtype_and_weak(array)
    if isinstance(constant_values, (list, tuple)):
        constant_values = jnp.asarray(constant_values)  # its entries may be traced
    values = convert_element_type(constant_values, dtype, weak)
    shape = _shape(values)
    if len(shape) == 1:
        if shape[0] == 1:
            values = lax.reshape(values, ())
            shape = ()
        elif shape[0] != 2:
            raise ValueError("jnp.pad: constant_values has unsupported shape "
                             f"{shape}. If the shape is 1D or 2D, the last dimension must be "
                             "of size 1 or 2.")
    if not shape:
        return lax.pad(array, values, [(lo, hi, 0) for lo, hi in widths])
    values = jnp.broadcast_to(values, (nd, 2))
    for axis, (lo, hi) in enumerate(widths):
        for side, width in ((0, lo), (1, hi)):
            if width:
                config = [(0, 0, 0)] * nd
                config[axis] = (width, 0, 0) if side == 0 else (0, width, 0)
                array = lax.pad(array, _scalar_at(values, axis, side), config)
    return array


def _pad_empty(array, widths):
    # jnp.empty is jnp.zeros in JAX, so 'empty' pads with zeros.
    dtype, weak = dtype_and_weak(array)
    zero = convert_element_type(0, dtype, weak)
    return lax.pad(array, zero, [(lo, hi, 0) for lo, hi in widths])


def _pad_edge(array, widths):
    for axis, (lo, hi) in enumerate(widths):
        n = _shape(array)[axis]
        if n == 0:
            _check_no_padding((lo, hi), "edge")
            continue
        if lo or hi:
            first = _repeat_along(_slice_axis(array, 0, 1, axis), axis, lo)
            last = _repeat_along(_slice_axis(array, n - 1, n, axis), axis, hi)
            array = _join([first], array, [last], axis)
    return array


def _pad_wrap(array, widths):
    for axis, (lo, hi) in enumerate(widths):
        size = _shape(array)[axis]
        if size == 0:
            _check_no_padding((lo, hi), "wrap")
            continue
        if not (lo or hi):
            continue
        lo_repeats, lo_rest = divmod(lo, size)
        hi_repeats, hi_rest = divmod(hi, size)
        before = [_slice_axis(array, size - lo_rest, size, axis)] if lo_rest else []
        after = [_slice_axis(array, 0, hi_rest, axis)] if hi_rest else []
        array = _join(before + [array] * lo_repeats, array, [array] * hi_repeats + after,
                      axis)
    return array


def _reflect_side(array, axis, size, width, mode, odd, before):
    """``array`` extended by ``width`` reflected values on one side along ``axis``.

    Pads longer than the original axis reflect in chunks, each from the array as padded so
    far (NumPy's algorithm). ``size`` is the axis length before padding.
    """
    # 'reflect' leaves out the edge value itself, except on a length-1 axis.
    offset = 1 if (mode == "reflect" and size > 1) else 0
    if odd and width > 0:
        edge = (_slice_axis(array, 0, 1, axis) if before
                else _slice_axis(array, -1, None, axis))
    while width > 0:
        chunk = min(width, size - offset)
        width -= chunk
        if before:
            start, stop = offset, offset + chunk
        else:
            start = -(chunk + offset)
            stop = None if (mode == "symmetric" or size == 1) else -1
        piece = lax.rev(_slice_axis(array, start, stop, axis), (axis,))
        if odd:
            piece = 2 * edge - piece
            if size > 1 and width > 0:
                edge = (_slice_axis(piece, 0, 1, axis) if before
                        else _slice_axis(piece, -1, None, axis))
        array = _join([piece], array, [], axis) if before else _join([], array, [piece], axis)
    return array


def _pad_symmetric_or_reflect(array, widths, mode, reflect_type):
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}.")
    odd = reflect_type == "odd"
    for axis, (lo, hi) in enumerate(widths):
        size = _shape(array)[axis]
        if size == 0:
            _check_no_padding((lo, hi), mode)
            continue
        array = _reflect_side(array, axis, size, lo, mode, odd, before=True)
        array = _reflect_side(array, axis, size, hi, mode, odd, before=False)
    return array


def _pad_linear_ramp(array, widths, end_values):
    dtype, weak = dtype_and_weak(array)
    for axis, (lo, hi) in enumerate(widths):
        # Like JAX, the edges are sliced even when this axis gets no padding (so an empty
        # axis is an error from the slice).
        first = _slice_axis(array, 0, 1, axis)
        last = _slice_axis(array, -1, None, axis)
        ramps = []
        for edge, end, count in ((first, end_values[axis][0], lo),
                                 (last, end_values[axis][1], hi)):
            ramp = jnp.linspace(end, lax.squeeze(edge, (axis,)), num=count, endpoint=False,
                                dtype=dtype, axis=axis)
            ramps.append(convert_element_type(ramp, dtype, weak))
        array = _join([ramps[0]], array, [lax.rev(ramps[1], (axis,))], axis)
    return array


def _stat_lengths(stat_length, nd):
    pairs = _broadcast_to_pairs(stat_length, nd, "stat_length")
    return _as_int_pairs(pairs, "stat_length")


def _stat_value(stat, dtype, weak):
    if dtypes.is_integer(dtype):
        # Integer arrays pad with the statistic rounded half to even (as JAX does).
        stat = jnp.round(stat)
    return convert_element_type(stat, dtype, weak)


def _pad_stats(array, widths, stat_length, stat_func):
    dtype, weak = dtype_and_weak(array)
    for axis, (lo, hi) in enumerate(widths):
        if stat_length is None:
            stat_before = stat_after = stat_func(array, axis=axis, keepdims=True)
        else:
            length = _shape(array)[axis]
            len_before, len_after = stat_length[axis]
            if len_before == 0 or len_after == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            # Lengths past the axis use the whole axis.
            len_before, len_after = min(len_before, length), min(len_after, length)
            stat_before = stat_func(_slice_axis(array, 0, len_before, axis), axis=axis,
                                    keepdims=True)
            stat_after = stat_func(_slice_axis(array, -len_after, None, axis), axis=axis,
                                   keepdims=True)
        stats = [_stat_value(stat_before, dtype, weak)]
        stats.append(stats[0] if stat_after is stat_before else
                     _stat_value(stat_after, dtype, weak))
        array = _join([_repeat_along(stats[0], axis, lo)], array,
                      [_repeat_along(stats[1], axis, hi)], axis)
    return array


def _pad_func(array, widths, func, **kwargs):
    # Zero padding first, then ``func`` maps every 1-D slice along each axis in turn (it
    # returns the new slice, where NumPy's writes into it).
    padded = _pad_constant(array, widths, 0)
    for axis in range(len(widths)):
        padded = jnp.apply_along_axis(func, axis, padded, widths[axis], axis, kwargs)
    return padded


def pad(array, pad_width, mode="constant", **kwargs):
    """Pad an array (``numpy.pad``), as ``jax.numpy.pad`` does.

    Parameters
    ----------
    array : array_like
        The array to pad. A 0-d array is returned as it is.
    pad_width : int or sequence
        Widths, concrete integers: ``n`` or ``(n,)`` pads every axis by ``n`` on both
        sides; ``(before, after)`` or ``((before, after),)`` pads every axis so;
        ``((before_1, after_1), ..., (before_N, after_N))`` per axis.
    mode : str or callable, default 'constant'
        ``'constant'``: ``constant_values``; ``'empty'``: zeros (``jnp.empty`` is
        ``jnp.zeros``); ``'edge'``: the edge values; ``'wrap'``: the array wrapped around;
        ``'reflect'``/``'symmetric'``: the array mirrored without/with its edge value;
        ``'linear_ramp'``: a ramp from ``end_values`` to the edge value;
        ``'maximum'``/``'minimum'``/``'mean'``/``'median'``: that statistic of the
        ``stat_length`` values nearest each edge (rounded half to even for integer
        arrays). A callable ``mode(row, pad_width, iaxis, kwargs)`` receives each 1-D slice
        along ``iaxis`` of the zero-padded array with its ``(before, after)`` widths and the
        other keyword arguments as a dict, and returns the new slice (mapped with ``vmap``).
    constant_values : array_like, optional
        For 'constant' (default 0): a scalar, or per-axis ``(before, after)`` values in any
        of ``pad_width``'s shapes; may be traced.
    end_values : scalar or sequence, optional
        For 'linear_ramp' (default 0), in ``pad_width``'s shapes; concrete.
    stat_length : int or sequence, optional
        For the statistic modes (default: the whole axis), in ``pad_width``'s shapes;
        concrete.
    reflect_type : {'even', 'odd'}, optional
        For 'reflect' and 'symmetric': 'odd' reflects the values about the edge value
        (``2 * edge - x``).

    Returns
    -------
    Array
        ``array`` padded, of its dtype (and weak type).

    Raises
    ------
    NotImplementedError
        For an unknown mode.
    ValueError
        For a keyword the mode does not take, a negative width, a ``stat_length`` of 0,
        padding an empty axis in 'edge', 'wrap', 'reflect' or 'symmetric' mode, or widths
        and values of an unsupported shape.
    TypeError
        For non-integer widths or entries of uneven shapes.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> x = jnp.array([10, 20, 30, 40])
    >>> jnp.pad(x, (1, 2), constant_values=-1)
    Array([-1, 10, 20, 30, 40, -1, -1], dtype=int32)
    >>> jnp.pad(x, 2, mode="reflect")
    Array([30, 20, 10, 20, 30, 40, 30, 20], dtype=int32)
    >>> jnp.pad(x, 2, mode="mean")
    Array([25, 25, 10, 20, 30, 40, 25, 25], dtype=int32)
    >>> jnp.pad(jnp.array([[1., 2.], [3., 4.]]), ((0, 1), (1, 0)), mode="wrap")
    Array([[2., 1., 2.],
           [4., 3., 4.],
           [2., 1., 2.]], dtype=float32)
    """
    check_arraylike("pad", array)
    array = to_jax(array)
    nd = len(_shape(array))
    widths = _as_int_pairs(_broadcast_to_pairs(pad_width, nd, "pad_width"), "pad_width")

    if callable(mode):
        return _pad_func(array, widths, mode, **kwargs)

    try:
        allowed = _MODE_KWARGS[mode]
    except (KeyError, TypeError):
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.") from None
    unsupported = set(kwargs) - set(allowed)
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")

    if nd == 0:
        return array
    if any(lo < 0 or hi < 0 for lo, hi in widths):
        raise ValueError("index can't contain negative values")

    if mode == "constant":
        return _pad_constant(array, widths, kwargs.get("constant_values", 0))
    if mode == "empty":
        return _pad_empty(array, widths)
    if mode == "edge":
        return _pad_edge(array, widths)
    if mode == "wrap":
        return _pad_wrap(array, widths)
    if mode in ("reflect", "symmetric"):
        return _pad_symmetric_or_reflect(array, widths, mode,
                                         kwargs.get("reflect_type", "even"))
    if mode == "linear_ramp":
        end_values = _broadcast_to_pairs(kwargs.get("end_values", 0), nd, "end_values")
        return _pad_linear_ramp(array, widths, end_values)
    stat_length = kwargs.get("stat_length")
    if stat_length is not None:
        stat_length = _stat_lengths(stat_length, nd)
    stat_func = {"maximum": jnp.max, "minimum": jnp.min, "mean": jnp.mean,
                 "median": jnp.median}[mode]
    return _pad_stats(array, widths, stat_length, stat_func)


__all__ = ["pad"]
