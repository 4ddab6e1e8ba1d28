"""Products and convolutions: ``dot``, ``matmul``, ``vdot``, ``vecdot``, ``inner``, ``outer``,
``tensordot``, ``convolve``, ``correlate``. All are ``lax.dot_general`` (or
``lax.conv_general_dilated``) after NumPy promotion."""

from __future__ import annotations

import operator

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.core.array import Array
from xjax._src.core.avals import ShapedArray
from xjax._src.core.out_sharding import check_out_sharding
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, check_arraylike,
                                        eager_values_of_one_type, promote_args_inexact,
                                        promote_dtypes)
from xjax._src.numpy.shape_ops import broadcast_shapes, broadcast_to, flip, ravel, _reshape
from xjax._src.numpy.ufuncs import conjugate, multiply
from xjax._src.numpy.shape_ops import broadcast_arrays, moveaxis, stack
from xjax._src.numpy.ufuncs import subtract
from xjax._src.numpy.nested_jit import jit_when_staged


def _shape(x) -> tuple:
    return tuple(aval_of(x).shape)


def _preferred(preferred_element_type, x):
    if preferred_element_type is None:
        return aval_of(x).dtype
    return dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "dot")


def _dot_general(a, b, contract, batch, precision, preferred_element_type,
                 out_sharding=None):
    return lax.dot_general(a, b, (contract, batch), precision=precision,
                           preferred_element_type=_preferred(preferred_element_type, a),
                           out_sharding=out_sharding)


# dtypes BLAS multiplies in directly, as dot_general's NumPy implementation would
_BLAS_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64,
                                              np.complex128))


