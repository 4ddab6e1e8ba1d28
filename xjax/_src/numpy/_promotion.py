"""Argument checks, conversion to arrays, and NumPy-style dtype and rank promotion.

Every ``xjax.numpy`` function runs its array arguments through these helpers before calling
``lax``, which never promotes. The rules are JAX's: Python scalars are *weakly typed* and take
the dtype of the strongly typed operand they meet (``int8 array + 300`` wraps to int8);
binary promotion follows :func:`xjax.core.dtypes.lattice_result`; operands of lower rank get
leading size-1 dimensions (rank-0 operands are left alone: lax broadcasts them).

These run on every eager operation, so they test exact types first and do no work for
operands that already have the result's dtype.
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from xjax._src.runtime.sharded import ShardedBuffer
from xjax._src.runtime.sharded import state as sharded_state
from xjax._src import lax
from xjax._src.core import dtypes, errors
from xjax._src.core.array import Array, frozen_value
from xjax._src.core.avals import ShapedArray
from xjax._src.core.config import config
from xjax._src.core.trace import Tracer, ctx as trace_ctx
# one axis check for all of xjax: JAX's plain ValueError (never NumPy's AxisError)
from xjax._src.lax.shape import canonicalize_axis as canonicalize_axis
from xjax._src.transformations.debug_flags import guard_host_to_device

_PY_SCALARS = frozenset((bool, int, float, complex))
_flags = config.__dict__


def is_eager() -> bool:
    """True when no transformation is active (the current trace is the root eval trace)."""
    return trace_ctx.trace.parent is None


def concrete_value(x, context: str):
    """The NumPy value of ``x``, or JAX's ConcretizationTypeError (with ``context``) when it
    is traced."""
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(x, context)
        return np.asarray(value)
    return np.asarray(x)


def eager_values_of_one_type(*args):
    """The NumPy values of ``args`` when each is a concrete Array of one dtype and weak type
    and nothing is traced (nor is eager evaluation routed through XLA), else None.

    Hot eager functions (``dot``, ``matmul``, ``stack``) use it to compute with NumPy in one
    call, skipping the primitives they would bind one by one: the result is the same array
    (a Python loop of small operations is where JAX's eager mode is slowest, and ours must
    not be).
    """
    if trace_ctx.trace.parent is not None or _flags["xjax_eager_slow"]:
        return None
    first = args[0]
    if type(first) is not Array:
        return None
    if sharded_state.multi_device and any(  # sharded operands: run over their devices
            type(x) is Array and type(x._buffer) is ShardedBuffer for x in args):
        return None
    aval = first._aval
    values = []
    for x in args:
        if type(x) is not Array:
            return None
        other = x._aval
        if other.dtype != aval.dtype or other.weak_type != aval.weak_type:
            return None
        npy = x._npy
        values.append(npy if npy is not None else x._value())
    return values


# --------------------------------------------------------------------------------------------
# argument checks


def is_arraylike(x) -> bool:
    """Arrays, tracers, NumPy arrays and scalars, Python scalars, ``__jax_array__`` objects.

    (Not PRNG key arrays, though ``isinstance(key, Array)``: xjax.numpy has no key dtypes.)
    """
    t = type(x)
    return (t is Array or t in _PY_SCALARS or isinstance(x, (Tracer, np.ndarray, np.generic))
            or hasattr(x, "__jax_array__"))


def check_arraylike(fun_name: str, *args) -> None:
    """Raise JAX's TypeError for arguments that are not arrays or scalars (lists, tuples...)."""
    for pos, x in enumerate(args):
        t = type(x)
        if t is Array or t in _PY_SCALARS:
            continue
        if not is_arraylike(x):
            raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got {t} at "
                            f"position {pos}.")


def is_jax_array(x) -> bool:
    """An xjax Array or a tracer (not a NumPy value or Python scalar)."""
    return type(x) is Array or isinstance(x, Tracer)


