"""``wraps``: what every transformation applies to the function it returns."""

from __future__ import annotations

import functools


def wraps(wrapped):
    """``functools.wraps(wrapped)`` as JAX's transformations apply it: the instance
    attributes of ``wrapped`` are copied too (``jax.vmap(module).field`` reads the module's
    field), and it never fails: a callable whose ``__name__`` is not a string (an Equinox
    module, a tracer-holding pytree) still gets ``__wrapped__``.

    Apply it before the wrapper sets attributes of its own, which must win."""
    def decorate(fun):
        try:
            functools.update_wrapper(fun, wrapped)
        except (AttributeError, TypeError):
            fun.__wrapped__ = wrapped
        return fun
    return decorate
