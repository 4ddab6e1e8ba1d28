"""``lax.map``: a function mapped over the leading axis with a ``scan`` (optionally in
vmapped batches)."""

from __future__ import annotations

from xjax._src.core.ad_util import get_aval
from xjax._src.core.pytree import tree_flatten, tree_map, tree_unflatten
from xjax._src.lax.operands import to_operand
from xjax._src.lax.concat_pad import concatenate
from xjax._src.lax.shape import reshape
from xjax._src.lax.slicing import slice_in_dim
from xjax._src.higher_order.scan import scan
from xjax._src.transformations.vmap import vmap


def map(f, xs, *, batch_size=None):  # noqa: A001  (JAX's name)
    """Apply ``f`` to each slice of ``xs`` along its leading axis, stacking the results.

    A ``scan`` runs the slices one after another; with ``batch_size`` it runs ``vmap(f)``
    on batches of that many slices (a remainder batch runs after the scan).

    Parameters
    ----------
    f : callable
        Applied to one slice (a pytree like ``xs`` without the leading axis).
    xs : pytree of arrays
    batch_size : int, optional

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax import lax
    >>> lax.map(lambda x: x * 2, jnp.arange(3))
    Array([0, 2, 4], dtype=int32)
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    scan_xs, remainder_xs = _batch_and_remainder(xs, batch_size)
    scan_ys = None
    if scan_xs is not None:
        _, scan_ys = scan(lambda _, x: ((), vmap(f)(x)), (), scan_xs)

    def flatten(y):
        shape = get_aval(y).shape
        return reshape(y, (shape[0] * shape[1], *shape[2:]))

    if scan_ys is None:
        return vmap(f)(remainder_xs)
    if remainder_xs is None:
        return tree_map(flatten, scan_ys)
    remainder_ys = vmap(f)(remainder_xs)
    return tree_map(lambda y, r: concatenate([flatten(y), r], 0), scan_ys, remainder_ys)


def _batch_and_remainder(xs, batch_size):
    """(xs reshaped to [batches, batch_size, ...] or None, the remaining slices or None)."""
    leaves, tree = tree_flatten(xs)
    if not leaves:
        return xs, None
    leaves = [to_operand(x) for x in leaves]
    n = get_aval(leaves[0]).shape[0]
    n_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
    used = n_batches * batch_size

    def batched(x):
        shape = get_aval(x).shape
        return reshape(slice_in_dim(x, 0, used), (n_batches, batch_size, *shape[1:]))

    def rest(x):
        return slice_in_dim(x, used, n)

    if n_batches == 0:
        return None, tree_unflatten(tree, [rest(x) for x in leaves])
    if remainder:
        return (tree_unflatten(tree, [batched(x) for x in leaves]),
                tree_unflatten(tree, [rest(x) for x in leaves]))
    return tree_unflatten(tree, [batched(x) for x in leaves]), None