# --------------------------------------------------------------------------------------------
# dtypes of operands


def dtype_and_weak(x) -> tuple:
    """``(canonical dtype, weak_type)`` of an array-like operand, as promotion sees it."""
    t = type(x)
    if t is Array:
        aval = x._aval
        return aval.dtype, aval.weak_type
    if t in _PY_SCALARS:
        if t is bool:
            return dtypes.bool_, False
        return dtypes.python_scalar_dtype(t), True
    if isinstance(x, Tracer):
        aval = x.aval
        return aval.dtype, aval.weak_type
    if hasattr(x, "__jax_array__"):
        return dtype_and_weak(x.__jax_array__())
    dt = x.dtype if isinstance(x, (np.ndarray, np.generic)) else np.asarray(x).dtype
    return dtypes.canonicalize_dtype(dtypes.dtype(dt)), False


def aval_of(x):
    """The aval of an Array or tracer."""
    return x._aval if type(x) is Array else x.aval


# --------------------------------------------------------------------------------------------
# conversion

_scalar_avals: dict = {}


def scalar_aval(dtype, weak: bool) -> ShapedArray:
    """A cached rank-0 aval (avals hash their contents on creation: reuse them)."""
    key = (dtype, weak)
    aval = _scalar_avals.get(key)
    if aval is None:
        aval = _scalar_avals[key] = ShapedArray((), dtype, weak)
    return aval


def python_scalar_value(x, dtype):
    """The NumPy value of Python scalar ``x`` in ``dtype``, wrapping ints as JAX does
    (``OverflowError`` if the int does not fit the default int dtype)."""
    if type(x) is int and dtypes.is_integer(dtype):
        return np.asarray(dtypes.coerce_python_int(x, dtype))
    if type(x) is int:
        dtypes.check_python_int(x)
    if type(x) is complex and not dtypes.is_complex(dtype):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            return np.asarray(x).astype(dtype)
    return np.asarray(x, dtype)


def scalar_array(x, dtype, weak: bool = False) -> Array:
    """A concrete rank-0 Array holding Python scalar ``x`` as ``dtype``."""
    return Array._from_numpy(python_scalar_value(x, dtype), scalar_aval(dtype, weak))


def numpy_to_array(x) -> Array:
    """A NumPy value (or array-like) as an Array of its canonical dtype (strongly typed)."""
    npy = np.asarray(x)
    dt = npy.dtype
    if dt == object or dt.kind in "USV" and dt not in dtypes._valid_dtypes:
        raise TypeError(f"JAX only supports number and bool dtypes, got dtype {dt} in array")
    canonical = dtypes.canonicalize_dtype(dt)
    if canonical != dt:
        npy = npy.astype(canonical)
    return Array._from_numpy(frozen_value(npy, x), ShapedArray(npy.shape, canonical, False))


_unguarded = {"scalar_array": scalar_array, "numpy_to_array": numpy_to_array}


def _guarded(convert):
    def guarded(x, *args, **kwargs):
        if trace_ctx.trace.parent is None:  # eager: the value goes to the device now
            guard_host_to_device(x, explicit=False)
        return convert(x, *args, **kwargs)
    guarded.__name__, guarded.__doc__ = convert.__name__, convert.__doc__
    return guarded


def _install_host_to_device_guard(name, value) -> None:
    """Make the conversions of host values here (Python scalars, NumPy values) obey
    ``jax_transfer_guard_host_to_device``, or restore the unchecked ones: a config listener,
    so the default costs nothing."""
    if name not in (None, "jax_transfer_guard", "jax_transfer_guard_host_to_device"):
        return
    on = config.read("jax_transfer_guard_host_to_device") not in (None, "allow")
    for converter, convert in _unguarded.items():
        globals()[converter] = _guarded(convert) if on else convert


config.add_listener(_install_host_to_device_guard)
_install_host_to_device_guard(None, None)


