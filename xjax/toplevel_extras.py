"""Small top-level names of ``jax``: ``ad`` (markers for ``vjp``), ``memory`` (memory
spaces), the ``auto_pcast`` and ``remove_size_one_mesh_axis_from_type`` flags and
``make_user_context``.

``auto_pcast`` and ``remove_size_one_mesh_axis_from_type`` are configuration flags (context
managers, like ``xjax.debug_nans``) about shard_map's varying-manual-axes types:

- ``auto_pcast`` (default True): JAX inserts ``pvary`` where an operand that varies over a
  manual axis meets one that does not. xjax's shard_map runs on vmap, which always
  broadcasts the invariant operand, so only True is supported;
- ``remove_size_one_mesh_axis_from_type`` (default False): with True, mesh axes of size 1
  are left out of types, so a value is never varying over one: ``shard_map``'s replication
  check (``check_vma``) accepts an ``out_specs`` that does not mention such an axis.
"""

from __future__ import annotations

import dataclasses
import enum
import types

from xjax.core.config import bool_state, config
from xjax.tree_util import register_dataclass

__all__ = ["ad", "memory", "auto_pcast", "remove_size_one_mesh_axis_from_type",
           "make_user_context"]


# -- jax.ad: what a vjp function's ``with_refs`` is asked for, per input, and answers.
# xjax defines the markers; its vjp functions do not have ``with_refs`` yet.

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


# -- jax.memory --

class MemorySpace(enum.Enum):
    """Where an array's memory lives: ``Device``, ``Host`` or ``Any``."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self):
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__  # identity, as JAX (Enum hashes the name)


memory = types.SimpleNamespace(Space=MemorySpace)


# -- flags about shard_map's types --

auto_pcast = bool_state(
    "jax_auto_pcast", "If True, automatically insert `pvary` to match VMAs on simple ops "
    "(only True in xjax: its vmap-based shard_map always broadcasts invariant operands).")
remove_size_one_mesh_axis_from_type = bool_state(
    "jax_remove_size_one_mesh_axis_from_type", "Removes mesh axes of size 1 from "
    "ShapedArray.sharding and vma (in xjax: shard_map's replication check ignores them).")


# -- make_user_context --

_user_contexts: list = []  # every UserConfig made, in order: their values key jit's cache


def _publish():
    config.update("xjax_user_contexts", tuple(c.value for c in _user_contexts))


class UserConfig:
    """A value that jit's cache depends on: a change of it retraces (see
    :func:`make_user_context`)."""

    def __init__(self, default_value):
        self._global = default_value
        self._overrides: list = []
        _user_contexts.append(self)
        _publish()

    @property
    def value(self):
        """The value in effect: the innermost ``with`` block's, else the global one."""
        return self._overrides[-1] if self._overrides else self._global

    def get_global(self):
        return self._global

    def set_global(self, new_value):
        self._global = new_value
        _publish()

    def __call__(self, new_value):
        """A context manager setting the value inside its block."""
        return _UserContext(self, new_value)


class _UserContext:
    __slots__ = ("_obj", "_new_value")

    def __init__(self, obj, new_value):
        self._obj, self._new_value = obj, new_value

    def __enter__(self):
        self._obj._overrides.append(self._new_value)
        _publish()
        return self

    def __exit__(self, *exc):
        self._obj._overrides.pop()
        _publish()


def make_user_context(default_value=None) -> UserConfig:
    """A context whose value is part of ``jit``'s cache key: when it changes, a jitted
    function is traced and compiled again. Values must be hashable.

    xjax's configuration is process-wide, so unlike JAX the value is not thread-local.

    Examples
    --------
    >>> import xjax
    >>> traces = []
    >>> @xjax.jit
    ... def f(x):
    ...     traces.append(None)
    ...     return x * 2
    >>> mode = xjax.make_user_context(default_value="a")
    >>> _ = f(1.0)
    >>> with mode("b"):
    ...     _ = f(1.0)
    >>> _ = f(1.0)
    >>> len(traces)
    2
    """
    return UserConfig(default_value)
