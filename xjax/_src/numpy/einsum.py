"""``einsum`` and ``einsum_path``: opt_einsum chooses the contraction order; each step
becomes lax operations as in JAX: diagonals of repeated indices (iota masks and a sum),
sums over indices no other operand or the result needs, then one ``dot_general`` with the
shared result indices as batch dimensions, and a transpose into the step's result order.
"""

from __future__ import annotations

import numpy as np
import opt_einsum

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.core.out_sharding import check_out_sharding
from xjax._src.core.sharding_types import NamedSharding, PartitionSpec
from xjax._src.numpy._promotion import (aval_of, check_arraylike, convert_element_type,
                                        promote_dtypes, to_jax)


def _shape(x):
    return tuple(aval_of(x).shape)


class _ShapeOnly:
    """What opt_einsum needs of an operand to plan a path: its shape."""

    def __init__(self, shape):
        self.shape = tuple(shape)
        self.ndim = len(self.shape)


def _plan(subscripts, operands, optimize):
    """opt_einsum's contraction list for ``operands`` (arrays, tracers or Python scalars)."""
    if optimize is True:
        optimize = "greedy"
    elif optimize is False:
        # left to right, one pair at a time
        optimize = [(0, 1)] * (len(operands) - 1) if len(operands) > 1 else [(0,)]
    shaped = [_ShapeOnly(_shape(o)) for o in operands]
    args = (subscripts, *shaped) if isinstance(subscripts, str) else _interleaved(
        subscripts, shaped)
    _, contractions = opt_einsum.contract_path(*args, einsum_call=True, use_blas=True,
                                               optimize=optimize)
    return contractions


def _interleaved(first, shaped):
    """Arguments in NumPy's interleaved form ``(op0, sub0, op1, sub1, ..., [out])`` with
    the operands replaced by shapes."""
    raise NotImplementedError("einsum's interleaved operand/sublist form is not supported; "
                              "pass a subscripts string")


def _diagonal(x, names):
    """``x`` reduced to one axis per distinct index name: repeated names keep only their
    diagonal (an iota mask), then all but the first copy are summed away."""
    while True:
        repeated = next((c for c in names if names.count(c) > 1), None)
        if repeated is None:
            return x, names
        axes = [i for i, c in enumerate(names) if c == repeated]
        shape = _shape(x)
        first = lax.broadcasted_iota(np.uint32, shape, axes[0])
        on_diagonal = None
        for axis in axes[1:]:
            same = lax.eq(first, lax.broadcasted_iota(np.uint32, shape, axis))
            on_diagonal = same if on_diagonal is None else lax.bitwise_and(on_diagonal, same)
        zeros = lax.full(shape, 0, aval_of(x).dtype)
        x = lax.reduce_sum(lax.select_n(on_diagonal, zeros, x), tuple(axes[1:]))
        names = "".join(c for i, c in enumerate(names) if i not in axes[1:])


def _sum_out(x, names, keep):
    """Sum the axes whose names are not in ``keep``."""
    axes = tuple(i for i, c in enumerate(names) if c not in keep)
    if not axes:
        return x, names
    return lax.reduce_sum(x, axes), "".join(c for c in names if c in keep)


def _transpose_to(x, names, result):
    if names == result:
        return x
    return lax.transpose(x, tuple(names.index(c) for c in result))


def _unary(x, names, result):
    x, names = _diagonal(x, names)
    x, names = _sum_out(x, names, set(result))
    return _transpose_to(x, names, result)


def _broadcast_ones(lhs, lhs_names, rhs, rhs_names, shared):
    """Size-1 dimensions that broadcast against the other operand's (from ``...``)
    expanded to its size, so dot_general sees matching dimensions."""
    lhs_shape, rhs_shape = list(_shape(lhs)), list(_shape(rhs))
    for c in shared:
        i, j = lhs_names.index(c), rhs_names.index(c)
        if lhs_shape[i] == 1 and rhs_shape[j] != 1:
            lhs_shape[i] = rhs_shape[j]
        elif rhs_shape[j] == 1 and lhs_shape[i] != 1:
            rhs_shape[j] = lhs_shape[i]
    if tuple(lhs_shape) != _shape(lhs):
        lhs = lax.broadcast_in_dim(lhs, tuple(lhs_shape), tuple(range(len(lhs_shape))))
    if tuple(rhs_shape) != _shape(rhs):
        rhs = lax.broadcast_in_dim(rhs, tuple(rhs_shape), tuple(range(len(rhs_shape))))
    return lhs, rhs


