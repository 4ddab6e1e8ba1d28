"""Comparisons, logical and bitwise functions, floating-point predicates, ``where``,
``select``, ``clip`` and the closeness tests (``isclose``, ``allclose``, ``array_equal``)."""

from __future__ import annotations

import math

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes, errors
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.trace import Tracer
from xjax._src.lax.naryop import scalar_like
from xjax._src.numpy._promotion import (aval_of, check_arraylike, convert_element_type,
                                        dtype_and_weak, promote_args, promote_args_inexact,
                                        promote_dtypes, to_jax)
from xjax._src.numpy.creation import full_like
from xjax._src.numpy.extended import data_of, is_extended, moves_elements
from xjax._src.numpy.ufuncs import _ALL, binary, const, isinf, maximum, minimum, strong_const
from xjax._src.numpy.creation import asarray
from xjax._src.numpy.indexing import scatter_flat
from xjax._src.numpy.reductions import all as all_, cumsum
from xjax._src.numpy.shape_ops import broadcast_arrays, ravel, stack, atleast_1d
from xjax._src.numpy.ufuncs import imag, real
from xjax._src.numpy.nested_jit import jit_when_staged

_INTEGRAL_OR_BOOL = frozenset(dtypes._int_dtypes + (dtypes.bool_,))


def _dtype(x):
    return aval_of(x).dtype


# --------------------------------------------------------------------------------------------
# comparisons


def _elements_equal(name: str, x1, x2):
    """Whether the elements of extended arrays (PRNG keys) are equal: all their data are.

    As JAX, both must be of one extended dtype; they broadcast as other arrays do.
    """
    if not (is_extended(x1) and is_extended(x2) and x1.dtype == x2.dtype):
        check_arraylike(name, *(x for x in (x1, x2) if not is_extended(x)))
        dtype1, dtype2 = (x.dtype if is_extended(x) else dtype_and_weak(x)[0] for x in (x1, x2))
        raise TypeError(f"{name} does not accept dtypes {dtype1}, {dtype2}.")
    x1, x2 = broadcast_arrays(x1, x2)
    data1, data2 = data_of(x1), data_of(x2)
    element_axes = tuple(range(len(x1.shape), len(aval_of(data1).shape)))
    return lax.reduce_and(lax.eq(data1, data2), element_axes)


def _elements_differ(name: str, x1, x2):
    """Whether the elements of extended arrays differ (see :func:`_elements_equal`)."""
    return lax.bitwise_not(_elements_equal(name, x1, x2))


equal = binary("equal", lax.eq, "Elementwise ``x1 == x2``.", fast=_ALL,
               extended_fn=_elements_equal)
not_equal = binary("not_equal", lax.ne, "Elementwise ``x1 != x2``.", fast=_ALL,
                   extended_fn=_elements_differ)
_ORDERED = frozenset(d for d in _ALL if not dtypes.is_complex(d))


def _ordering(lax_fn):
    """``lax_fn`` (lt, le, gt or ge) extended to complex operands in NumPy's (and JAX's)
    lexicographic order: by real parts, and by imaginary parts where those are equal."""

    def compare(x1, x2):
        if not dtypes.is_complex(_dtype(x1)):
            return lax_fn(x1, x2)
        return lax.select(lax.eq(lax.real(x1), lax.real(x2)),
                          lax_fn(lax.imag(x1), lax.imag(x2)),
                          lax_fn(lax.real(x1), lax.real(x2)))

    # ``binary``'s fast path (same non-complex dtypes) goes straight to the primitive.
    compare.bind_operands = getattr(lax_fn, "bind_operands", lax_fn)
    return compare


less = binary("less", _ordering(lax.lt), "Elementwise ``x1 < x2``.", fast=_ORDERED)
less_equal = binary("less_equal", _ordering(lax.le), "Elementwise ``x1 <= x2``.",
                    fast=_ORDERED)
