"""``xjax.experimental.pjit``: the deprecated ``pjit``, ``jit`` with shardings.

As in JAX 0.10.2, reading ``pjit`` from this module warns ``DeprecationWarning`` (use
``xjax.jit``). xjax keeps every array whole on its one device, so ``in_shardings`` and
``out_shardings`` are validated (types, tree structure, shapes they must divide, a mesh for
PartitionSpecs) and then only place values, as ``device_put`` does.
"""

from __future__ import annotations

import warnings

from xjax._src.transformations.jit import _as_tuple, jit
from xjax._src.transformations.jit_shardings import UNSPECIFIED


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
        As ``xjax.jit``.

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
    return jit(fun, in_shardings=in_shardings, out_shardings=out_shardings,
               static_argnums=_as_tuple(static_argnums),
               static_argnames=_as_tuple(static_argnames),
               donate_argnums=_as_tuple(donate_argnums),
               donate_argnames=_as_tuple(donate_argnames), keep_unused=keep_unused,
               device=device, backend=backend, inline=inline, compiler_options=compiler_options)


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
