"""The operators, properties and NumPy-like methods of ``xjax.Array`` and of tracers.

``core`` never imports upward (DESIGN.md §6): this module installs them on both classes when
``xjax.numpy`` is imported, so user code cannot tell an Array from a tracer except through
concreteness. An operand with ``__jax_array__`` (Flax's Variable) is used as the array it
gives, as in JAX; operators return ``NotImplemented`` for other operands they do not know
(Python lists included), so Python raises its usual TypeError.
"""

from __future__ import annotations

import numpy as np

from xjax._src.core import array as array_module, dtypes, errors, trace as trace_module
from xjax._src.core.array import Array
from xjax._src.core.trace import Tracer
from xjax._src.numpy import (linalg_basic as dot_mod, indexing, logic, matrices, reductions,
                             shape_ops, ufuncs)
from xjax._src.numpy._promotion import aval_of, lax_convert
from xjax._src.numpy.extended import moves_elements
from xjax._src import lax
from xjax._src.numpy._promotion import to_jax

_OPERAND_TYPES = frozenset((Array, bool, int, float, complex))
# Tracer first: a tracer matches before Array's metaclass check runs (tracing speed).
_OPERAND_CLASSES = (Tracer, Array, np.ndarray, np.generic)


def _known(other) -> bool:
    return type(other) in _OPERAND_TYPES or isinstance(other, _OPERAND_CLASSES)


def _as_operand(other):
    """``other`` as an operand, or NotImplemented when the operator should defer to it."""
    if _known(other):
        return other
    if hasattr(other, "__jax_array__"):
        return other.__jax_array__()
    return NotImplemented


def _forward(fn):
    def op(self, other):
        if type(other) not in _OPERAND_TYPES and not isinstance(other, _OPERAND_CLASSES):
            other = _as_operand(other)
            if other is NotImplemented:
                return NotImplemented
        return fn(self, other)
    return op


def _reflected(fn):
    def op(self, other):
        if type(other) not in _OPERAND_TYPES and not isinstance(other, _OPERAND_CLASSES):
            other = _as_operand(other)
            if other is NotImplemented:
                return NotImplemented
        return fn(other, self)
    return op


def _binary_operators() -> dict:
    table = {
        "add": ufuncs.add, "sub": ufuncs.subtract, "mul": ufuncs.multiply,
        "truediv": ufuncs.true_divide, "floordiv": ufuncs.floor_divide,
        "mod": ufuncs.remainder, "divmod": ufuncs.divmod, "matmul": dot_mod.matmul,
        "and": logic.bitwise_and, "or": logic.bitwise_or, "xor": logic.bitwise_xor,
        "lshift": logic.left_shift, "rshift": logic.right_shift,
    }
    ops = {}
    for name, fn in table.items():
        ops[f"__{name}__"] = _forward(fn)
        ops[f"__r{name}__"] = _reflected(fn)
    for name, fn in {"eq": logic.equal, "ne": logic.not_equal, "lt": logic.less,
                     "le": logic.less_equal, "gt": logic.greater,
                     "ge": logic.greater_equal}.items():
        ops[f"__{name}__"] = _forward(fn)
    return ops


def _pow(self, other, mod=None):
    if mod is not None:
        raise NotImplementedError("pow() with a modulus is not supported for JAX arrays")
    other = _as_operand(other)
    if other is NotImplemented:
        return NotImplemented
    return ufuncs.power(self, other)


def _rpow(self, other, mod=None):
    other = _as_operand(other)
    if other is NotImplemented:
        return NotImplemented
    return ufuncs.power(other, self)


def _round(self, ndigits=None):
    out = ufuncs.round(self, 0 if ndigits is None else ndigits)
    # like a builtin float, round(x) without ndigits gives an integer (JAX: int32)
    return astype(out, int) if ndigits is None else out