greater = binary("greater", _ordering(lax.gt), "Elementwise ``x1 > x2``.", fast=_ORDERED)
greater_equal = binary("greater_equal", _ordering(lax.ge), "Elementwise ``x1 >= x2``.",
                       fast=_ORDERED)


def _fminmax(name, compare, lax_fn):
    def fn(x1, x2, /):
        x1, x2 = promote_args(name, x1, x2)
        if not dtypes.is_inexact(_dtype(x1)):
            return lax_fn(x1, x2)
        take_x1 = lax.bitwise_or(compare(x1, x2), lax.ne(x2, x2))
        return where(take_x1, x1, x2)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise {'maximum' if name == 'fmax' else 'minimum'} ignoring NaNs "
                  "(NaN only where both are NaN).")
    return fn


fmax = jit_when_staged()(_fminmax("fmax", lax.gt, lax.max))
fmin = jit_when_staged()(_fminmax("fmin", lax.lt, lax.min))


# --------------------------------------------------------------------------------------------
# logical and bitwise


def _as_bool(x):
    return x if _dtype(x) == dtypes.bool_ else lax.ne(x, scalar_like(x, 0))


def _logical(name, lax_fn):
    def fn(x1, x2, /):
        x1, x2 = promote_args(name, x1, x2)
        return lax_fn(_as_bool(x1), _as_bool(x2))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise logical {name.split('_')[1]} (nonzero values are true)."
    return fn


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x, /):
    """Elementwise logical not (nonzero values are true)."""
    x, = promote_args("logical_not", x)
    return lax.bitwise_not(_as_bool(x))


bitwise_and = binary("bitwise_and", lax.bitwise_and, "Elementwise bitwise and.",
                     fast=_INTEGRAL_OR_BOOL)
bitwise_or = binary("bitwise_or", lax.bitwise_or, "Elementwise bitwise or.",
                    fast=_INTEGRAL_OR_BOOL)
bitwise_xor = binary("bitwise_xor", lax.bitwise_xor, "Elementwise bitwise xor.",
                     fast=_INTEGRAL_OR_BOOL)


def invert(x, /):
    """Elementwise bitwise not (logical not for bools)."""
    x, = promote_args("invert", x)
    return lax.bitwise_not(x)


bitwise_not = bitwise_invert = invert


def _shift_operands(name, x1, x2):
    """Promoted operands; booleans shift as the default integer (as in JAX)."""
    x1, x2 = promote_args(name, x1, x2)
    if _dtype(x1) == dtypes.bool_:
        x1, x2 = (lax.convert_element_type(x, dtypes.default_int_dtype()) for x in (x1, x2))
    return x1, x2


def left_shift(x1, x2, /):
    """Elementwise ``x1 << x2``."""
    x1, x2 = _shift_operands("left_shift", x1, x2)
    return lax.shift_left(x1, x2)


def right_shift(x1, x2, /):
    """Elementwise ``x1 >> x2`` (arithmetic for signed, logical for unsigned integers)."""
    x1, x2 = _shift_operands("right_shift", x1, x2)
    if dtypes.is_unsigned(_dtype(x1)):
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift = left_shift
bitwise_right_shift = right_shift


def bitwise_count(x, /):
    """The number of set bits of each element (of its absolute value, as NumPy), as
    uint8 (as in JAX and NumPy)."""
    x, = promote_args("bitwise_count", x)
    if dtypes.is_signed_integer(_dtype(x)):
        x = lax.abs(x)
    return lax.convert_element_type(lax.population_count(x), np.uint8)


# --------------------------------------------------------------------------------------------
# predicates


def isnan(x, /):
    """Elementwise test for NaN (False for integers)."""
    x, = promote_args("isnan", x)
    return lax.ne(x, x)  # False for integers; keeps a weak input's weak type, as JAX's


def isfinite(x, /):
    """Elementwise test for finite values (True for integers)."""
    x, = promote_args("isfinite", x)
    dt = _dtype(x)
    if dtypes.is_complex(dt):
        return lax.bitwise_and(lax.is_finite(lax.real(x)), lax.is_finite(lax.imag(x)))
    if dtypes.is_float(dt):
        return lax.is_finite(x)
    return full_like(x, True, dtype=dtypes.bool_)


