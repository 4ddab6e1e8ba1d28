"""Array creation: ``array``, ``asarray``, ``zeros``/``ones``/``full``/``empty`` (and their
``_like`` forms), ``arange``, ``linspace``, ``logspace``, ``eye``, ``identity``.

Eagerly, constant arrays are built with NumPy directly (the result is the same as running
the lax program, and much cheaper). Under a transformation they are built with lax, so that,
as in JAX 0.10, ``jnp.array(x.shape)`` inside ``jit`` is a traced value.
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes, errors
from xjax._src.core.array import Array, frozen_value
from xjax._src.core.avals import ShapedArray
from xjax._src.core.out_sharding import check_out_sharding, require_explicit_axes
from xjax._src.core.placement import placed_like, placed_over_context
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, canonicalize_shape,
                                        check_arraylike, convert_element_type, dtype_and_weak,
                                        is_arraylike, is_eager, lax_convert, numpy_to_array,
                                        stage, to_jax)
from xjax._src.numpy.extended import full as full_extended, is_extended, is_extended_dtype, \
    moves_elements
from xjax._src.numpy.nested_jit import jit_when_staged
from xjax._src.transformations.pmap import reshard

_PY_SCALARS = (bool, int, float, complex)


def laid_out(out, out_sharding, api_name: str):
    """``out`` laid out by ``out_sharding`` (a ``NamedSharding``, or a ``PartitionSpec``
    over the mesh set with ``set_mesh``), as JAX's array-producing functions lay out their
    results: split over its devices eagerly, its type split under a trace. None leaves
    ``out`` as it is.

    Raises
    ------
    ValueError
        JAX's, for a spec over Auto or Manual axes (naming ``api_name``), a PartitionSpec
        without a mesh, or a shape the spec does not divide.
    """
    sharding = check_out_sharding(out_sharding, api_name)
    if sharding is None:
        return out
    require_explicit_axes(sharding, api_name)
    return reshard(out, sharding)


def _user_dtype(dtype, fun_name, default=None):
    """The canonical dtype a user asked for (warning for 64-bit ones without x64)."""
    if dtype is None:
        return default
    return dtypes.check_and_canonicalize_user_dtype(dtype, fun_name, stacklevel=4)


# --------------------------------------------------------------------------------------------
# array / asarray


@moves_elements("object")
def array(object, dtype=None, copy: bool = True, order: str | None = "K", ndmin: int = 0, *,
          device=None, out_sharding=None):
    """Create an Array from an array-like: Python scalars and (nested) sequences, NumPy
    values, Arrays and tracers.

    Python scalars give weakly typed arrays (``jnp.array(1)`` is a weak int32); NumPy values
    keep their dtype, canonicalized (float64 becomes float32 with 64-bit types disabled);
    sequences holding Arrays or tracers are stacked.

    Parameters
    ----------
    object : array_like
    dtype : dtype-like, optional
        The dtype of the result (the value is converted as NumPy converts it).
    copy, order, device
        Accepted for NumPy compatibility (Arrays are immutable; only C order exists).
    out_sharding : NamedSharding or PartitionSpec, optional
        How the result is laid out over devices (and split in its type), as in JAX; the
        spec may name Explicit mesh axes only.
    ndmin : int
        Minimum number of dimensions (leading size-1 dims are added).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.array([1, 2.0])
    Array([1., 2.], dtype=float32)
    >>> jnp.array(1)
    Array(1, dtype=int32, weak_type=True)
    """
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"jnp.array: order={order!r} is not supported (only 'C').")
    dtype = _user_dtype(dtype, "array")
    check_out_sharding(out_sharding, "jnp.array")
    out = _array(object, dtype)
    if copy and out is object and type(out) is Array:
        out = out.copy()  # a new buffer, as in JAX (donating one must not free the other)
    if ndmin > out.ndim:
        shape = (1,) * (ndmin - out.ndim) + tuple(out.shape)
        out = lax.broadcast_in_dim(out, shape, tuple(range(ndmin - out.ndim, ndmin)))
    if type(out) is Array and type(object) is not Array:
        out = placed_over_context(out, typed=False)  # under set_mesh: over its mesh (JAX's)
    return stage(laid_out(out, out_sharding, "jnp.array"))


def _array(obj, dtype):
    t = type(obj)
    if t is Array or isinstance(obj, Tracer):
        return obj if dtype is None else convert_element_type(obj, dtype, False)
    if t in _PY_SCALARS:
        if dtype is None:
            return to_jax(obj)
        return _numpy_with_dtype(obj, dtype)
    if obj is None:
        raise ValueError("None is not a valid value for jnp.array")
    if hasattr(obj, "__jax_array__"):
        return _array(obj.__jax_array__(), dtype)
    if isinstance(obj, (list, tuple)):
        return _sequence(obj, dtype)
    if dtype is None:
        return numpy_to_array(obj)
    return _numpy_with_dtype(obj, dtype)


def _numpy_with_dtype(obj, dtype) -> Array:
    npy = frozen_value(np.asarray(obj, dtype=dtype), obj)
    return Array._from_numpy(npy, ShapedArray(npy.shape, dtype, False))


def _leaves(obj, out: list) -> list:
    if isinstance(obj, (list, tuple)):
        for item in obj:
            _leaves(item, out)
    else:
        out.append(obj)
    return out


def _sequence(obj, dtype) -> Array:
    leaves = _leaves(obj, [])
    if any(type(leaf) is Array or isinstance(leaf, Tracer) or hasattr(leaf, "__jax_array__")
           for leaf in leaves):
        if dtype is None:
            dtype = dtypes.lattice_result(*[dtype_and_weak(leaf) for leaf in leaves])[0]
        return _stack_elements([_array(item, dtype) for item in obj], dtype)
    if dtype is None:
        dtype = dtypes.result_type(*leaves) if leaves else dtypes.default_float_dtype()
    return _numpy_with_dtype(obj, dtype)


def _stack_elements(items, dtype):
    items = [convert_element_type(x, dtype, False) for x in items]
    shapes = {tuple(aval_of(x).shape) for x in items}
    if len(shapes) > 1:
        raise ValueError("setting an array element with a sequence. The requested array has "
                         "an inhomogeneous shape: got elements of shapes "
                         f"{', '.join(str(s) for s in sorted(shapes))}.")
    if not items:
        return Array._from_numpy(np.zeros((0,), dtype), ShapedArray((0,), dtype, False))
    shape = (1,) + tuple(aval_of(items[0]).shape)
    rank = len(shape)
    rows = [lax.broadcast_in_dim(x, shape, tuple(range(1, rank))) for x in items]
    return rows[0] if len(rows) == 1 else lax.concatenate(rows, 0)


@moves_elements("a")
def asarray(a, dtype=None, order: str | None = None, *, copy: bool | None = None, device=None,
            out_sharding=None):
    """Convert ``a`` to an Array (without copying an Array that already has ``dtype``).

    See :func:`array` for the conversion rules.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.asarray(1.0)
    Array(1., dtype=float32, weak_type=True)
    """
    check_out_sharding(out_sharding, "jnp.asarray")
    if dtype is None and type(a) is Array and is_eager() and out_sharding is None:
        return a
    return array(a, dtype=dtype, copy=bool(copy), order=order, out_sharding=out_sharding)


@moves_elements("a")
def copy(a, order=None):
    """A copy of ``a`` (Arrays are immutable: the same values)."""
    check_arraylike("copy", a)
    return array(a, copy=True, order=order)


# --------------------------------------------------------------------------------------------
# filled arrays


def _check_nonnegative(shape) -> None:
    if any(d < 0 for d in shape):
        raise TypeError("broadcast_in_dim shape must have every element be nonnegative, "
                        f"got {shape}.")


def full_of(shape, fill, dtype, weak: bool, like=None):
    """An array of ``shape`` filled with the scalar ``fill`` converted to ``dtype``; made
    eagerly, it is placed as ``like`` is (``placement.placed_like``)."""
    _check_nonnegative(shape)
    if is_extended_dtype(dtype):  # PRNG keys: their data filled, or a key broadcast
        return full_extended(shape, fill, dtype)
    value = convert_element_type(fill, dtype, weak)
    if is_eager() and type(value) is Array:
        npy = np.full(shape, value._value(), dtype)
        return placed_like(Array._from_numpy(npy, ShapedArray(shape, dtype, weak)), like)
    return lax.broadcast_in_dim(value, shape, ())


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros (default dtype: float32, or float64 with x64).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.zeros((2,), jnp.int32)
    Array([0, 0], dtype=int32)
    """
    shape = canonicalize_shape(shape)
    dtype = _user_dtype(dtype, "zeros", dtypes.default_float_dtype())
    return laid_out(full_of(shape, 0, dtype, False), out_sharding, "jnp.zeros")


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of ones (default dtype: float32, or float64 with x64)."""
    shape = canonicalize_shape(shape)
    dtype = _user_dtype(dtype, "ones", dtypes.default_float_dtype())
    return laid_out(full_of(shape, 1, dtype, False), out_sharding, "jnp.ones")


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    """An array of zeros: XLA has no uninitialized memory (as in JAX)."""
    shape = canonicalize_shape(shape)
    dtype = _user_dtype(dtype, "empty", dtypes.default_float_dtype())
    return laid_out(full_of(shape, 0, dtype, False), out_sharding, "jnp.empty")


@moves_elements("fill_value")
def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    """An array of ``shape`` filled with ``fill_value`` (broadcast when it is an array).

    Without ``dtype`` the result has ``fill_value``'s dtype and weak type:
    ``jnp.full(2, 7)`` is a weakly typed int32 array.
    """
    check_arraylike("full", fill_value)
    check_out_sharding(out_sharding, "full")
    shape = canonicalize_shape(shape)
    if dtype is None:
        dtype, weak = dtype_and_weak(fill_value)
    else:
        dtype, weak = _user_dtype(dtype, "full"), False
    if np.ndim(fill_value) == 0:
        return laid_out(full_of(shape, fill_value, dtype, weak), out_sharding, "full")
    from xjax._src.numpy.shape_ops import broadcast_to  # import cycle: shape_ops -> indexing -> creation
    return laid_out(broadcast_to(convert_element_type(fill_value, dtype, weak), shape),
                    out_sharding, "full")


def _is_duck_typed(a) -> bool:
    """Not an array but with ``shape`` and ``dtype`` (a ``ShapeDtypeStruct``, an aval)."""
    return not is_arraylike(a) and hasattr(a, "shape") and hasattr(a, "dtype")


def _like(fun_name, a, dtype, shape):
    """The shape, dtype and weak type of a ``_like`` function's result.

    As in JAX, ``a`` may be duck typed (anything with ``shape`` and ``dtype``, such as a
    ``ShapeDtypeStruct``); the result is then not weakly typed.
    """
    if _is_duck_typed(a):
        like_shape = tuple(a.shape)
        # PRNG key arrays are duck typed here: their zeros_like is zero keys, as in JAX
        like_dtype = dtypes.canonicalize_dtype(dtypes.dtype(a.dtype), allow_extended_dtype=True)
        like_weak = False
    else:
        check_arraylike(fun_name, a)
        like_shape = np.shape(a)
        like_dtype, like_weak = dtype_and_weak(a) if dtype is None else (None, False)
    if dtype is None:
        dtype, weak = like_dtype, like_weak
    else:
        dtype, weak = _user_dtype(dtype, fun_name), False
    shape = like_shape if shape is None else canonicalize_shape(shape)
    return tuple(shape), dtype, weak


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """An array of zeros with the shape and dtype (and weak type) of ``a``."""
    like = a if shape is None else None
    shape, dtype, weak = _like("zeros_like", a, dtype, shape)
    return laid_out(full_of(shape, 0, dtype, weak, like), out_sharding, "jnp.zeros_like")


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    """An array of ones with the shape and dtype (and weak type) of ``a``."""
    like = a if shape is None else None
    shape, dtype, weak = _like("ones_like", a, dtype, shape)
    return laid_out(full_of(shape, 1, dtype, weak, like), out_sharding, "jnp.ones_like")


def empty_like(prototype, dtype=None, shape=None, *, device=None, out_sharding=None):
    """Zeros with the shape and dtype of ``prototype``."""
    like = prototype if shape is None else None
    shape, dtype, weak = _like("empty_like", prototype, dtype, shape)
    return laid_out(full_of(shape, 0, dtype, weak, like), out_sharding, "jnp.empty_like")


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    """An array with the shape and dtype of ``a`` filled with ``fill_value``."""
    check_arraylike("full_like", 0 if _is_duck_typed(a) else a,
                    0 if is_extended(fill_value) else fill_value)
    like = a if shape is None else None
    shape, dtype, weak = _like("full_like", a, dtype, shape)
    check_out_sharding(out_sharding, "full_like")
    if np.ndim(fill_value) == 0:
        return laid_out(full_of(shape, fill_value, dtype, weak, like), out_sharding, "full_like")
    from xjax._src.numpy.shape_ops import broadcast_to  # import cycle: shape_ops -> indexing -> creation
    return laid_out(broadcast_to(convert_element_type(fill_value, dtype, weak), shape),
                    out_sharding, "full_like")


# --------------------------------------------------------------------------------------------
# ranges


def _concrete_scalar(x, fun_name: str, arg_name: str):
    """A Python/NumPy value of a scalar argument that must be concrete (not traced)."""
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(
                x, f"It arose in the {fun_name} argument '{arg_name}'")
        return np.asarray(value)[()]
    if type(x) is Array:
        return x._value()[()]
    return x


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in ``[start, stop)`` (bounds must be concrete, as in JAX).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.arange(3.)
    Array([0., 1., 2.], dtype=float32)
    """
    names = ("stop",) if stop is None else ("start", "stop", "step")
    given = [start] if stop is None else [start, stop] + ([] if step is None else [step])
    values = [_concrete_scalar(x, "jnp.arange", name) for x, name in zip(given, names)]
    check_out_sharding(out_sharding, "jnp.arange")
    check_arraylike("arange", *values)
    if dtype is None:
        dtype = dtypes.result_type(*values)
    else:
        dtype = _user_dtype(dtype, "arange")
    npy = np.arange(*values, dtype=dtype)
    if is_eager() or dtype == np.bool_:
        return laid_out(placed_over_context(Array._from_numpy(npy, ShapedArray(
            npy.shape, dtype, False))), out_sharding, "jnp.arange")
    # Under a transformation, stage what JAX stages: iota, times step, plus start.
    out = lax.iota(dtype, npy.shape[0])
    if stop is not None:
        if step is not None:
            out = lax.mul(_scalar_operand(values[2], dtype), out)
        out = lax.add(_scalar_operand(values[0], dtype), out)
    return laid_out(out, out_sharding, "jnp.arange")


