"""``lax.associative_scan``: a parallel prefix scan of an associative function (the
odd/even recursion of Blelloch's scan), built from strided slices, pads and concatenation."""

from __future__ import annotations

from xjax._src.core.ad_util import get_aval
from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.lax.operands import to_operand
from xjax._src.lax.bitwise import bitwise_or
from xjax._src.lax.elementwise import add
from xjax._src.lax.concat_pad import concatenate, pad
from xjax._src.lax.shape import rev
from xjax._src.lax.slicing import slice_in_dim


def associative_scan(fn, elems, reverse=False, axis=0):
    """Inclusive scan of ``elems`` along ``axis`` with the associative ``fn``.

    ``fn(a, b)`` combines two pytrees like ``elems`` (batched along ``axis``) elementwise.
    The result equals ``[e0, fn(e0, e1), fn(fn(e0, e1), e2), ...]`` computed in
    ``O(log n)`` rounds.

    Parameters
    ----------
    fn : callable
    elems : pytree of arrays with equal sizes along ``axis``
    reverse : bool
        Scan from the end.
    axis : int

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.associative_scan(jnp.add, jnp.arange(5))
    Array([ 0,  1,  3,  6, 10], dtype=int32)
    """
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    flat, tree = tree_flatten(elems)
    flat = [to_operand(x) for x in flat]
    if not flat:
        return elems
    ndim = len(get_aval(flat[0]).shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    axis = axis % ndim
    if reverse:
        flat = [rev(x, (axis,)) for x in flat]
    sizes = [get_aval(x).shape[axis] for x in flat]
    if any(n != sizes[0] for n in sizes):
        raise ValueError("Array inputs to associative_scan must have the same first "
                         f"dimension. (saw: {[get_aval(x).shape for x in flat]})")

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        out_flat, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise ValueError(f"fn output tree {out_tree} must match the input tree {tree}")
        return [to_operand(x) for x in out_flat]

    result = _scan(combine, flat, axis)
    if reverse:
        result = [rev(x, (axis,)) for x in result]
    return tree_unflatten(tree, result)


def _scan(combine, elems, axis):
    n = get_aval(elems[0]).shape[axis]
    if n < 2:
        return elems
    # Combine neighbouring pairs, scan the half-size result: the odd positions.
    reduced = combine([slice_in_dim(e, 0, n - 1, 2, axis) for e in elems],
                      [slice_in_dim(e, 1, n, 2, axis) for e in elems])
    odd = _scan(combine, reduced, axis)
    # The even positions (after the first) combine the odd prefix before them.
    n_odd = get_aval(odd[0]).shape[axis]
    odd_before = odd if n % 2 else [slice_in_dim(o, 0, n_odd - 1, 1, axis) for o in odd]
    even = combine(odd_before, [slice_in_dim(e, 2, n, 2, axis) for e in elems])
    even = [concatenate([slice_in_dim(e, 0, 1, 1, axis), r], axis)
            for e, r in zip(elems, even, strict=True)]
    return [_interleave(a, b, axis) for a, b in zip(even, odd, strict=True)]


def _interleave(a, b, axis):
    """``[a0, b0, a1, b1, ...]`` along ``axis`` (``a`` as long as ``b`` or one longer), by
    padding each with zeros between elements and adding."""
    import numpy as np

    a_aval, b_aval = get_aval(a), get_aval(b)
    same = a_aval.shape[axis] == b_aval.shape[axis]
    zero = np.zeros((), a_aval.dtype)
    a_config = [(0, 0, 0)] * len(a_aval.shape)
    b_config = [(0, 0, 0)] * len(b_aval.shape)
    a_config[axis] = (0, 1 if same else 0, 1)
    b_config[axis] = (1, 0 if same else 1, 1)
    combine = bitwise_or if a_aval.dtype == np.bool_ else add
    return combine(pad(a, zero, a_config), pad(b, zero, b_config))