def _isinf_signed(name, value):
    def fn(x, /):
        x, = promote_args(name, x)
        if dtypes.is_float(_dtype(x)):
            return lax.eq(x, strong_const(x, value))
        if dtypes.is_complex(_dtype(x)):
            raise ValueError(f"{name} does not support complex-valued inputs.")
        return full_like(x, False, dtype=dtypes.bool_)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise test for {'+' if value > 0 else '-'}inf."
    return fn


isposinf = _isinf_signed("isposinf", np.inf)
isneginf = _isinf_signed("isneginf", -np.inf)


@jit_when_staged()
def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    """Replace NaN by ``nan`` and infinities by ``posinf``/``neginf`` (default: the largest
    finite values of the dtype)."""
    x, = promote_args("nan_to_num", x)
    dt = _dtype(x)
    if dtypes.is_complex(dt):
        re = nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf)
        im = nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf)
        return lax.complex(re, im)
    if not dtypes.is_float(dt):
        return x
    info = dtypes.finfo(dt)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    # JAX's replacements are asarray(value, dtype): strong, so the result is strong too
    x = where(lax.ne(x, x), strong_const(x, nan), x)
    x = where(lax.eq(x, const(x, np.inf)), strong_const(x, posinf), x)
    return where(lax.eq(x, const(x, -np.inf)), strong_const(x, neginf), x)


@jit_when_staged()
def isreal(x, /):
    """Elementwise test for a zero imaginary part."""
    im = imag(x)
    return lax.eq(im, scalar_like(im, 0))


@jit_when_staged()
def iscomplex(x, /):
    """Elementwise test for a nonzero imaginary part."""
    im = imag(x)
    return lax.ne(im, scalar_like(im, 0))


def iscomplexobj(x) -> bool:
    """Whether ``x`` has a complex dtype.

    As in JAX: anything with a ``dtype`` attribute (an array, a ``ShapeDtypeStruct``,
    ``jnp.complex64``) is judged by it, other values by ``asarray(x)``; a NumPy scalar type
    or a dtype object (not arrays) raise TypeError.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.iscomplexobj(jnp.complex64), jnp.iscomplexobj(jnp.array([1.0]))
    (True, False)
    """
    if isinstance(x, (complex, np.complexfloating)):
        return True
    if x is None or isinstance(x, (bool, int, float, str, np.generic)):
        return False
    try:
        typ = x.dtype.type
    except AttributeError:
        typ = asarray(x).dtype.type
    return issubclass(typ, np.complexfloating)


def isrealobj(x) -> bool:
    """Whether ``x`` does not have a complex dtype."""
    return not iscomplexobj(x)


# --------------------------------------------------------------------------------------------
# selection


@moves_elements("x", "y")
def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Elements of ``x`` where ``condition`` is true, else of ``y`` (all broadcast).

    With only ``condition``, the indices of its nonzero elements (``nonzero``), which needs
    concrete values unless ``size`` is given.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.where(jnp.array([True, False]), jnp.ones(2), 2.)
    Array([1., 2.], dtype=float32)
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided "
                         f"to jax.numpy.where, got {x} and {y}.")
    if (type(condition) is Array and type(x) is Array and type(y) is Array):
        ca, xa, ya = condition._aval, x._aval, y._aval
        if (ca.dtype == dtypes.bool_ and xa.dtype is ya.dtype and xa.weak_type == ya.weak_type
                and ca.shape == xa.shape == ya.shape):
            return lax.select_n(condition, y, x)
    return _where(condition, x, y)


@jit_when_staged()
def _where(condition, x, y):
    check_arraylike("where", condition, x, y)
    condition = to_jax(condition)
    if _dtype(condition) != dtypes.bool_:
        condition = lax.ne(condition, const(condition, 0))
    x, y = promote_dtypes(x, y)
    condition, x, y = broadcast_arrays(condition, x, y)
    return lax.select_n(condition, y, x)