def _scalar_operand(value, dtype):
    return Array._from_numpy(np.asarray(value, dtype), ShapedArray((), dtype, False))


@jit_when_staged('_linspace', static_argnames=('num', 'endpoint', 'retstep', 'dtype', 'axis', 'device'))
def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False,
             dtype=None, axis: int = 0, *, device=None):
    """``num`` evenly spaced samples from ``start`` to ``stop`` (both may be arrays).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.linspace(0, 1, 5)
    Array([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float32)
    """
    num = operator.index(_concrete_scalar(num, "jnp.linspace", "num"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    else:
        dtype = _user_dtype(dtype, "linspace")
    computation_dtype = dtypes.to_inexact_dtype(dtype)
    start = convert_element_type(start, computation_dtype, False)
    stop = convert_element_type(stop, computation_dtype, False)
    from xjax._src.numpy.shape_ops import broadcast_arrays  # import cycle: shape_ops -> indexing -> creation
    start, stop = broadcast_arrays(start, stop)
    bounds_shape = tuple(aval_of(start).shape)
    axis = canonicalize_axis(axis, len(bounds_shape) + 1)
    out_shape = bounds_shape[:axis] + (num,) + bounds_shape[axis:]
    div = (num - 1) if endpoint else num
    step = None
    if num > 1:
        out, step = _interpolate(start, stop, num, div, endpoint, axis, computation_dtype)
    elif num == 1:
        out = _expand_at(start, axis)
    else:
        out = full_of(out_shape, 0, computation_dtype, False)
    if dtypes.is_integer(dtype):
        out = lax.floor(out)
    out = lax_convert(out, dtype, False) if aval_of(out).dtype != dtype else out
    if not retstep:
        return out
    if step is None:
        step = full_of(bounds_shape, float("nan"), computation_dtype, False)
    return out, lax_convert(step, dtype, False) if aval_of(step).dtype != dtype else step


def _expand_at(x, axis):
    shape = list(aval_of(x).shape)
    shape.insert(axis, 1)
    dims = tuple(d for d in range(len(shape)) if d != axis)
    return lax.broadcast_in_dim(x, tuple(shape), dims)


def _interpolate(start, stop, num, div, endpoint, axis, dtype):
    """``start * (1 - t) + stop * t`` for ``t = i / div`` (exact at both ends)."""
    count = num - 1 if endpoint else num
    bounds_shape = tuple(aval_of(start).shape)
    rank = len(bounds_shape) + 1
    iota_shape = tuple(count if d == axis else 1 for d in range(rank))
    div_value = Array._from_numpy(np.asarray(div, dtype), ShapedArray((), dtype, False))
    t = lax.div(lax.broadcast_in_dim(lax.iota(dtype, count), iota_shape, (axis,)), div_value)
    one = Array._from_numpy(np.asarray(1, dtype), ShapedArray((), dtype, False))
    start_b, stop_b = _expand_at(start, axis), _expand_at(stop, axis)
    out = lax.add(lax.mul(start_b, lax.sub(one, t)), lax.mul(stop_b, t))
    if endpoint:
        out = lax.concatenate([out, stop_b], axis)
    step = lax.div(lax.sub(stop, start), div_value)
    return out, step


@jit_when_staged('_logspace', static_argnames=('num', 'endpoint', 'dtype', 'axis'))
def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None,
             axis: int = 0):
    """``base ** linspace(start, stop, num)``."""
    from xjax._src.numpy.ufuncs import power  # ufuncs imports this module
    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    out = power(base, lin)
    return out if dtype is None else convert_element_type(out, _user_dtype(dtype, "logspace"))


@jit_when_staged('_geomspace', static_argnames=('num', 'endpoint', 'dtype', 'axis'))
def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Numbers spaced evenly on a log scale between ``start`` and ``stop`` (same sign)."""
    from xjax._src.numpy.ufuncs import exp, log, multiply, sign  # ufuncs imports this module
    check_arraylike("geomspace", start, stop)
    signs = sign(start)
    lin = linspace(log(multiply(start, signs)), log(multiply(stop, signs)), num,
                   endpoint=endpoint, axis=axis)
    out = multiply(exp(lin), signs)
    if np.ndim(start) == 0 and np.ndim(stop) == 0 and num > 0:
        # Exact end points, as NumPy gives them.
        out = out.at[0].set(start)
        if endpoint and num > 1:
            out = out.at[-1].set(stop)
    return out if dtype is None else convert_element_type(out, _user_dtype(dtype, "geomspace"))


def eye(N, M=None, k: int = 0, dtype=None, *, device=None):
    """A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.eye(2, dtype=int)
    Array([[1, 0],
           [0, 1]], dtype=int32)
    """
    n = operator.index(_concrete_scalar(N, "jnp.eye", "N"))
    m = n if M is None else operator.index(_concrete_scalar(M, "jnp.eye", "M"))
    k = operator.index(_concrete_scalar(k, "jnp.eye", "k"))
    if n < 0 or m < 0:
        raise ValueError(f"negative dimensions are not allowed, got {n} and {m}")
    dtype = _user_dtype(dtype, "eye", dtypes.default_float_dtype())
    if is_eager():
        return Array._from_numpy(np.eye(n, m, k, dtype=dtype), ShapedArray((n, m), dtype))
    rows = lax.broadcasted_iota(np.dtype(np.int32), (n, m), 0)
    cols = lax.broadcasted_iota(np.dtype(np.int32), (n, m), 1)
    offset = Array._from_numpy(np.asarray(k, np.int32), ShapedArray((), np.int32, False))
    return lax_convert(lax.eq(lax.add(rows, offset), cols), dtype, False)


def identity(n, dtype=None):
    """The ``n`` x ``n`` identity matrix."""
    return eye(n, dtype=dtype)


__all__ = ["array", "asarray", "copy", "zeros", "ones", "empty", "full", "zeros_like",
           "ones_like", "empty_like", "full_like", "arange", "linspace", "logspace", "geomspace",
           "eye",
           "identity"]
