"""Public names that exist only to say they are not implemented.

A stub made by :func:`not_implemented` raises ``NotImplementedError`` for every input and
carries a marker attribute, so tools (``python -m xjax.testing.coverage``) can tell a stub
from a function that works, without calling it.
"""

from __future__ import annotations

import inspect

STUB_ATTR = "_xjax_not_implemented"
"""Attribute holding a stub's message (a string); absent on everything that is not a stub."""

AS_JAX_ATTR = "_xjax_not_implemented_in_jax_too"
"""Attribute set to True on stubs of names that JAX itself defines only to raise."""


def not_implemented(name: str, reason: str, *, like=None, jax_too: bool = False):
    """A function that raises ``NotImplementedError(reason)`` whatever it is given.

    Parameters
    ----------
    name : str
        The public name, e.g. ``"hyp2f1"``; becomes the stub's ``__name__``.
    reason : str
        The error message: what is missing and, where there is one, what to use instead.
    like : callable, optional
        A function whose signature and docstring the stub shows (``help()`` then reads as
        JAX's function would).
    jax_too : bool
        True where JAX defines the name only to raise as well (e.g. ``jnp.fromfile``):
        the stub then behaves exactly as JAX's.

    Returns
    -------
    callable
        The stub, with ``_xjax_not_implemented`` set to ``reason``.

    Examples
    --------
    >>> f = not_implemented("f", "f needs LAPACK's gees")
    >>> f(1.0)
    Traceback (most recent call last):
      ...
    NotImplementedError: f needs LAPACK's gees
    """
    def stub(*args, **kwargs):
        raise NotImplementedError(reason)

    stub.__name__ = stub.__qualname__ = name
    stub.__doc__ = f"Not implemented in xjax: {reason}"
    if like is not None:
        stub.__signature__ = inspect.signature(like)
        doc = (like.__doc__ or "").strip()
        if doc:
            stub.__doc__ = f"{doc}\n\n{stub.__doc__}"
    setattr(stub, STUB_ATTR, reason)
    setattr(stub, AS_JAX_ATTR, jax_too)
    return stub


def stub_reason(obj) -> str | None:
    """The message of a stub made by :func:`not_implemented`, or None for anything else."""
    reason = getattr(obj, STUB_ATTR, None)
    return reason if isinstance(reason, str) else None
