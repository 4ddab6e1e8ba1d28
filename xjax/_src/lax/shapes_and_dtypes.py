"""Public helpers of ``jax.lax`` about shapes and dtypes: ``broadcast_shapes``, ``dtype`` and
``shape_as_value``."""

from __future__ import annotations


import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.trace import Tracer
from xjax._src.lax.operands import to_operand
from xjax._src.lax.shape import canonicalize_shape

__all__ = ["broadcast_shapes", "dtype", "shape_as_value"]

_PY_SCALAR_TYPES = (bool, int, float, complex)


def broadcast_shapes(*shapes):
    """The shape NumPy broadcasting gives arrays of ``shapes``.

    Parameters
    ----------
    *shapes : sequences of int
        One or more shapes.

    Returns
    -------
    tuple of int

    Raises
    ------
    TypeError
        For no shapes (JAX fails an ``assert`` there), for a shape that is not a sequence
        of integers, or one with a negative entry.
    ValueError
        If the shapes do not broadcast together.

    Examples
    --------
    >>> from xjax import lax
    >>> lax.broadcast_shapes((3, 1), (1, 4), (5, 1, 1))
    (5, 3, 4)
    """
    if not shapes:
        raise TypeError("broadcast_shapes: At least one shape is required.")
    canonical = []
    for shape in shapes:
        checked = canonicalize_shape(shape)
        if any(d < 0 for d in checked):
            raise TypeError("Only non-negative indices are allowed when broadcasting static "
                            f"shapes, but got shape {shape!r}.")
        canonical.append(checked)
    ndim = max(len(s) for s in canonical)
    out = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in canonical if i - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def dtype(x):
    """The dtype of a value or type, canonicalized as ``jax.lax.dtype`` does.

    Python scalars and scalar types give the default dtype of their kind; NumPy scalar
    types, dtype names and ``np.dtype`` objects are explicit requests (a 64-bit one warns
    and is truncated while ``jax_enable_x64`` is off); NumPy arrays and scalars are
    canonicalized silently; xjax Arrays and tracers report their dtype unchanged.

    Parameters
    ----------
    x : object
        A value, a scalar type, a dtype name or a dtype.

    Returns
    -------
    numpy.dtype

    Examples
    --------
    >>> import numpy as np
    >>> from xjax import lax
    >>> lax.dtype(1.0), lax.dtype(np.arange(3))  # x64 disabled
    (dtype('float32'), dtype('int32'))
    """
    if x is None:
        raise ValueError(f"Invalid argument to dtype: {x}.")
    if isinstance(x, type):
        if x in _PY_SCALAR_TYPES:
            return dtypes.canonicalize_dtype(dtypes.python_scalar_dtype(x))
        if issubclass(x, np.generic):
            return _explicit(np.dtype(x), x)
    elif type(x) in _PY_SCALAR_TYPES:
        return dtypes.canonicalize_dtype(dtypes.python_scalar_dtype(x))
    elif type(x) is Array or isinstance(x, Tracer):
        return x.dtype
    if isinstance(x, (str, np.dtype)):
        return _explicit(np.dtype(x), x)
    return dtypes.dtype(x, canonicalize=True)


def _explicit(dt, x):
    if not dtypes.is_valid_dtype(dt):
        raise TypeError(f"Value '{x}' with dtype {dt} is not a valid JAX array type. Only "
                        "arrays of numeric types are supported by JAX.")
    return dtypes.check_and_canonicalize_user_dtype(dt, "dtype", stacklevel=4)


def shape_as_value(shape):
    """A shape as an integer array (int32, or int64 for a dimension past int32's range).

    Parameters
    ----------
    shape : sequence of int

    Returns
    -------
    numpy.ndarray, or an empty int32 ``Array`` for ``()`` (as JAX returns them)

    Examples
    --------
    >>> from xjax import lax
    >>> lax.shape_as_value((2, 3))
    array([2, 3], dtype=int32)
    """
    shape = canonicalize_shape(shape)
    if not shape:
        return to_operand(np.zeros((0,), np.int32))
    big = any(d > np.iinfo(np.int32).max for d in shape)
    return np.asarray(shape, dtype=np.int64 if big else np.int32)
