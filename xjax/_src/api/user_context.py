"""``jax.make_user_context``: a value that jit's cache depends on (a change of it
retraces)."""

from __future__ import annotations

from __future__ import annotations


from xjax._src.core.config import config


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


__all__ = ["make_user_context"]
