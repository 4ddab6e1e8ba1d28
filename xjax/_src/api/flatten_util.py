"""``xjax.flatten_util``: ravel a pytree of arrays into one flat vector and back (mirrors
``jax.flatten_util``).

>>> import xjax.numpy as jnp
>>> from xjax.flatten_util import ravel_pytree
>>> flat, unravel = ravel_pytree({"w": jnp.ones((2, 2)), "b": jnp.zeros(3)})
>>> flat
Array([0., 0., 0., 1., 1., 1., 1.], dtype=float32)
>>> unravel(flat)["w"].shape
(2, 2)
"""

from __future__ import annotations

import math

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.core.pytree import tree_flatten, tree_unflatten

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    """Ravel (flatten) a pytree of arrays and scalars down to one 1-D array.

    Parameters
    ----------
    pytree : pytree
        Arrays and scalars in any pytree structure.

    Returns
    -------
    flat : Array
        The leaves raveled in tree-flatten order and concatenated. Its dtype is the
        promotion (``xjax.numpy.result_type``) of the leaves' dtypes; a pytree without
        leaves gives an empty float32 vector.
    unravel : callable
        Maps a 1-D array of the same length back to a pytree of ``pytree``'s structure and
        leaf shapes. When the leaves had several dtypes, ``unravel`` requires an array of
        ``flat``'s dtype and casts each piece back to its leaf's dtype; when they shared
        one dtype it accepts any dtype and keeps it. ``unravel`` functions of equal
        structures compare and hash equal, so they can be static arguments of ``jit``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> flat, unravel = ravel_pytree((jnp.arange(2), 1.5))
    >>> flat
    Array([0. , 1. , 1.5], dtype=float32)
    >>> unravel(flat)
    (Array([0, 1], dtype=int32), Array(1.5, dtype=float32))
    """
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return lax.full((0,), 0, "float32"), _Unravel(treedef, (), (), None)
    # Python scalars count at their default (canonical) dtype, never weakly: the flat
    # vector's dtype depends on the leaves' dtypes only.
    leaf_dtypes = tuple(dtypes.dtype(leaf, canonicalize=True) for leaf in leaves)
    flat_dtype = dtypes.result_type(*leaf_dtypes)
    shapes = tuple(tuple(_shape(leaf)) for leaf in leaves)
    sizes = tuple(math.prod(shape) for shape in shapes)
    if all(dt == flat_dtype for dt in leaf_dtypes):
        # One dtype: no casts, and unravel keeps whatever dtype it is given.
        pieces = [_ravel(leaf, size) for leaf, size in zip(leaves, sizes, strict=True)]
        return lax.concatenate(pieces, 0), _Unravel(treedef, sizes, shapes, None)
    pieces = [_ravel(lax.convert_element_type(leaf, flat_dtype), size)
              for leaf, size in zip(leaves, sizes, strict=True)]
    unravel = _Unravel(treedef, sizes, shapes, (leaf_dtypes, flat_dtype))
    return lax.concatenate(pieces, 0), unravel


def _ravel(leaf, size):
    # A leaf that is already a vector is used as it is (no reshape in the jaxpr, as JAX).
    if _shape(leaf) == (size,) and hasattr(leaf, "aval"):
        return leaf
    return lax.reshape(leaf, (size,))


def _shape(leaf):
    shape = getattr(leaf, "shape", None)
    return () if shape is None else shape


class _Unravel:
    """The inverse of one ``ravel_pytree`` call: splits a flat vector into the leaves.

    Equal (and equally hashed) for equal tree structures, shapes and dtypes.
    """

    __slots__ = ("treedef", "sizes", "shapes", "casts")

    def __init__(self, treedef, sizes, shapes, casts):
        self.treedef = treedef
        self.sizes = sizes
        self.shapes = shapes
        self.casts = casts  # None, or (the leaves' dtypes, the flat vector's dtype)

    def _key(self):
        return (self.treedef, self.sizes, self.shapes, self.casts)

    def __eq__(self, other):
        return type(other) is _Unravel and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"unravel_pytree({self.treedef})"

    def __call__(self, flat):
        if not self.sizes:
            return tree_unflatten(self.treedef, [])
        if self.casts is None:
            pieces = lax.split(flat, self.sizes)
            leaves = [piece.reshape(shape)
                      for piece, shape in zip(pieces, self.shapes, strict=True)]
            return tree_unflatten(self.treedef, leaves)
        leaf_dtypes, flat_dtype = self.casts
        given = dtypes.dtype(flat)
        if given != flat_dtype:
            raise TypeError(f"unravel function given array of dtype {given}, "
                            f"but expected dtype {flat_dtype}")
        pieces = lax.split(flat, self.sizes)
        # Casting a complex piece back to a real leaf keeps its real part, silently: the
        # leaf was real to begin with.
        leaves = [lax.convert_element_type(piece.reshape(shape), dt)
                  for piece, shape, dt in zip(pieces, self.shapes, leaf_dtypes, strict=True)]
        return tree_unflatten(self.treedef, leaves)
