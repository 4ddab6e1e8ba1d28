"""``xjax.experimental.pjit``: the deprecated ``pjit``, ``jit`` with shardings.

As in JAX 0.10.2, reading ``pjit`` from this module warns ``DeprecationWarning`` (use
``xjax.jit``). xjax keeps every array whole on its one device, so ``in_shardings`` and
``out_shardings`` are validated (types, tree structure, shapes they must divide, a mesh for
PartitionSpecs) and then only place values, as ``device_put`` does.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from xjax._src.core.pytree import tree_flatten, tree_unflatten
from xjax._src.core.sharding_types import NamedSharding, PartitionSpec, Sharding, get_mesh
from xjax._src.transformations.jit import _as_tuple, _resolve_static, _signature, jit, device_put


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


def _check_shapes(kind, values, shardings):
    for value, s in zip(values, shardings, strict=True):
        if isinstance(s, NamedSharding):
            try:
                s.check_compatible_shape(np.shape(value))
            except ValueError as e:
                raise ValueError(f"One of pjit {kind} is incompatible with its sharding "
                                 f"annotation {s}: {e}") from None


def _place(values, shardings):
    return [v if s is None else device_put(v, s) for v, s in zip(values, shardings)]


class _PjitFunction:
    """A ``jit``-compiled function whose arguments and results are checked against and
    placed by the given shardings."""

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

    def __call__(self, *args, **kwargs):
        args = list(args)
        if not isinstance(self._in_shardings, _Unspecified):
            if kwargs:
                raise ValueError("pjit does not support kwargs when in_shardings is "
                                 "specified.")
            positions = self._dynamic_positions(len(args))
            dynamic = tuple(args[i] for i in positions)
            flat, tree = tree_flatten(dynamic)
            shardings = _flat_shardings("in_shardings", self._in_shardings, dynamic,
                                        "positional arguments tuple")
            _check_shapes("arguments", flat, shardings)
            placed = tree_unflatten(tree, _place(flat, shardings))
            for i, value in zip(positions, placed):
                args[i] = value
        out = self._jitted(*args, **kwargs)
        if isinstance(self._out_shardings, _Unspecified):
            return out
        flat, tree = tree_flatten(out)
        shardings = _flat_shardings("out_shardings", self._out_shardings, out, "outputs")
        _check_shapes("outputs", flat, shardings)
        return tree_unflatten(tree, _place(flat, shardings))


def _pjit(fun, in_shardings=UNSPECIFIED, out_shardings=UNSPECIFIED, static_argnums=None,
          static_argnames=None, donate_argnums=None, donate_argnames=None, keep_unused=False,
          device=None, backend=None, inline=False, compiler_options=None):
    """``jit`` with ``in_shardings``/``out_shardings`` (deprecated in JAX: use ``jit``).

    Parameters
    ----------
    fun : callable
    in_shardings : Sharding, PartitionSpec, None or a pytree prefix of the positional
        (non-static) arguments of them
        PartitionSpecs need a mesh set with ``xjax.set_mesh``.
    out_shardings : the same, for the outputs
    static_argnums, static_argnames, donate_argnums, donate_argnames, keep_unused, device,
    backend, inline
        As ``xjax.jit``.
    compiler_options : dict, optional
        Accepted and ignored (xjax passes no per-function XLA options).

    Raises
    ------
    TypeError
        For sharding leaves that are not Shardings, PartitionSpecs or None.
    ValueError
        For shardings that are not a prefix of the arguments/outputs, shapes they do not
        divide, or keyword arguments together with ``in_shardings``.
    RuntimeError
        For PartitionSpecs with no mesh set.

    Examples
    --------
    >>> import numpy as np, xjax, xjax.numpy as jnp
    >>> from xjax.sharding import Mesh, NamedSharding, PartitionSpec as P
    >>> from xjax.experimental.pjit import pjit  # warns DeprecationWarning
    >>> mesh = Mesh(np.array(xjax.devices()), ('x',))
    >>> f = pjit(lambda x: x * 2, in_shardings=NamedSharding(mesh, P('x')))
    >>> f(jnp.arange(2.))
    Array([0., 2.], dtype=float32)
    """
    del compiler_options
    _check_leaf_types("in_shardings", in_shardings)
    _check_leaf_types("out_shardings", out_shardings)
    jitted = jit(fun, static_argnums=_as_tuple(static_argnums),
                 static_argnames=_as_tuple(static_argnames),
                 donate_argnums=_as_tuple(donate_argnums),
                 donate_argnames=_as_tuple(donate_argnames), keep_unused=keep_unused,
                 device=device, backend=backend, inline=inline)
    static_nums, _ = _resolve_static(_signature(fun), _as_tuple(static_argnums),
                                     _as_tuple(static_argnames))
    return _PjitFunction(fun, jitted, in_shardings, out_shardings, static_nums)


_DEPRECATED = {
    "pjit": ("jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead.",
             _pjit),
}


def __getattr__(name):
    if name in _DEPRECATED:
        message, value = _DEPRECATED[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
