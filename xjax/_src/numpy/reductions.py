"""Reductions: ``sum``, ``prod``, ``max``/``min``, ``any``/``all``, ``mean``, ``var``/``std``,
``argmax``/``argmin``, cumulative sums and products, and their ``nan`` forms.

They refuse Python lists (``jnp.sum([1, 2, 3])`` is a TypeError, as in JAX). Sums and products
of small integers are computed in the default integer dtype (NumPy's rule); the result of a
reduction is never weakly typed.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.core.trace import Tracer
from xjax._src.numpy._promotion import (aval_of, canonicalize_axes, canonicalize_axis,
                                        check_arraylike, check_axis_in_shape,
                                        convert_element_type, lax_convert, to_jax)
from xjax._src.numpy.creation import full_of
from xjax._src.numpy.ufuncs import const
from xjax._src.numpy.shape_ops import broadcast_to, ravel
from xjax._src.numpy import _promotion, shape_ops
from xjax._src.numpy.nested_jit import inline_jit, jit_when_staged

_REDUCERS = {"sum": lax.reduce_sum, "prod": lax.reduce_prod, "max": lax.reduce_max,
             "min": lax.reduce_min}
_BOOL_REDUCERS = {"max": lax.reduce_or, "min": lax.reduce_and}
_COMBINE = {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


def _user_dtype(dtype, name):
    return dtypes.check_and_canonicalize_user_dtype(dtype, name, stacklevel=4)


def _keep_dims(out, shape, axes):
    """Re-insert the reduced ``axes`` of ``shape`` as size-1 dims."""
    kept = tuple(1 if d in axes else n for d, n in enumerate(shape))
    dims = tuple(d for d in range(len(shape)) if d not in axes)
    return lax.broadcast_in_dim(out, kept, dims)


_HALF_FLOATS = (np.dtype(np.float16), dtypes.bfloat16)


def _upcast_dtype(dt, promote_integers: bool):
    """The dtype NumPy sums and multiplies ``dt`` in: bool and small integers widen."""
    if dt == dtypes.bool_:
        return dtypes.default_int_dtype()
    if promote_integers and dtypes.is_integer(dt):
        if dtypes.is_unsigned(dt):
            wide = dtypes.default_uint_dtype()
        else:
            wide = dtypes.default_int_dtype()
        return wide if dt.itemsize < wide.itemsize else dt
    return dt


def _identity(name, dt):
    if name == "sum":
        return 0
    if name == "prod":
        return 1
    if dt == dtypes.bool_:
        return name == "min"
    if dtypes.is_integer(dt):
        info = dtypes.iinfo(dt)
        return int(info.min if name == "max" else info.max)
    return -np.inf if name == "max" else np.inf


def _reduce(name, a, axis, dtype, keepdims, initial, where, *, computation_dtype=None,
            logical=False):
    a = to_jax(a)
    shape = tuple(aval_of(a).shape)
    axes = canonicalize_axes(axis, len(shape))
    dt = aval_of(a).dtype if computation_dtype is None else computation_dtype
    a = convert_element_type(a, dt, False)
    if name in ("max", "min") and initial is None and not logical:  # any/all have identities
        if where is not None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to use "
                             "a where mask one has to specify 'initial'")
        if builtins.any(shape[d] == 0 for d in axes):
            raise ValueError(f"zero-size array to reduction operation {name} which has no "
                             "identity")
    if where is not None:
        from xjax._src.numpy.logic import where as where_  # logic imports this module
        a = where_(where, a, const(a, _identity(name, dt)))
    reducer = _BOOL_REDUCERS.get(name, _REDUCERS[name]) if dt == dtypes.bool_ else \
        _REDUCERS[name]
    out = reducer(a, axes) if axes else a
    if initial is not None:
        combine = _COMBINE[name]
        if dt == dtypes.bool_ and name in ("max", "min"):
            combine = lax.bitwise_or if name == "max" else lax.bitwise_and
        out = combine(convert_element_type(initial, dt, False), out)  # JAX's operand order
    if keepdims:
        out = _keep_dims(out, shape, axes)
    if dtype is not None and aval_of(out).dtype != dtype:
        out = lax_convert(out, dtype, False)
    return out


@inline_jit(static_argnames=('axis', 'dtype', 'keepdims', 'promote_integers'))
def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,  # noqa: A001
        promote_integers: bool = True):
    """Sum of elements over ``axis`` (all axes by default).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.sum(jnp.array([[1, 2], [3, 4]]), axis=0)
    Array([4, 6], dtype=int32)
    """
    check_arraylike("sum", a)
    _no_out(out, "sum")
    dtype = None if dtype is None else _user_dtype(dtype, "sum")
    in_dtype = aval_of(to_jax(a)).dtype
    if dtype == dtypes.bool_:  # JAX reduces booleans with logical or
        return _reduce("max", lax.ne(to_jax(a), const(to_jax(a), 0)), axis, None, keepdims,
                       initial, where, logical=True)
    computation = dtype if dtype is not None else _upcast_dtype(in_dtype, promote_integers)
    if computation == dtypes.bool_:
        computation = dtypes.default_int_dtype()
    if dtype is None and computation in _HALF_FLOATS:  # JAX computes these in float32
        return _reduce("sum", a, axis, computation, keepdims, initial, where,
                       computation_dtype=np.dtype(np.float32))
    return _reduce("sum", a, axis, dtype, keepdims, initial, where,
                   computation_dtype=computation)


@inline_jit(static_argnames=('axis', 'dtype', 'keepdims', 'promote_integers'))
def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers: bool = True):
    """Product of elements over ``axis`` (all axes by default)."""
    check_arraylike("prod", a)
    _no_out(out, "prod")
    dtype = None if dtype is None else _user_dtype(dtype, "prod")
    in_dtype = aval_of(to_jax(a)).dtype
    if dtype == dtypes.bool_:  # JAX reduces booleans with logical and
        return _reduce("min", lax.ne(to_jax(a), const(to_jax(a), 0)), axis, None, keepdims,
                       initial, where, logical=True)
    computation = dtype if dtype is not None else _upcast_dtype(in_dtype, promote_integers)
    if computation == dtypes.bool_:
        computation = dtypes.default_int_dtype()
    if dtype is None and computation in _HALF_FLOATS:  # JAX computes these in float32
        return _reduce("prod", a, axis, computation, keepdims, initial, where,
                       computation_dtype=np.dtype(np.float32))
    return _reduce("prod", a, axis, dtype, keepdims, initial, where,
                   computation_dtype=computation)


@inline_jit(static_argnames=('axis', 'keepdims'))
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Maximum over ``axis`` (NaN propagates)."""
    check_arraylike("max", a)
    _no_out(out, "max")
    return _reduce("max", a, axis, None, keepdims, initial, where)


