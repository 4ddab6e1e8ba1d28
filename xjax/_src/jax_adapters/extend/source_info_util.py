"""``jax.extend.source_info_util`` (also ``jax._src.source_info_util``), over xjax's
``core.source_info``: the source locations recorded on staged equations, the library paths
that do not count as user code, and name-stack scopes.

``user_context`` (attributing a block to other frames) is accepted and not applied: the
equations keep the frames that staged them.
"""

from __future__ import annotations

import contextlib

from xjax._src.core import source_info as _source_info
from xjax._src.core.source_info import SourceInfo as SourceInfo  # noqa: F401
from xjax._src.jax_adapters.jax_src import traceback_util

_exclude_paths: list[str] = []
_include_paths: list[str] = []


def register_exclusion(path: str) -> None:
    """Treat files under ``path`` as library code, not user code."""
    _exclude_paths.append(path)
    _source_info.exclude_path(path)


def register_inclusion(path: str) -> None:
    """Treat files under ``path`` as user code even if under an excluded path."""
    _include_paths.append(path)
    _source_info.include_path(path)


def is_user_filename(filename: str) -> bool:
    """Whether ``filename`` is user code (not under a registered library path)."""
    if any(filename.startswith(p) for p in _include_paths):
        return True
    return not any(filename.startswith(p) for p in _exclude_paths) and \
        traceback_util.include_filename(filename)


def current():
    """The source an equation staged now would get (None outside user code)."""
    return _source_info.current()


def summarize(source_info, num_frames: int = 1) -> str:
    """``file:line:column (function)`` of a recorded source."""
    return _source_info.summarize(source_info)


@contextlib.contextmanager
def extend_name_stack(name: str):
    """Name scope for the equations staged in the block (their ``name_stack``)."""
    _source_info.push_name(name)
    try:
        yield
    finally:
        _source_info.pop_name()


@contextlib.contextmanager
def reset_name_stack():
    """Clear the name scope for the block (see :func:`extend_name_stack`)."""
    saved = _source_info.state.name_stack
    _source_info.state.name_stack = []
    try:
        yield
    finally:
        _source_info.state.name_stack = saved


@contextlib.contextmanager
def user_context(traceback=None, *, name_stack=None):
    """Attribute what the block traces to the given user frames (not recorded yet)."""
    yield