def to_jax(x):
    """Any array-like operand as an Array or tracer (Python scalars become weakly typed)."""
    t = type(x)
    if t is Array:
        return x
    if t in _PY_SCALARS:
        if t is bool:
            return scalar_array(x, dtypes.bool_, False)
        return scalar_array(x, dtypes.python_scalar_dtype(t), True)
    if isinstance(x, Tracer):
        return x
    if hasattr(x, "__jax_array__"):
        return to_jax(x.__jax_array__())
    return numpy_to_array(x)


def convert_element_type(x, dtype, weak: bool = False):
    """``x`` with ``dtype`` and weak-type flag ``weak`` (a no-op when it already has them).

    Python scalars become concrete Arrays directly (they print as literals in jaxprs); other
    values go through ``lax``'s ``convert_element_type`` primitive (saturating float->int
    conversion, JAX's semantics).
    """
    t = type(x)
    if t in _PY_SCALARS:
        if (t is float or t is complex) and not dtypes.is_inexact(dtype):
            # float -> int/bool saturates (and NaN -> 0) as lax's conversion defines it
            return lax_convert(to_jax(x), dtype, weak)
        return scalar_array(x, dtype, weak)
    if t is not Array and not isinstance(x, Tracer):
        x = to_jax(x)
    aval = aval_of(x)
    if aval.dtype == dtype and aval.weak_type == weak:
        return x
    return lax_convert(x, dtype, weak)


def lax_convert(x, dtype, weak: bool):
    """Bind ``convert_element_type`` with JAX's params (keeps the weak-type flag we ask)."""
    return lax.convert_element_type_p.bind(x, new_dtype=np.dtype(dtype), weak_type=bool(weak),
                                           sharding=None)


def stage(x):
    """Under a transformation, make a concrete value a traced one (JAX 0.10 stages constants
    that jnp.array/asarray create, so ``jnp.array(x.shape).prod()`` is traced under jit)."""
    if is_eager() or isinstance(x, Tracer):
        return x
    aval = aval_of(x)
    return lax_convert(x, aval.dtype, aval.weak_type)


# --------------------------------------------------------------------------------------------
# dtype promotion


def _result(args) -> tuple:
    return dtypes.lattice_result(*[dtype_and_weak(x) for x in args])


def _convert_all(args, dtype, weak) -> list:
    return [convert_element_type(x, dtype, weak) for x in args]


def promote_dtypes(*args) -> list:
    """Convert array-likes to Arrays/tracers of their common (promoted) dtype."""
    if len(args) < 2:
        return [to_jax(x) for x in args]
    dtype, weak = _result(args)
    return _convert_all(args, dtype, weak)


def promote_dtypes_inexact(*args) -> list:
    """Like :func:`promote_dtypes`, then integers and bools become the default float."""
    dtype, weak = _result(args)
    return _convert_all(args, dtypes.to_inexact_dtype(dtype), weak)


def promote_dtypes_numeric(*args) -> list:
    """Like :func:`promote_dtypes`, then bool becomes the default int."""
    dtype, weak = _result(args)
    if dtype == dtypes.bool_:
        dtype = dtypes.default_int_dtype()
    return _convert_all(args, dtype, weak)


def promote_dtypes_complex(*args) -> list:
    """Like :func:`promote_dtypes`, then the result is made complex."""
    dtype, weak = _result(args)
    return _convert_all(args, dtypes.to_complex_dtype(dtype), weak)


# --------------------------------------------------------------------------------------------
# rank promotion