def _sort(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    from xjax._src.numpy import sorting  # import cycle: sorting -> numpy -> array_methods
    return sorting.sort(self, axis, kind=kind, order=order, stable=stable,
                        descending=descending)


def _argsort(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    from xjax._src.numpy import sorting  # import cycle: sorting -> numpy -> array_methods
    return sorting.argsort(self, axis, kind=kind, order=order, stable=stable,
                           descending=descending)


def _argpartition(self, kth, axis=-1):
    from xjax._src.numpy import sorting  # import cycle: sorting -> numpy -> array_methods
    return sorting.argpartition(self, kth, axis)


def _searchsorted(self, v, side="left", sorter=None, *, method="scan"):
    import xjax._src.numpy as jnp  # defined with the control-flow based functions
    return jnp.searchsorted(self, v, side=side, sorter=sorter, method=method)


def _compress(self, condition, axis=None, *, size=None, fill_value=0):
    from xjax._src.numpy import misc  # import cycle: misc -> numpy -> array_methods
    return misc.compress(condition, self, axis, size=size, fill_value=fill_value)


def _choose(self, choices, mode="raise"):
    from xjax._src.numpy import misc  # import cycle: misc -> numpy -> array_methods
    return misc.choose(self, choices, mode=mode)


# --------------------------------------------------------------------------------------------
# methods


def _reshape(self, *args, order="C"):
    """Array with a new shape: ``x.reshape(2, 3)`` or ``x.reshape((2, 3))``."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)) or (
            len(args) == 1 and isinstance(args[0], np.ndarray) and args[0].ndim == 1):
        shape = args[0]
    else:
        shape = args
    return shape_ops._reshape(self, shape, order)


def _transpose(self, *args):
    """Array with permuted axes: ``x.transpose()``, ``x.transpose(1, 0)`` or
    ``x.transpose((1, 0))``."""
    if not args or (len(args) == 1 and args[0] is None):
        axes = None
    elif len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)):
        axes = args[0]
    else:
        axes = args
    return shape_ops.transpose(self, axes)


@moves_elements("x")
def astype(x, dtype, copy: bool = False, device=None):
    """``x`` converted to ``dtype`` (strongly typed).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.array([1.7, -1.7]).astype(jnp.int32)
    Array([ 1, -1], dtype=int32)
    """
    target = dtypes.check_and_canonicalize_user_dtype(dtype, "astype", stacklevel=3)
    x = to_jax(x)
    aval = aval_of(x)
    if aval.dtype == target and not aval.weak_type:
        return x
    return lax_convert(x, target, False)


def _view(self, dtype=None, type=None):
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    if dtype is None:
        return self
    target = dtypes.check_and_canonicalize_user_dtype(dtype, "view", stacklevel=3)
    return _view_as(self, target)


def _view_as(x, target):
    """``x``'s bytes as ``target``: as NumPy, the last axis stretches or shrinks by the
    ratio of the item sizes (JAX's errors where it cannot)."""
    source, shape = aval_of(x).dtype, aval_of(x).shape
    bits_in, bits_out = dtypes.itemsize_bits(source), dtypes.itemsize_bits(target)
    if source == target:
        return x
    if not shape:
        if bits_in != bits_out:
            raise ValueError("view() of a 0d array is only supported if the itemsize is "
                             "unchanged.")
        return lax.squeeze(_view_as(lax.expand_dims(x, (0,)), target), (0,))
    if (shape[-1] * bits_in) % bits_out:
        raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                         "total size in bytes of the last axis of the array.")
    # bitcast_convert_type takes neither bool nor complex: view them through uint8 or
    # their interleaved real and imaginary parts
    if source == dtypes.bool_:
        return _view_as(lax_convert(x, np.dtype(np.uint8), False), target)
    if dtypes.is_complex(source):
        return _view_as(_interleaved(x), target)
    if target == dtypes.bool_:
        return lax_convert(_view_as(x, np.dtype(np.uint8)), target, False)
    if dtypes.is_complex(target):
        return _paired(_view_as(x, np.dtype(np.finfo(target).dtype)))
    return _bitcast_last_axis(x, target, bits_in, bits_out)


def _interleaved(z):
    """The real and imaginary parts of complex ``z`` alternating along its last axis."""
    shape, last = aval_of(z).shape, len(aval_of(z).shape)
    parts = [lax.expand_dims(part(z), (last,)) for part in (lax.real, lax.imag)]
    return lax.reshape(lax.concatenate(parts, last), (*shape[:-1], 2 * shape[-1]))


def _paired(x):
    """Complex numbers from the alternating real and imaginary parts of ``x``'s last axis."""
    shape = aval_of(x).shape
    pairs = lax.reshape(x, (*shape[:-1], shape[-1] // 2, 2))
    real, imag = (lax.index_in_dim(pairs, i, axis=len(shape), keepdims=False) for i in (0, 1))
    return lax.complex(real, imag)


def _bitcast_last_axis(x, target, bits_in, bits_out):
    """bitcast_convert_type, which adds (or takes) a trailing axis for a smaller (larger)
    item, folded into the last axis."""
    shape = aval_of(x).shape
    if bits_in < bits_out:
        factor = bits_out // bits_in
        x = lax.reshape(x, (*shape[:-1], shape[-1] // factor, factor))
        return lax.bitcast_convert_type(x, target)
    out = lax.bitcast_convert_type(x, target)
    if bits_in > bits_out:
        out = lax.reshape(out, (*shape[:-1], shape[-1] * (bits_in // bits_out)))
    return out


def _flat(self):
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: consider "
                              "arr.flatten() instead.")


def _flatten(self, order="C"):
    """The elements as a 1-D array."""
    return shape_ops.ravel(self, order)


def _nonzero(self, *, size=None, fill_value=None):
    """Indices of the nonzero elements (see :func:`xjax.numpy.nonzero`)."""
    return logic.nonzero(self, size=size, fill_value=fill_value)


def _clip(self, min=None, max=None):  # noqa: A002
    """Values limited to ``[min, max]``."""
    return logic.clip(self, min, max)


def _tracer_item(self, *args):
    value = self.to_concrete_value()
    if value is None:
        raise errors.ConcretizationTypeError(self, "The problem arose with the `item` method.")
    return np.asarray(value).item(*args)


def _tracer_tolist(self):
    value = self.to_concrete_value()
    if value is None:
        raise errors.ConcretizationTypeError(self,
                                             "The problem arose with the `tolist` method.")
    return np.asarray(value).tolist()


def _tracer_copy(self):
    return self


_METHODS = {
    "__getitem__": indexing.getitem,
    "__neg__": ufuncs.negative, "__pos__": ufuncs.positive, "__abs__": ufuncs.absolute,
    "__invert__": logic.invert, "__pow__": _pow, "__rpow__": _rpow, "__round__": _round,
    "all": reductions.all, "any": reductions.any, "argmax": reductions.argmax,
    "argmin": reductions.argmin, "astype": astype, "clip": _clip, "conj": ufuncs.conjugate,
    "conjugate": ufuncs.conjugate, "cumprod": reductions.cumprod, "cumsum": reductions.cumsum,
    "dot": dot_mod.dot, "flatten": _flatten, "max": reductions.max, "mean": reductions.mean,
    "min": reductions.min, "nonzero": _nonzero, "prod": reductions.prod, "ptp": reductions.ptp,
    "ravel": shape_ops.ravel, "repeat": shape_ops.repeat, "reshape": _reshape,
    "round": ufuncs.round, "squeeze": shape_ops.squeeze, "std": reductions.std,
    "sum": reductions.sum, "swapaxes": shape_ops.swapaxes, "take": indexing.take,
    "transpose": _transpose, "var": reductions.var, "view": _view,
    "diagonal": matrices.diagonal, "trace": matrices.trace,
    "sort": _sort, "argsort": _argsort, "argpartition": _argpartition,
    "searchsorted": _searchsorted, "compress": _compress, "choose": _choose,
}

_PROPERTIES = {
    "T": lambda self: shape_ops.transpose(self),
    "mT": lambda self: shape_ops.matrix_transpose(self),
    "real": lambda self: ufuncs.real(self),
    "imag": lambda self: ufuncs.imag(self),
    "at": lambda self: indexing._IndexUpdateHelper(self),
    "flat": _flat,
}

_TRACER_ONLY = {"item": _tracer_item, "tolist": _tracer_tolist, "copy": _tracer_copy}


def install() -> None:
    """Give ``Array`` and ``Tracer`` the operators, methods and properties defined here,
    through the extension points of the core layer."""
    members = dict(_binary_operators())
    members.update(_METHODS)
    array_module.define_methods(members, _PROPERTIES)
    trace_module.define_tracer_methods({**members, **_TRACER_ONLY}, _PROPERTIES)