@moves_elements("choicelist", "default")
def select(condlist, choicelist, default=0):
    """The element of the first choice whose condition holds, else ``default``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> x = jnp.arange(4)
    >>> jnp.select([x < 1, x > 2], [x, -x], 9)
    Array([ 0,  9,  9, -3], dtype=int32)
    """
    condlist, choicelist = list(condlist), list(choicelist)
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist ({} vs {})".format(
            len(condlist), len(choicelist)))
    if not condlist:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    for i, cond in enumerate(condlist):
        if dtype_and_weak(cond)[0] != dtypes.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    choices = promote_dtypes(default, *choicelist)
    output = choices[0]
    for cond, choice in zip(reversed(condlist), reversed(choices[1:]), strict=True):
        output = where(cond, choice, output)
    return output


@jit_when_staged()
def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):  # noqa: A002
    """Limit values to ``[min, max]`` (either bound may be None).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.clip(jnp.arange(5), 1, 3)
    Array([1, 1, 2, 3, 3], dtype=int32)
    """
    arr = a if arr is None else arr
    min = a_min if min is None else min
    max = a_max if max is None else max
    check_arraylike("clip", arr)
    if min is not None:
        arr = maximum(min, arr)
    if max is not None:
        arr = minimum(max, arr)
    return to_jax(arr)


