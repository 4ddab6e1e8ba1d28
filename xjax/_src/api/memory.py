"""``jax.memory``: memory spaces (``jax.memory.Space``)."""

from __future__ import annotations

from __future__ import annotations

import enum
import types


class MemorySpace(enum.Enum):
    """Where an array's memory lives: ``Device``, ``Host`` or ``Any``."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self):
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__  # identity, as JAX (Enum hashes the name)


memory = types.SimpleNamespace(Space=MemorySpace)


__all__ = ["memory"]