def _binary(lhs, lhs_names, rhs, rhs_names, result, precision, preferred_element_type,
            out_sharding=None):
    """One contraction; ``out_sharding`` (a NamedSharding of the ``result`` layout, for the
    last step) is given to ``dot_general`` in its own dimension order."""
    lhs, lhs_names = _diagonal(lhs, lhs_names)
    rhs, rhs_names = _diagonal(rhs, rhs_names)
    # indices only one side has and the result does not need: sum them first
    lhs, lhs_names = _sum_out(lhs, lhs_names, set(rhs_names) | set(result))
    rhs, rhs_names = _sum_out(rhs, rhs_names, set(lhs_names) | set(result))
    shared = [c for c in lhs_names if c in rhs_names]
    lhs, rhs = _broadcast_ones(lhs, lhs_names, rhs, rhs_names, shared)
    batch = [c for c in shared if c in result]
    contracted = [c for c in shared if c not in result]
    dimension_numbers = (
        (tuple(lhs_names.index(c) for c in contracted),
         tuple(rhs_names.index(c) for c in contracted)),
        (tuple(lhs_names.index(c) for c in batch), tuple(rhs_names.index(c) for c in batch)))
    names = "".join(batch) + "".join(c for c in lhs_names if c not in shared) + \
        "".join(c for c in rhs_names if c not in shared)
    if out_sharding is not None:
        spec = tuple(out_sharding.spec) + (None,) * (len(result) - len(out_sharding.spec))
        out_sharding = NamedSharding(out_sharding.mesh,
                                     PartitionSpec(*(spec[result.index(c)] for c in names)))
    out = lax.dot_general(lhs, rhs, dimension_numbers, precision=precision,
                          preferred_element_type=preferred_element_type,
                          out_sharding=out_sharding)
    return _transpose_to(out, names, result)


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=None, out_sharding=None):
    """Einstein summation: ``jnp.einsum('ij,jk->ik', a, b)`` is ``a @ b``.

    Parameters
    ----------
    subscripts : str
        Index names per operand, separated by commas, optionally ``->`` and the result's
        (``...`` for broadcast dimensions).
    *operands : array_like
    optimize : str, bool or list
        opt_einsum's path strategy (``'auto'``, ``'greedy'``, ``'optimal'``, ...) or an
        explicit path; ``False`` contracts left to right.
    precision, preferred_element_type :
        Passed to ``lax.dot_general`` (the result has ``preferred_element_type``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.einsum('ij,j->i', jnp.ones((2, 3)), jnp.arange(3.))
    Array([3., 3.], dtype=float32)
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    check_arraylike("einsum", *operands)
    arrays = promote_dtypes(*[to_jax(o) for o in operands])
    if preferred_element_type is None:  # JAX passes the operands' dtype to dot_general
        result_dtype = aval_of(arrays[0]).dtype if arrays else None
        preferred_element_type = result_dtype
    else:
        preferred_element_type = dtypes.check_and_canonicalize_user_dtype(
            preferred_element_type, "einsum")
        result_dtype = preferred_element_type
    out_sharding = check_out_sharding(out_sharding, "einsum")
    contractions = _plan(subscripts, arrays, optimize)
    arrays = list(arrays)
    for positions, _, step, _, _ in contractions:
        inputs, result = step.split("->")
        names = inputs.split(",")
        picked = [arrays.pop(i) for i in sorted(positions, reverse=True)]
        # opt_einsum lists positions in the order the step's subscripts name them
        by_position = dict(zip(sorted(positions, reverse=True), picked, strict=True))
        step_operands = [by_position[i] for i in positions]
        if len(step_operands) == 1:
            value = _unary(step_operands[0], names[0], result)
        elif len(step_operands) == 2:
            last = len(arrays) == 0 and out_sharding is not None
            value = _binary(step_operands[0], names[0], step_operands[1], names[1], result,
                            precision, preferred_element_type, out_sharding if last else None)
        else:
            raise NotImplementedError("einsum steps of more than two operands")
        arrays.append(value)
    (value,) = arrays
    if result_dtype is not None and aval_of(value).dtype != result_dtype:
        value = convert_element_type(value, result_dtype)
    return value


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """opt_einsum's contraction path for the einsum and a report of its cost.

    Returns
    -------
    (path, info) : the list of contracted operand positions per step, and a PathInfo
    """
    check_arraylike("einsum_path", *operands)
    shaped = [np.broadcast_to(np.zeros((), np.float32), _shape(to_jax(o))) for o in operands]
    if optimize is True:
        optimize = "greedy"
    return opt_einsum.contract_path(subscripts, *shaped, optimize=optimize)



__all__ = ["einsum", "einsum_path"]
