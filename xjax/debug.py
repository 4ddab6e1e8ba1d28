"""``xjax.debug``: printing and callbacks for debugging.

Eagerly these run at once. Inside ``jit`` (and other staging transformations) they need
host callbacks from compiled code, which xjax does not support yet: they raise
NotImplementedError instead of printing tracers or printing once at trace time.
"""

from __future__ import annotations

import numpy as np

from xjax.core.pytree import tree_leaves, tree_map
from xjax.core.trace import Tracer


def _check_concrete(args, what):
    for leaf in tree_leaves(args):
        if isinstance(leaf, Tracer) and leaf.to_concrete_value() is None:
            raise NotImplementedError(
                f"xjax.debug.{what} inside jit/vmap needs host callbacks from compiled code, "
                "which xjax does not support yet; call it outside the transformation, or use "
                "xjax.disable_jit() while debugging")


def _concrete(leaf):
    if isinstance(leaf, Tracer):
        return np.asarray(leaf.to_concrete_value())
    return np.asarray(leaf) if hasattr(leaf, "__array__") else leaf


def print(fmt: str, *args, ordered: bool = False, **kwargs) -> None:  # noqa: A001
    """Print ``fmt.format(*args, **kwargs)`` with array values.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.debug.print("x = {}", jnp.arange(3))
    x = [0 1 2]
    """
    _check_concrete((args, kwargs), "print")
    args, kwargs = tree_map(_concrete, (args, kwargs))
    import builtins
    builtins.print(fmt.format(*args, **kwargs))


def callback(fun, *args, ordered: bool = False, **kwargs) -> None:
    """Call ``fun`` on the (concrete) values of ``args`` for its side effects."""
    _check_concrete((args, kwargs), "callback")
    fun(*tree_map(_concrete, args), **tree_map(_concrete, kwargs))


def breakpoint(*, backend=None, filter_frames=True, num_frames=None, ordered=False,
               token=None, **kwargs):  # noqa: A001
    """Enter the Python debugger (eagerly only)."""
    import pdb
    pdb.set_trace()


def visualize_array_sharding(arr, **kwargs) -> None:
    import builtins
    builtins.print(f"{arr.shape} on {next(iter(arr.devices()))} (not sharded)")


def inspect_array_sharding(value, *, callback):
    callback(None)
