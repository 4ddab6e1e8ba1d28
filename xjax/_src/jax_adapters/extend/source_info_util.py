"""``jax.extend.source_info_util`` (also ``jax._src.source_info_util``): where xjax keeps
what libraries tell it about their source files.

xjax does not yet record source locations in jaxprs (issue 18), so this holds the
registrations (``register_exclusion``) and the name-stack contexts as no-ops that keep the
code that uses them working.
"""

from __future__ import annotations

import contextlib

from xjax._src.jax_adapters.jax_src import traceback_util

_exclude_paths: list[str] = []
_include_paths: list[str] = []


def register_exclusion(path: str) -> None:
    """Treat files under ``path`` as library code, not user code."""
    _exclude_paths.append(path)


def register_inclusion(path: str) -> None:
    """Treat files under ``path`` as user code even if under an excluded path."""
    _include_paths.append(path)


def is_user_filename(filename: str) -> bool:
    """Whether ``filename`` is user code (not under a registered library path)."""
    if any(filename.startswith(p) for p in _include_paths):
        return True
    return not any(filename.startswith(p) for p in _exclude_paths) and \
        traceback_util.include_filename(filename)


@contextlib.contextmanager
def extend_name_stack(name: str):
    """Name scope for the block (xjax does not record names in jaxprs yet)."""
    yield


@contextlib.contextmanager
def reset_name_stack():
    """Clear the name scope for the block (see :func:`extend_name_stack`)."""
    yield


@contextlib.contextmanager
def user_context(traceback=None, *, name_stack=None):
    """Attribute what the block traces to the given user frames (not recorded yet)."""
    yield