def _concrete_value(x, what: str):
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(
                x, f"The size argument of {what} must be statically specified to use {what} "
                   "within JAX transformations.")
        return np.asarray(value)
    return np.asarray(x)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one array per dimension.

    Needs a concrete ``a`` (the result's size depends on its values), unless ``size`` is
    given: then the result is truncated or padded with ``fill_value`` (default 0).
    """
    check_arraylike("nonzero", a)
    if np.ndim(a) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    if isinstance(a, Tracer) and a.to_concrete_value() is None:
        if size is None:
            _concrete_value(a, "jnp.nonzero")
        return _nonzero_static_size(a, int(size), fill_value)
    value = _concrete_value(a, "jnp.nonzero")
    found = np.nonzero(value)
    int_dtype = dtypes.default_int_dtype()
    out = []
    for dim, idx in enumerate(found):
        idx = idx.astype(int_dtype)
        if size is not None:
            fill = np.asarray(_fill_for(fill_value, dim))
            idx = np.concatenate([idx[:size], np.full(max(size - len(idx), 0), fill,
                                                      int_dtype)])
        out.append(Array._from_numpy(idx, ShapedArray(idx.shape, int_dtype, False)))
    return tuple(out)


def _nonzero_static_size(a, size, fill_value):
    """Traced nonzero with a static size: the flat positions of nonzero elements are packed
    by a scatter to the slots a cumulative sum gives them (slots past ``size`` are dropped),
    then split into one index per dimension; unused slots hold ``fill_value``."""
    shape = tuple(aval_of(a).shape)
    int_dtype = dtypes.default_int_dtype()
    flat = convert_element_type(_as_bool(ravel(a)), int_dtype)
    slot = lax.sub(cumsum(flat), const_int(1, int_dtype))
    slot = where(lax.ne(flat, const_int(0, int_dtype)), slot, const_int(size, int_dtype))
    positions = lax.iota(int_dtype, math.prod(shape))
    packed = scatter_flat(full_like(positions, 0, shape=(size,)), slot, positions, "set")
    valid = lax.lt(lax.iota(int_dtype, size), lax.reduce_sum(flat, (0,)))
    strides = np.cumprod((1,) + shape[:0:-1])[::-1].tolist()
    out = []
    for dim, (extent, stride) in enumerate(zip(shape, strides, strict=True)):
        idx = lax.rem(lax.div(packed, const_int(stride, int_dtype)),
                      const_int(extent, int_dtype))
        out.append(where(valid, idx, convert_element_type(_fill_for(fill_value, dim),
                                                          int_dtype, False)))
    return tuple(out)


def _fill_for(fill_value, dim):
    if fill_value is None:
        return 0
    return fill_value if np.ndim(fill_value) == 0 else fill_value[dim]


def const_int(value, dtype):
    return Array._from_numpy(np.asarray(value, dtype), ShapedArray((), dtype, False))


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of the flattened ``a``."""
    check_arraylike("flatnonzero", a)
    return nonzero(ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one row per element."""
    check_arraylike("argwhere", a)
    found = nonzero(atleast_1d(a), size=size, fill_value=fill_value)
    if np.ndim(a) == 0:
        return stack(found, axis=1)[:, :0]
    return stack(found, axis=1)


# --------------------------------------------------------------------------------------------
# closeness


@jit_when_staged(static_argnames=('equal_nan',))
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    """Elementwise ``|a - b| <= atol + rtol * |b|``; infinities equal only themselves.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.isclose(jnp.array([1.0, 2.0]), jnp.array([1.0 + 1e-7, 2.1]))
    Array([ True, False], dtype=bool)
    """
    if is_extended(a) or is_extended(b):  # keys are close when equal, as other integers
        return _elements_equal("isclose", a, b)
    # As JAX, integers too are compared as floats (so the result is never weak)
    a, b = promote_args_inexact("isclose", *promote_args("isclose", a, b))
    dt = _dtype(a)
    real_dt = lax_real_dtype(dt)
    rtol = convert_element_type(rtol, real_dt, False)
    atol = convert_element_type(atol, real_dt, False)
    diff = lax.abs(lax.sub(a, b))
    bound = lax.add(atol, lax.mul(rtol, lax.abs(b)))
    diff, bound = promote_args("isclose", diff, bound)
    out = lax.le(diff, bound)
    either_inf = lax.bitwise_or(isinf(a), isinf(b))
    out = where(either_inf, lax.eq(a, b), out)
    if equal_nan:
        both_nan = lax.bitwise_and(lax.ne(a, a), lax.ne(b, b))
        out = lax.bitwise_or(out, both_nan)
    return out


def lax_real_dtype(dt):
    if dt == dtypes.complex64:
        return np.dtype(np.float32)
    if dt == dtypes.complex128:
        return np.dtype(np.float64)
    return dt


@jit_when_staged(static_argnames=('equal_nan',))
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan: bool = False):
    """Whether every element of ``a`` is close to ``b`` (see :func:`isclose`)."""
    return all_(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan: bool = False):
    """Whether ``a1`` and ``a2`` have the same shape and elements."""
    extended = [isinstance(getattr(a, "dtype", None), dtypes.ExtendedDType) for a in (a1, a2)]
    if any(extended):  # PRNG key arrays: equal keys of one implementation, as JAX
        if not all(extended) or a1.dtype != a2.dtype or a1.shape != a2.shape:
            return asarray(False)
        return all_(a1 == a2)
    try:
        a1, a2 = asarray(a1), asarray(a2)
    except Exception:
        return asarray(False)
    if tuple(aval_of(a1).shape) != tuple(aval_of(a2).shape):
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all_(eq)


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` are equal after broadcasting."""
    if is_extended(a1) or is_extended(a2):  # PRNG key arrays: no asarray of their data
        return all_(equal(a1, a2))
    a1, a2 = asarray(a1), asarray(a2)
    try:
        a1, a2 = broadcast_arrays(a1, a2)
    except ValueError:
        return asarray(False)
    return all_(equal(a1, a2))


__all__ = ["fmax", "fmin", "nan_to_num", "equal", "not_equal", "less", "less_equal",
           "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
           "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "invert", "bitwise_not",
           "bitwise_invert", "left_shift", "right_shift", "bitwise_left_shift",
           "bitwise_right_shift", "bitwise_count", "isnan",
           "isfinite", "isposinf", "isneginf", "isreal", "iscomplex", "iscomplexobj",
           "isrealobj", "where", "select", "clip", "nonzero", "flatnonzero", "argwhere",
           "isclose", "allclose", "array_equal", "array_equiv"]