def promote_shapes(fun_name: str, *args) -> list:
    """Give operands of lower (non-zero) rank leading size-1 dims, as NumPy broadcasting does.

    Rank-0 operands are left alone (lax broadcasts scalars). ``jax_numpy_rank_promotion``
    ('allow', 'warn', 'raise') says what to do when ranks differ.
    """
    if len(args) < 2:
        return list(args)
    ranks = [len(aval_of(x).shape) for x in args]
    rank = max(ranks)
    if all(r == rank or r == 0 for r in ranks):
        return list(args)
    policy = _flags["jax_numpy_rank_promotion"]
    if policy != "allow":
        shapes = " ".join(str(aval_of(x).shape) for x in args)
        msg = (f"Operands could not be broadcast together for {fun_name} on shapes {shapes} "
               "and with the config option jax_numpy_rank_promotion='{policy}'. For more "
               "information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
        if policy == "raise":
            raise ValueError(msg.replace("{policy}", policy))
        warnings.warn(msg.replace("{policy}", policy), stacklevel=3)
    # as JAX: shapes of different ranks that do not broadcast are NumPy's ValueError here,
    # before lax's TypeError (which only equal ranks reach)
    lax.broadcast_shapes(*(aval_of(x).shape for x in args))
    out = []
    for x, r in zip(args, ranks, strict=True):
        if r == rank or r == 0:
            out.append(x)
        else:
            shape = (1,) * (rank - r) + tuple(aval_of(x).shape)
            out.append(lax.broadcast_in_dim(x, shape, tuple(range(rank - r, rank))))
    return out


def promote_args(fun_name: str, *args) -> list:
    """Check, convert and promote the arguments of a NumPy function (dtypes and ranks)."""
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes(*args))


def promote_args_inexact(fun_name: str, *args) -> list:
    """:func:`promote_args`, computing in a floating (or complex) dtype."""
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name: str, *args) -> list:
    """:func:`promote_args`, with bool promoted to the default int."""
    check_arraylike(fun_name, *args)
    return promote_shapes(fun_name, *promote_dtypes_numeric(*args))


# --------------------------------------------------------------------------------------------
# shapes and axes


def _concrete_dim(d, context):
    if isinstance(d, Tracer):
        value = d.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(d, context)
        d = value
    return d


def canonicalize_shape(shape, *, as_list: bool = False) -> tuple:
    """A shape as a tuple of Python ints; traced or non-integer entries raise JAX's TypeError.

    ``as_list`` prints the offending shape as a list (as ``reshape`` does) instead of a tuple.
    """
    if isinstance(shape, (list, tuple)):
        entries = list(shape)
    elif np.ndim(shape) == 0:
        entries = [shape]
    else:
        entries = list(shape)
    try:
        return tuple(_dim_as_int(d) for d in entries)
    except TypeError:
        shown = entries if as_list else tuple(entries)
        msg = ("Shapes must be 1D sequences of concrete values of integer type, "
               f"got {shown}.")
        tracers = [d for d in entries if isinstance(d, Tracer)]
        if tracers:
            msg += ("\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
                    "subfunctions.")
            origin = errors._tracer_origin(tracers[0])
            if origin:
                msg += "\n" + origin
        raise TypeError(msg) from None


def _dim_as_int(d) -> int:
    t = type(d)
    if t is int:
        return d
    if t is bool or isinstance(d, (float, complex, np.floating, np.complexfloating)):
        raise TypeError(d)
    if isinstance(d, Tracer):
        if d.to_concrete_value() is None:
            raise TypeError(d)
    elif isinstance(d, (Array, np.ndarray)):
        if d.shape != () or not dtypes.is_integer(d.dtype):
            raise TypeError(d)
    return int(d.__index__())


def check_axis_in_shape(axis, ndim: int) -> None:
    """The IndexError of JAX's functions that read an axis' length from the shape tuple
    before checking the axis (mean, var, std without ``where``; argmax, argmin; split)."""
    if axis is None:
        return
    for a in axis if isinstance(axis, (tuple, list)) else (axis,):
        if not -ndim <= operator.index(a) < ndim:
            raise IndexError("tuple index out of range")


def canonicalize_axes(axis, ndim: int) -> tuple:
    """A reduction's ``axis`` argument (None, an int or a sequence) as a tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"duplicate value in 'axis': {tuple(axis)}")
        return axes
    return (canonicalize_axis(axis, ndim),)
