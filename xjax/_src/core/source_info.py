"""Where each staged equation came from in the user's code (JAX's ``source_info``).

Staging records, for every equation, the innermost frame outside xjax (and outside the
library paths registered with ``source_info_util.register_exclusion``): file, line, column
and function, as JAX summarizes them (``/path/train.py:12:8 (loss)``), plus the name stack
of ``extend_name_stack`` scopes. Equations re-staged from an existing jaxpr (by a
transformation interpreting it) keep the source of the equation they came from.
"""

from __future__ import annotations

import os
import sys
import threading

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_excluded: list[str] = [_PACKAGE_DIR + os.sep]
_included: list[str] = []


class SourceInfo:
    """The user frame an equation was staged from, and its name stack. The code object and
    instruction offset are kept (not the frame, which would keep its locals alive); the
    column is worked out only when printed."""

    __slots__ = ("code", "line", "name_stack", "offset")

    def __init__(self, code, offset, line, name_stack=""):
        self.code, self.offset, self.line, self.name_stack = code, offset, line, name_stack

    file = property(lambda self: self.code.co_filename)
    function = property(lambda self: self.code.co_qualname)  # as JAX: f.<locals>.g

    @property
    def column(self):
        columns = _positions.get(self.code)
        if columns is None:
            columns = _positions[self.code] = [p[2] for p in self.code.co_positions()]
        index = self.offset // 2
        return columns[index] if 0 <= index < len(columns) else None

    def summary(self) -> str:
        column = self.column
        column = "" if column is None else f":{column}"
        return f"{self.file}:{self.line}{column} ({self.function})"

    __str__ = summary

    def __repr__(self) -> str:
        return f"SourceInfo({self.summary()})"


def exclude_path(path: str) -> None:
    """Frames from files under ``path`` are library frames, not the user's."""
    _excluded.append(path)
    _user_file_cache.clear()


def include_path(path: str) -> None:
    """Frames from files under ``path`` are the user's, even under an excluded path."""
    _included.append(path)
    _user_file_cache.clear()


def is_user_file(filename: str) -> bool:
    if _included and filename.startswith(tuple(_included)):
        return True
    return not filename.startswith(tuple(_excluded)) and not filename.startswith("<frozen")


_positions: dict = {}  # code object -> its instructions' start columns


class _State(threading.local):
    def __init__(self):
        self.override = None  # the source of the equation a transformation is re-staging
        self.name_stack: list[str] = []


state = _State()
_user_file_cache: dict = {}  # filename -> whether it is user code (paths rarely change)


def current() -> SourceInfo | None:
    """The source of an equation staged now: the innermost user frame."""
    override = state.override
    if override is not None:
        return override
    frame = user_frame(sys._getframe(1))
    if frame is None:
        return None
    stack = state.name_stack
    return SourceInfo(frame.f_code, frame.f_lasti, frame.f_lineno,
                      "/".join(stack) if stack else "")


def user_frame(frame=None):
    """The innermost frame of user code at or above ``frame`` (default: the caller's), or
    None: the one rule for where the user's code is (staging, warnings, debug prints and
    checkify messages name it)."""
    if frame is None:
        frame = sys._getframe(1)
    cache = _user_file_cache
    while frame is not None:
        filename = frame.f_code.co_filename
        user = cache.get(filename)
        if user is None:
            user = cache[filename] = is_user_file(filename)
        if user:
            return frame
        frame = frame.f_back
    return None


class restaging:
    """While a transformation re-stages an equation, new equations get its source."""

    __slots__ = ("saved", "source")

    def __init__(self, source):
        self.source = source

    def __enter__(self):
        self.saved = state.override
        if self.source is not None:
            state.override = self.source

    def __exit__(self, *exc):
        state.override = self.saved


def push_name(name: str) -> None:
    state.name_stack.append(name)


def pop_name() -> None:
    state.name_stack.pop()


def summarize(source: SourceInfo | None) -> str:
    return "unknown" if source is None else source.summary()