def _eager_blas(numpy_fun, a, b, max_rank_b):
    """``numpy_fun(a, b)`` as an Array when both are concrete Arrays of one BLAS dtype (and
    weak type) outside any transformation: what the dot_general primitive would compute,
    in one NumPy call. None otherwise (the caller takes the general path)."""
    values = eager_values_of_one_type(a, b)
    if values is None or a._aval.dtype not in _BLAS_DTYPES:
        return None
    x, y = values
    if x.ndim == 0 or y.ndim == 0 or (max_rank_b is not None and y.ndim > max_rank_b):
        return None
    try:
        out = np.asarray(numpy_fun(x, y))
    except ValueError:  # mismatched shapes: the general path raises JAX's TypeError
        return None
    return Array._from_numpy(out, ShapedArray(out.shape, out.dtype, a._aval.weak_type))


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's ``dot``: contract the last axis of ``a`` with the second-to-last of ``b``
    (its only axis when 1-D); a scalar operand multiplies.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.dot(jnp.array([1., 2.]), jnp.array([3., 4.]))
    Array(11., dtype=float32)
    """
    check_arraylike("dot", a, b)
    check_out_sharding(out_sharding, "jnp.dot")
    if preferred_element_type is None and out_sharding is None:
        out = _eager_blas(np.dot, a, b, max_rank_b=2)
        if out is not None:
            return out
    a, b = promote_dtypes(a, b)
    rank_a, rank_b = len(_shape(a)), len(_shape(b))
    if rank_a == 0 or rank_b == 0:  # an outer product (no contraction), as JAX binds it
        return _dot_general(a, b, ((), ()), ((), ()), precision, preferred_element_type)
    contract = ((rank_a - 1,), (0 if rank_b == 1 else rank_b - 2,))
    return _dot_general(a, b, contract, ((), ()), precision, preferred_element_type,
                        out_sharding)


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Matrix product with NumPy's rules: batch dims broadcast, 1-D operands are promoted
    to matrices and their dim removed from the result.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.matmul(jnp.ones((2, 3)), jnp.ones(3))
    Array([3., 3.], dtype=float32)
    """
    check_arraylike("matmul", a, b)
    check_out_sharding(out_sharding, "jnp.matmul")
    for i, x in enumerate((a, b)):
        if np.ndim(x) == 0:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                             "ndim 0")
    if preferred_element_type is None and out_sharding is None:
        out = _eager_blas(np.matmul, a, b, max_rank_b=None)
        if out is not None:
            return out
    a, b = promote_dtypes(a, b)
    a_vec = len(_shape(a)) == 1
    if len(_shape(b)) <= 2:
        # No batch dims on b: one contraction gives a's batch and rows, then b's columns.
        contract = ((len(_shape(a)) - 1,), (0,))
        return _dot_general(a, b, contract, ((), ()), precision, preferred_element_type,
                            out_sharding)
    if a_vec:
        a = _reshape(a, (1,) + _shape(a))
    batch = broadcast_shapes(_shape(a)[:-2], _shape(b)[:-2])
    a = broadcast_to(a, batch + _shape(a)[-2:])
    b = broadcast_to(b, batch + _shape(b)[-2:])
    nb = len(batch)
    dims = tuple(range(nb))
    out = _dot_general(a, b, ((nb + 1,), (nb,)), (dims, dims), precision,
                       preferred_element_type, None if a_vec else out_sharding)
    if a_vec:
        out = lax.squeeze(out, (nb,))
    return out


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating ``a`` first."""
    check_arraylike("vdot", a, b)
    a, b = promote_dtypes(a, b)
    if dtypes.is_complex(aval_of(a).dtype):
        a = conjugate(a)
    return dot(ravel(a), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """Vector dot product along ``axis`` (conjugating ``x1``), broadcasting the rest."""
    check_arraylike("vecdot", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    x1, x2 = broadcast_arrays(x1, x2)
    axis = canonicalize_axis(axis, len(_shape(x1)))
    x1, x2 = moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)
    if dtypes.is_complex(aval_of(x1).dtype):
        x1 = conjugate(x1)
    nb = len(_shape(x1)) - 1
    dims = tuple(range(nb))
    return _dot_general(x1, x2, ((nb,), (nb,)), (dims, dims), precision,
                        preferred_element_type)


def outer(a, b, out=None):
    """Outer product of the flattened arrays."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    check_arraylike("outer", a, b)
    a, b = promote_dtypes(a, b)
    a, b = ravel(a), ravel(b)
    n, m = _shape(a)[0], _shape(b)[0]
    return multiply(lax.broadcast_in_dim(a, (n, 1), (0,)), lax.broadcast_in_dim(b, (1, m), (1,)))


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Contract the last axes of ``a`` and ``b``."""
    check_arraylike("inner", a, b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return multiply(a, b)
    return tensordot(a, b, (-1, -1), precision=precision,
                     preferred_element_type=preferred_element_type)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
              out_sharding=None):
    """Contract ``axes`` of ``a`` with ``axes`` of ``b``: an int ``n`` means the last ``n``
    of ``a`` with the first ``n`` of ``b``; a pair gives the axes of each."""
    check_arraylike("tensordot", a, b)
    check_out_sharding(out_sharding, "jnp.tensordot")
    a, b = promote_dtypes(a, b)
    rank_a, rank_b = len(_shape(a)), len(_shape(b))
    if isinstance(axes, (tuple, list)) and len(axes) == 2:
        ax_a, ax_b = axes
        ax_a = [ax_a] if np.ndim(ax_a) == 0 else list(ax_a)
        ax_b = [ax_b] if np.ndim(ax_b) == 0 else list(ax_b)
        if len(ax_a) != len(ax_b):
            raise TypeError("tensordot requires axes lists to have equal length, got "
                            f"{ax_a} and {ax_b}.")
        ax_a = tuple(canonicalize_axis(x, rank_a) for x in ax_a)
        ax_b = tuple(canonicalize_axis(x, rank_b) for x in ax_b)
    else:
        n = operator.index(axes)
        if n > min(rank_a, rank_b) or n < 0:
            raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks "
                            f"({rank_a} and {rank_b})")
        ax_a, ax_b = tuple(range(rank_a - n, rank_a)), tuple(range(n))
    return _dot_general(a, b, (ax_a, ax_b), ((), ()), precision, preferred_element_type,
                        out_sharding)


@jit_when_staged()
def kron(a, b):
    """Kronecker product: blocks ``a[i, j] * b``."""
    check_arraylike("kron", a, b)
    a, b = promote_dtypes(a, b)
    rank = max(len(_shape(a)), len(_shape(b)))
    a = _reshape(a, (1,) * (rank - len(_shape(a))) + _shape(a))
    b = _reshape(b, (1,) * (rank - len(_shape(b))) + _shape(b))
    shape_a, shape_b = _shape(a), _shape(b)
    a_dims = tuple(range(0, 2 * rank, 2))
    b_dims = tuple(range(1, 2 * rank, 2))
    interleaved = tuple(d for pair in zip(shape_a, shape_b, strict=True) for d in pair)
    # lax.mul, as JAX's kron: booleans are refused (TypeError), not multiplied as logical and
    out = lax.mul(lax.broadcast_in_dim(a, interleaved, a_dims),
                  lax.broadcast_in_dim(b, interleaved, b_dims))
    return _reshape(out, tuple(x * y for x, y in zip(shape_a, shape_b, strict=True)))


@jit_when_staged(static_argnames=('axisa', 'axisb', 'axisc', 'axis'))
def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis=None):
    """Cross product of (arrays of) 2- or 3-vectors."""
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote_dtypes(a, b)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if _shape(a)[-1] not in (2, 3) or _shape(b)[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if _shape(a)[-1] == 2 and _shape(b)[-1] == 2:
        return subtract(multiply(a[..., 0], b[..., 1]), multiply(a[..., 1], b[..., 0]))
    zero = multiply(a[..., 0], 0)
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2] if _shape(a)[-1] == 3 else zero
    b0, b1 = b[..., 0], b[..., 1]
    b2 = b[..., 2] if _shape(b)[-1] == 3 else multiply(b[..., 0], 0)
    c = [subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0),
                                                                 multiply(a0, b2)),
         subtract(multiply(a0, b1), multiply(a1, b0))]
    c = broadcast_arrays(*c)
    return moveaxis(stack(c, -1), -1, axisc)


# --------------------------------------------------------------------------------------------
# convolution


def _conv1d(op, a, v, mode, precision, preferred_element_type):
    check_arraylike(op, a, v)
    if np.ndim(a) != 1 or np.ndim(v) != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if np.size(a) == 0 or np.size(v) == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {np.shape(a)} and "
                         f"{np.shape(v)}.")
    a, v = promote_args_inexact(op, a, v)
    reverse_out = False
    if op == "correlate":
        if dtypes.is_complex(aval_of(v).dtype):
            v = conjugate(v)
        if _shape(a)[0] < _shape(v)[0]:
            a, v, reverse_out = v, a, True
    else:
        if _shape(a)[0] < _shape(v)[0]:
            a, v = v, a
        v = flip(v)
    m = _shape(v)[0]
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(m // 2, m - m // 2 - 1)]
    elif mode == "full":
        padding = [(m - 1, m - 1)]
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    n = _shape(a)[0]
    lhs = lax.reshape(a, (1, 1, n))
    rhs = lax.reshape(v, (1, 1, m))
    kwargs = {"precision": precision}
    if preferred_element_type is not None:
        kwargs["preferred_element_type"] = preferred_element_type
    out = lax.conv_general_dilated(lhs, rhs, (1,), padding, **kwargs)
    out = lax.reshape(out, (_shape(out)[-1],))
    return flip(out) if reverse_out else out


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-D arrays (as ``numpy.convolve``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.convolve(jnp.array([1, 2, 1]), jnp.ones(3))
    Array([1., 3., 4., 3., 1.], dtype=float32)
    """
    return _conv1d("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-D arrays (as ``numpy.correlate``)."""
    return _conv1d("correlate", a, v, mode, precision, preferred_element_type)


__all__ = ["dot", "matmul", "vdot", "vecdot", "outer", "inner", "tensordot", "kron", "cross",
           "convolve", "correlate"]
