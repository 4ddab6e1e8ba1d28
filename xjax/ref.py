"""Mutable array references (``jax.ref``): placeholder, being built.

Every name raises ``NotImplementedError`` until the Ref family lands.
"""

from xjax.core.stubs import not_implemented

__all__ = ["AbstractRef", "Ref", "addupdate", "free_ref", "freeze", "get", "new_ref",
           "empty_ref", "set", "swap", "ds"]

_WHY = "xjax does not have mutable array references (jax.ref) yet"


class Ref:
    """A mutable array reference (not implemented yet)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_WHY)


class AbstractRef:
    """The abstract value of a Ref (not implemented yet)."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_WHY)


new_ref = not_implemented("new_ref", _WHY)
empty_ref = not_implemented("empty_ref", _WHY)
free_ref = not_implemented("free_ref", _WHY)
freeze = not_implemented("freeze", _WHY)
get = not_implemented("get", _WHY)
set = not_implemented("set", _WHY)  # noqa: A001  (JAX's name)
swap = not_implemented("swap", _WHY)
addupdate = not_implemented("addupdate", _WHY)
ds = not_implemented("ds", _WHY)