@inline_jit(static_argnames=('axis', 'keepdims'))
def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """Minimum over ``axis`` (NaN propagates)."""
    check_arraylike("min", a)
    _no_out(out, "min")
    return _reduce("min", a, axis, None, keepdims, initial, where)


amax = max
amin = min


def _bool_reduce(name, a, axis, out, keepdims, where):
    check_arraylike(name, a)
    _no_out(out, name)
    a = to_jax(a)
    if aval_of(a).dtype != dtypes.bool_:
        a = lax_convert(a, dtypes.bool_, False)
    return _reduce("max" if name == "any" else "min", a, axis, None, keepdims,
                   name == "all" if where is not None else None, where, logical=True)


def any(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether any element over ``axis`` is nonzero."""
    return _bool_reduce("any", a, axis, out, keepdims, where)


def all(a, axis=None, out=None, keepdims=False, *, where=None):  # noqa: A001
    """Whether every element over ``axis`` is nonzero."""
    return _bool_reduce("all", a, axis, out, keepdims, where)


def _count(a, axes, where):
    """Number of elements reduced: a Python int, or a traced count under a ``where`` mask."""
    shape = tuple(aval_of(a).shape)
    if where is None:
        return math.prod(shape[d] for d in axes)
    mask = broadcast_to(where, shape)
    return _reduce("sum", mask, tuple(axes), None, True, None, None,
                   computation_dtype=dtypes.default_int_dtype())


def _mean_dtypes(a, dtype, name):
    in_dtype = aval_of(a).dtype
    if dtype is None:
        result = dtypes.to_inexact_dtype(in_dtype)
    else:
        result = _user_dtype(dtype, name)
    computation = dtypes.to_inexact_dtype(result) if not dtypes.is_integer(result) else result
    if computation in (dtypes.float16, dtypes.bfloat16):
        computation = np.dtype(np.float32)
    return result, computation


@inline_jit(static_argnames=('axis', 'dtype', 'keepdims'))
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """Arithmetic mean over ``axis``; integers are averaged as floats.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.mean(jnp.array([1, 2]))
    Array(1.5, dtype=float32)
    """
    check_arraylike("mean", a)
    _no_out(out, "mean")
    a = to_jax(a)
    result_dtype, computation = _mean_dtypes(a, dtype, "mean")
    if where is None:  # JAX reads the count off the shape first
        check_axis_in_shape(axis, len(aval_of(a).shape))
    axes = canonicalize_axes(axis, len(aval_of(a).shape))
    total = _reduce("sum", a, axis, None, keepdims, None, where, computation_dtype=computation)
    count = _count(a, axes, where)
    if isinstance(count, int):
        out = lax.div(total, const(total, count))
    else:
        if not keepdims:
            count = lax.reshape(count, tuple(aval_of(total).shape))
        out = lax.div(total, lax_convert(count, computation, False))
    return out if result_dtype == computation else lax_convert(out, result_dtype, False)


_mean_fn = mean  # var's ``mean`` argument shadows the function


@jit_when_staged('_var', static_argnames=('axis', 'dtype', 'keepdims'))
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Variance over ``axis``, dividing by ``N - ddof`` (NaN when that is not positive).

    ``mean``, if given, is used as the center instead of computing it (it must broadcast
    against ``a``, e.g. a mean taken with ``keepdims=True``).
    """
    check_arraylike("var", a)
    _no_out(out, "var")
    if correction is not None:
        ddof = correction
    a = to_jax(a)
    in_dtype = aval_of(a).dtype
    computation = dtypes.to_inexact_dtype(in_dtype)
    if computation in (dtypes.float16, dtypes.bfloat16):
        computation = np.dtype(np.float32)
    if dtype is not None:
        result_dtype = _user_dtype(dtype, "var")
    else:
        result_dtype = dtypes.to_inexact_dtype(in_dtype)
        if dtypes.is_complex(result_dtype):
            result_dtype = np.dtype(np.float64 if result_dtype == dtypes.complex128
                                    else np.float32)
    a = convert_element_type(a, computation, False)
    if where is None:  # JAX reads the count off the shape first
        check_axis_in_shape(axis, len(aval_of(a).shape))
    axes = canonicalize_axes(axis, len(aval_of(a).shape))
    if mean is None:
        center = _mean_fn(a, axis, keepdims=True, where=where)
    else:
        check_arraylike("var", mean)
        center = convert_element_type(to_jax(mean), computation, False)
    centered = lax.sub(a, center)
    if dtypes.is_complex(computation):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.square(centered)
    count = _count(a, axes, where)
    traced_ddof = isinstance(ddof, Tracer)  # a dynamic argument under a nested jit
    if isinstance(count, int) and not traced_ddof:
        total = _reduce("sum", centered, axis, None, keepdims, None, where)
        normalizer = count - ddof
        if normalizer > 0:
            out = lax.div(total, const(total, normalizer))
        else:
            out = lax.mul(total, const(total, np.nan))
    else:
        # JAX's order: the normalizer, the sum, the quotient, then NaN where N - ddof <= 0
        sum_dtype = aval_of(centered).dtype
        if isinstance(count, int):
            count = const(centered, count)  # a literal of the sum's dtype, as JAX's
        else:
            if not keepdims:
                count = lax.reshape(count, tuple(d for i, d in enumerate(aval_of(a).shape)
                                                 if i not in axes))
            count = lax_convert(count, sum_dtype, False)
        ddof = (lax_convert(ddof, sum_dtype, False) if traced_ddof
                else const(centered, ddof))
        normalizer = lax.sub(count, ddof)
        total = _reduce("sum", centered, axis, None, keepdims, None, where)
        from xjax._src.numpy.logic import where as where_  # logic imports this module
        out = lax.div(total, normalizer)
        out = where_(lax.gt(normalizer, const(normalizer, 0)), out, const(total, np.nan))
    if aval_of(out).dtype != result_dtype:
        out = lax_convert(out, result_dtype, False)
    return out


@jit_when_staged('_std', static_argnames=('axis', 'dtype', 'keepdims'))
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    """Standard deviation over ``axis`` (square root of :func:`var`)."""
    check_arraylike("std", a)
    _no_out(out, "std")
    if dtype is not None and not dtypes.is_inexact(_user_dtype(dtype, "std")):
        raise ValueError(f"dtype argument to jnp.std must be inexact; got {np.dtype(dtype)}")
    return lax.sqrt(var(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                        correction=correction))


@jit_when_staged('_ptp', static_argnames=('axis', 'keepdims'))
def ptp(a, axis=None, out=None, keepdims=False):
    """Range of values (maximum minus minimum) over ``axis``."""
    check_arraylike("ptp", a)
    _no_out(out, "ptp")
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


@jit_when_staged(static_argnames=('axis', 'keepdims'))
def count_nonzero(a, axis=None, keepdims=False):
    """Number of nonzero elements over ``axis``."""
    check_arraylike("count_nonzero", a)
    a = to_jax(a)
    nonzero = a if aval_of(a).dtype == dtypes.bool_ else lax.ne(a, const(a, 0))
    return _reduce("sum", nonzero, axis, None, keepdims, None, None,
                   computation_dtype=dtypes.default_int_dtype())


def _arg_reduce(name, lax_fn, a, axis, out, keepdims):
    check_arraylike(name, a)
    _no_out(out, name)
    a = to_jax(a)
    if axis is None:
        shape = tuple(aval_of(a).shape)
        a = ravel(a)
        axis = 0
        keep_axes = tuple(range(len(shape)))
    else:
        shape = tuple(aval_of(a).shape)
        axis = operator.index(axis)
        check_axis_in_shape(axis, len(shape))  # JAX reads the axis' length first
        axis = canonicalize_axis(axis, len(shape))
        keep_axes = (axis,)
    if aval_of(a).shape[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    if aval_of(a).dtype == dtypes.bool_:
        a = lax_convert(a, np.dtype(np.int32), False)
    result = lax_fn(a, axis, dtypes.default_int_dtype())
    if keepdims:
        result = _keep_dims(result, shape, keep_axes)
    return result


def argmax(a, axis=None, out=None, keepdims=None):
    """Index of the maximum along ``axis`` (of the flattened array by default)."""
    return _arg_reduce("argmax", lax.argmax, a, axis, out, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
    """Index of the minimum along ``axis`` (of the flattened array by default)."""
    return _arg_reduce("argmin", lax.argmin, a, axis, out, keepdims)


def _cumulative(name, lax_fn, a, axis, dtype, out, promote_integers=False):
    check_arraylike(name, a)
    _no_out(out, name)
    a = to_jax(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    axis = canonicalize_axis(axis, len(aval_of(a).shape))
    if dtype is not None:
        dt = _user_dtype(dtype, name)
    else:
        dt = _upcast_dtype(aval_of(a).dtype, promote_integers)
        if dt == dtypes.bool_:
            dt = dtypes.default_int_dtype()
    # JAX converts to the result dtype, which also drops a weak type
    a = convert_element_type(a, dt, False)
    return lax_fn(a, axis)


@jit_when_staged(static_argnames=('axis', 'dtype'))
def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (of the flattened array by default)."""
    return _cumulative("cumsum", lax.cumsum, a, axis, dtype, out)


@jit_when_staged(static_argnames=('axis', 'dtype'))
def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (of the flattened array by default)."""
    return _cumulative("cumprod", lax.cumprod, a, axis, dtype, out)



def _cumulative_with_initial(name, fn, identity, x, axis, dtype, include_initial):
    check_arraylike(name, x)
    x = to_jax(x)
    rank = len(aval_of(x).shape)
    if axis is None:
        if rank > 1:
            raise ValueError(f"The input array has rank {rank}, however axis was not set to "
                             "an explicit value. The axis argument is only optional for "
                             "one-dimensional arrays.")
        axis = 0
    out = fn(x, axis=axis, dtype=dtype)
    if include_initial:
        axis = canonicalize_axis(axis, rank)
        shape = list(aval_of(out).shape)
        shape[axis] = 1
        first = full_of(tuple(shape), identity, aval_of(out).dtype, False)
        out = lax.concatenate([first, out], axis)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """Cumulative sum along ``axis`` (optionally starting with 0), the Array API form."""
    def promoted_cumsum(a, axis, dtype):  # the Array API widens small integers, as sum does
        return _cumulative("cumulative_sum", lax.cumsum, a, axis, dtype, None, True)
    return _cumulative_with_initial("cumulative_sum", promoted_cumsum, 0, x, axis, dtype,
                                    include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """Cumulative product along ``axis`` (optionally starting with 1), the Array API form."""
    return _cumulative_with_initial("cumulative_prod", cumprod, 1, x, axis, dtype,
                                    include_initial)


def _nan_to(a, value):
    from xjax._src.numpy.logic import where as where_  # logic imports this module
    a = to_jax(a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return a
    return where_(lax.ne(a, a), const(a, value), a)


@jit_when_staged(static_argnames=('axis', 'dtype', 'keepdims'))
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`sum` treating NaNs as zero."""
    check_arraylike("nansum", a)
    return sum(_nan_to(a, 0), axis, dtype, out, keepdims, initial, where)


@jit_when_staged(static_argnames=('axis', 'dtype', 'keepdims'))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`prod` treating NaNs as one."""
    check_arraylike("nanprod", a)
    return prod(_nan_to(a, 1), axis, dtype, out, keepdims, initial, where)


@jit_when_staged(static_argnames=('axis', 'keepdims'))
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`max` ignoring NaNs (NaN where every element is NaN)."""
    check_arraylike("nanmax", a)
    out_ = max(_nan_to(a, -np.inf), axis, out, keepdims, initial, where)
    if initial is not None or not dtypes.is_inexact(aval_of(out_).dtype):
        return out_  # as JAX: with an initial value an all-NaN slice gives the initial value
    all_nan = all(lax.ne(to_jax(a), to_jax(a)), axis, keepdims=keepdims)
    from xjax._src.numpy.logic import where as where_  # logic imports this module
    return where_(all_nan, const(out_, np.nan), out_)


@jit_when_staged(static_argnames=('axis', 'keepdims'))
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """:func:`min` ignoring NaNs (NaN where every element is NaN)."""
    check_arraylike("nanmin", a)
    out_ = min(_nan_to(a, np.inf), axis, out, keepdims, initial, where)
    if initial is not None or not dtypes.is_inexact(aval_of(out_).dtype):
        return out_  # as JAX: with an initial value an all-NaN slice gives the initial value
    all_nan = all(lax.ne(to_jax(a), to_jax(a)), axis, keepdims=keepdims)
    from xjax._src.numpy.logic import where as where_  # logic imports this module
    return where_(all_nan, const(out_, np.nan), out_)


@jit_when_staged(static_argnames=('axis', 'dtype', 'keepdims'))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    """:func:`mean` ignoring NaNs."""
    check_arraylike("nanmean", a)
    a = to_jax(a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return mean(a, axis, dtype, out, keepdims, where=where)
    valid = lax.eq(a, a)
    if where is not None:
        from xjax._src.numpy.logic import logical_and  # logic imports this module
        valid = logical_and(valid, where)
    return mean(a, axis, dtype, out, keepdims, where=valid)


@jit_when_staged(static_argnames=('axis', 'dtype', 'keepdims'))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """:func:`var` ignoring NaNs (``mean``, if given, is the center used)."""
    check_arraylike("nanvar", a)
    a = to_jax(a)
    valid = lax.eq(a, a) if dtypes.is_inexact(aval_of(a).dtype) else None
    if where is not None:
        from xjax._src.numpy.logic import logical_and  # logic imports this module
        valid = where if valid is None else logical_and(valid, where)
    return var(_nan_to(a, 0), axis, dtype, out, ddof, keepdims, where=valid, mean=mean)


@jit_when_staged(static_argnames=('axis', 'dtype', 'keepdims'))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
    """:func:`std` ignoring NaNs."""
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean))


@jit_when_staged(static_argnames=('axis', 'dtype'))
def nancumsum(a, axis=None, dtype=None, out=None):
    """:func:`cumsum` treating NaNs as zero."""
    check_arraylike("nancumsum", a)
    return cumsum(_nan_to(a, 0), axis, dtype, out)


@jit_when_staged(static_argnames=('axis', 'dtype'))
def nancumprod(a, axis=None, dtype=None, out=None):
    """:func:`cumprod` treating NaNs as one."""
    check_arraylike("nancumprod", a)
    return cumprod(_nan_to(a, 1), axis, dtype, out)


def _nan_arg(name, fn, fill, a, axis, out, keepdims):
    check_arraylike(name, a)
    a = to_jax(a)
    if not dtypes.is_inexact(aval_of(a).dtype):
        return fn(a, axis, out, keepdims)
    nan_mask = lax.ne(a, a)
    result = fn(_nan_to(a, fill), axis, out, keepdims)
    from xjax._src.numpy.logic import where as where_  # logic imports this module
    all_nan = all(nan_mask, axis, keepdims=bool(keepdims))
    return where_(all_nan, const(result, -1), result)


@jit_when_staged('_nanargmax', static_argnames=('axis', 'keepdims'))
def nanargmax(a, axis=None, out=None, keepdims=None):
    """:func:`argmax` ignoring NaNs (-1 where every element is NaN)."""
    return _nan_arg("nanargmax", argmax, -np.inf, a, axis, out, keepdims)


@jit_when_staged('_nanargmin', static_argnames=('axis', 'keepdims'))
def nanargmin(a, axis=None, out=None, keepdims=None):
    """:func:`argmin` ignoring NaNs (-1 where every element is NaN)."""
    return _nan_arg("nanargmin", argmin, np.inf, a, axis, out, keepdims)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted average over ``axis`` (the mean when ``weights`` is None)."""
    check_arraylike("average", a)
    shape = tuple(aval_of(to_jax(a)).shape)
    axes = canonicalize_axes(axis, len(shape))  # first, as JAX (ValueError, not mean's)
    if weights is None:
        avg = mean(a, axis, keepdims=keepdims)
        total = full_of(tuple(aval_of(avg).shape), math.prod(shape[d] for d in axes),
                        aval_of(avg).dtype, False)
    else:
        a, weights = _promotion.promote_args_inexact("average", a, weights)
        weights = shape_ops.broadcast_to(weights, tuple(aval_of(a).shape))
        total = sum(weights, axis, keepdims=keepdims)
        avg = lax.div(sum(lax.mul(a, weights), axis, keepdims=keepdims), total)
    return (avg, total) if returned else avg


__all__ = ["sum", "prod", "max", "min", "amax", "amin", "any", "all", "mean", "var", "std",
           "ptp", "count_nonzero", "argmax", "argmin", "cumsum", "cumprod", "nansum", "nanprod",
           "nanmax", "nanmin", "nanmean", "average", "cumulative_sum", "cumulative_prod",
           "nanvar", "nanstd", "nancumsum", "nancumprod", "nanargmax", "nanargmin"]

