"""``jit`` with ``in_shardings``/``out_shardings``.

The shardings are validated (types, tree structure, shapes they must divide, a mesh for
PartitionSpecs). Arguments are placed by them before the call, as ``device_put`` does; a
program over several devices gets the ``out_shardings`` over its mesh as its result
shardings (``jit_partitioned``), and every result is then placed by them (a no-op where
the program already produced that sharding).
"""

from __future__ import annotations

import functools

import numpy as np

from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.sharding_types import NamedSharding, PartitionSpec, Sharding, get_mesh
from xjax._src.transformations import jit as jit_module  # device_put; jit imports this module


class _Unspecified:
    def __repr__(self):
        return "UnspecifiedValue"


UNSPECIFIED = _Unspecified()


def _is_spec_leaf(s):
    return s is None or isinstance(s, (Sharding, PartitionSpec, _Unspecified))


def _check_leaf_types(what, shardings):
    for s in tree_flatten(shardings, is_leaf=_is_spec_leaf)[0]:
        if not _is_spec_leaf(s):
            raise TypeError(f"{what} leaf specifications are expected to be PartitionSpec "
                            f"instances or None, but got {s}")


def _resolve(what, s):
    """A leaf of ``in_shardings``/``out_shardings`` as a Sharding, or None (unconstrained)."""
    if s is None or isinstance(s, _Unspecified):
        return None
    if isinstance(s, PartitionSpec):
        mesh = get_mesh()
        if mesh.empty:
            raise RuntimeError(
                f"pjit requires a non-empty mesh in context if you are passing "
                f"`PartitionSpec`s to {what}. You can define a context mesh via "
                "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to "
                f"{what} and then the mesh context manager is not required.")
        return NamedSharding(mesh, s)
    return s


def _flat_shardings(what, shardings, tree_value, tree_name):
    """One Sharding (or None) per leaf of ``tree_value``; ``shardings`` is a prefix."""
    leaves, prefix = tree_flatten(shardings, is_leaf=_is_spec_leaf)
    try:
        subtrees = prefix.flatten_up_to(tree_value)
    except (ValueError, TypeError) as e:
        raise ValueError(f"pjit {what} specification must be a tree prefix of the "
                         f"{tree_name}: got {shardings!r} for {tree_flatten(tree_value)[1]}"
                         f" ({e})") from None
    flat = []
    for leaf, sub in zip(leaves, subtrees, strict=True):
        flat.extend([_resolve(what, leaf)] * len(tree_flatten(sub)[0]))
    return flat


def has_multi_device(shardings) -> bool:
    """Whether a pytree of shardings holds a Sharding over several devices."""
    if isinstance(shardings, _Unspecified) or shardings is None:
        return False
    return any(isinstance(s, Sharding) and len(s.device_set) > 1
               for s in tree_flatten(shardings, is_leaf=_is_spec_leaf)[0])


def flat_out_shardings(out_shardings, out_tree):
    """One Sharding (or None) per result leaf of a traced call with output ``out_tree``;
    None for all when ``out_shardings`` is not a prefix of it (the call's placement then
    raises JAX's error)."""
    value = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
    try:
        return tuple(_flat_shardings("out_shardings", out_shardings, value, "outputs"))
    except (ValueError, RuntimeError):
        return None


def _check_shapes(kind, values, shardings):
    for value, s in zip(values, shardings, strict=True):
        if isinstance(s, NamedSharding):
            try:
                s.check_compatible_shape(np.shape(value))
            except ValueError as e:
                raise ValueError(f"One of pjit {kind} is incompatible with its sharding "
                                 f"annotation {s}: {e}") from None


def _place(values, shardings):
    return [v if s is None else jit_module.device_put(v, s)
            for v, s in zip(values, shardings)]


def _abstract_place(values, shardings):
    """What ``_place`` would give, as ``ShapeDtypeStruct``s carrying the shardings."""
    out = []
    for v, s in zip(values, shardings, strict=True):
        if s is None:
            out.append(v)
        else:
            aval = jit_module.shaped_abstractify(v)
            out.append(jit_module.ShapeDtypeStruct(aval.shape, aval.dtype, aval.weak_type,
                                                   sharding=s))
    return out


class ShardedPjitFunction:
    """A ``jit``-compiled function whose arguments and results are checked against and
    placed by the given shardings (``jit(f, in_shardings=..., out_shardings=...)``)."""

    def __init__(self, fun, jitted, in_shardings, out_shardings, static_argnums):
        functools.update_wrapper(self, fun)
        self._jitted = jitted
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._static_argnums = static_argnums

    def __getattr__(self, name):  # lower, trace, eval_shape, clear_cache... of the jit
        return getattr(self._jitted, name)

    def _dynamic_positions(self, n_args):
        return [i for i in range(n_args) if i not in self._static_argnums]

    def _laid_out(self, args, kwargs, place) -> list:
        """``args`` with their leaves laid out by ``in_shardings``: ``place(values,
        shardings)`` gives the new leaves."""
        args = list(args)
        # A top-level None constrains nothing, so keyword arguments are allowed (as in JAX).
        if not isinstance(self._in_shardings, _Unspecified) and self._in_shardings is not None:
            if kwargs:
                raise ValueError("pjit does not support kwargs when in_shardings is "
                                 "specified.")
            positions = self._dynamic_positions(len(args))
            dynamic = tuple(args[i] for i in positions)
            flat, tree = tree_flatten(dynamic)
            shardings = _flat_shardings("in_shardings", self._in_shardings, dynamic,
                                        "positional arguments tuple")
            _check_shapes("arguments", flat, shardings)
            placed = tree_unflatten(tree, place(flat, shardings))
            for i, value in zip(positions, placed):
                args[i] = value
        return args

    def lower(self, *args, **kwargs):
        """Lower for these arguments laid out by ``in_shardings`` (abstractly: nothing is
        placed); the module carries the argument shardings, as JAX's does."""
        return self._jitted.lower(*self._laid_out(args, kwargs, _abstract_place), **kwargs)

    def __call__(self, *args, **kwargs):
        args = self._laid_out(args, kwargs, _place)
        out = self._jitted(*args, **kwargs)
        if isinstance(self._out_shardings, _Unspecified) or self._out_shardings is None:
            return out
        flat, tree = tree_flatten(out)
        shardings = _flat_shardings("out_shardings", self._out_shardings, out, "outputs")
        _check_shapes("outputs", flat, shardings)
        return tree_unflatten(tree, _place(flat, shardings))


def sharded(fun, jitted, in_shardings, out_shardings, static_argnums):
    """``jitted`` (``jit(fun)``) checking and placing by the given shardings.

    Raises
    ------
    TypeError
        For sharding leaves that are not Shardings, PartitionSpecs or None.
    """
    _check_leaf_types("in_shardings", in_shardings)
    _check_leaf_types("out_shardings", out_shardings)
    return ShardedPjitFunction(fun, jitted, in_shardings, out_shardings, static_argnums)
