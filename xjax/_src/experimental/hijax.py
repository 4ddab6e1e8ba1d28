"""``xjax.experimental.hijax``: the names of JAX's experimental "higher-level types" API.

Libraries define their own types and primitives with it at import time (Flax's NNX
variables do, behind its ``flax_hijax_variable`` flag, off by default). xjax does not
implement hijax types: the classes exist so such libraries import and define their
subclasses, and binding a :class:`HiPrimitive` raises ``NotImplementedError``.
"""

from __future__ import annotations

from xjax._src.core.ad_util import UndefinedPrimal, Zero, is_undefined
from xjax._src.core.avals import AbstractValue, ShapedArray  # noqa: F401
from xjax._src.core.ref_avals import AbstractRef  # noqa: F401
from xjax._src.lax.ad_rules import instantiate as _instantiate

_NOT_IMPLEMENTED = ("xjax does not implement jax.experimental.hijax types and primitives "
                    "(for Flax, keep the flax_hijax_variable flag off, its default)")


class HiType(AbstractValue):
    """Base of the abstract values of hijax types."""

    __slots__ = ()


class MutableHiType(HiType):
    """Base of the abstract values of mutable hijax types."""

    __slots__ = ()


class AvalQDD:
    """An aval with its quasi-dynamic data."""

    def __init__(self, aval, qdd):
        self.aval, self.qdd = aval, qdd


class AvalMutableQDD:
    """An aval with mutable quasi-dynamic data."""

    def __init__(self, aval, mutable_qdd):
        self.aval, self.mutable_qdd = aval, mutable_qdd


class HiPrimitive:
    """Base of hijax primitives; subclasses define their rules as methods."""

    def __init__(self, name: str):
        self.name = name

    def bind(self, *args, **params):
        raise NotImplementedError(f"{self.name}: {_NOT_IMPLEMENTED}")

    def __repr__(self):
        return self.name


class VJPHiPrimitive(HiPrimitive):
    """Base of hijax primitives given by a forward and a backward rule."""


class aval_method:
    """A method of a hijax value that runs on its aval."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, instance, owner=None):
        return self.fun if instance is None else self.fun.__get__(instance, owner)


class aval_property(property):
    """A property of a hijax value that is computed from its aval."""


class _EffectTypeSet:
    """The effect types allowed inside control flow (``add_type`` registers one)."""

    def __init__(self):
        self._types: set = set()

    def add_type(self, effect_type) -> None:
        self._types.add(effect_type)

    def contains(self, effect) -> bool:
        return isinstance(effect, tuple(self._types))


control_flow_allowed_effects = _EffectTypeSet()
_hitypes: dict = {}


def register_hitype(value_type, to_aval) -> None:
    """Record ``value_type``'s aval function; values of it cannot yet reach primitives."""
    _hitypes[value_type] = to_aval


def instantiate_zeros(tangent):
    """``tangent`` with a symbolic zero made an array of zeros."""
    return _instantiate(tangent)


def is_undefined_primal(x) -> bool:
    """Whether ``x`` is a linear operand being transposed (an undefined primal)."""
    return is_undefined(x)


__all__ = ["AbstractRef", "AbstractValue", "AvalMutableQDD", "AvalQDD", "HiPrimitive",
           "HiType", "MutableHiType", "ShapedArray", "UndefinedPrimal", "VJPHiPrimitive",
           "Zero", "aval_method", "aval_property", "control_flow_allowed_effects",
           "instantiate_zeros", "is_undefined_primal", "register_hitype"]
