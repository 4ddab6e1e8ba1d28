"""``xjax.experimental.shard_map``: the legacy ``shard_map(f, mesh, in_specs, out_specs,
check_rep=True)``.

As in JAX 0.10.2 it is kept as a deprecated alias of ``xjax.shard_map``: reading
``shard_map`` from this module warns ``DeprecationWarning``, ``check_rep`` is
``check_vma``, and ``f`` is manual over every mesh axis.
"""

from __future__ import annotations

import warnings
from xjax._src.transformations.shard_map import _shard_map


def _legacy_shard_map(f, mesh, in_specs, out_specs, check_rep=True):
    """Map ``f`` over per-device blocks of its arguments on ``mesh`` (deprecated: use
    ``xjax.shard_map``).

    Parameters
    ----------
    f : callable
    mesh : Mesh
    in_specs, out_specs : PartitionSpec pytrees
        As ``xjax.shard_map``.
    check_rep : bool
        ``xjax.shard_map``'s ``check_vma``: check that outputs whose specs omit a mesh axis
        do not vary along it.

    Examples
    --------
    >>> import numpy as np, xjax, xjax.numpy as jnp
    >>> from xjax.sharding import Mesh, PartitionSpec as P
    >>> from xjax.experimental.shard_map import shard_map  # warns DeprecationWarning
    >>> mesh = Mesh(np.array(xjax.devices()), ('x',))
    >>> g = shard_map(lambda b: xjax.lax.psum(b, 'x'), mesh, P('x'), P('x'))
    >>> g(jnp.arange(2.))
    Array([0., 1.], dtype=float32)
    """
    return _shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs,
                      axis_names=frozenset(), check_vma=check_rep)


_DEPRECATED = {
    "shard_map": ("jax.experimental.shard_map is deprecated in v0.8.0. Used jax.shard_map "
                  "instead.", _legacy_shard_map),
}


def __getattr__(name):
    if name in _DEPRECATED:
        message, value = _DEPRECATED[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
