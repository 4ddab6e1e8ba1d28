"""``jax.ad``: the markers a vjp function's ``with_refs`` is asked for, per input, and
answers (``GradValue``, ``GradRef``, ``DontWant``, ``DidntWant``)."""

from __future__ import annotations

from __future__ import annotations

import dataclasses
import types

from xjax._src.core.tree_util import register_dataclass


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """Ask for this input's cotangent as a returned value (the default)."""


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """Returned in place of a cotangent that was accumulated into a reference."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """Ask for no cotangent for this input (it is not computed)."""


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """Returned in place of a cotangent asked for with :class:`DontWant`."""


ad = types.SimpleNamespace(DontWant=DontWant, DidntWant=DidntWant, GradRef=GradRef,
                           GradValue=GradValue)


__all__ = ["ad"]
