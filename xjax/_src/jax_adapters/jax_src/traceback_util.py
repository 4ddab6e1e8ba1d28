"""``jax._src.traceback_util``: libraries mark their own files for removal from the
tracebacks of errors that pass through an :func:`api_boundary`, as JAX does for its own.

The filtering mode is the ``jax_traceback_filtering`` flag; ``"off"`` keeps every frame.
xjax's own frames are not removed (xjax registers none of its files).
"""

from __future__ import annotations

import functools
import os
import threading
import types

from xjax._src.core.config import config

_exclude_paths: list[str] = []


class UnfilteredStackTrace(Exception):
    """The traceback before filtering, as JAX attaches it (``remove_frames`` mode)."""


class _Depth(threading.local):
    value = 0


_depth = _Depth()


def register_exclusion(path: str) -> None:
    """Remove frames of files under ``path`` from filtered tracebacks."""
    _exclude_paths.append(path)


def include_filename(filename: str) -> bool:
    """Whether frames of ``filename`` stay in filtered tracebacks."""
    return not any(filename.startswith(p) for p in _exclude_paths)


def include_frame(frame: types.FrameType) -> bool:
    """Whether ``frame`` stays in filtered tracebacks."""
    return include_filename(frame.f_code.co_filename)


def filter_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the frames of excluded files (a new chain; ``tb`` is unchanged)."""
    kept = []
    while tb is not None:
        if include_frame(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def _filtering_mode() -> str:
    mode = config.jax_traceback_filtering
    if mode == "auto":
        return "off" if os.environ.get("JAX_TRACEBACK_FILTERING") == "off" else \
            "quiet_remove_frames"
    return mode


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    """Decorate a library's entry point: an error leaving the outermost boundary loses the
    frames of registered files from its traceback (unless filtering is off)."""
    if fun is None:
        return functools.partial(api_boundary, repro_api_name=repro_api_name,
                                 repro_user_func=repro_user_func)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        _depth.value += 1
        try:
            return fun(*args, **kwargs)
        except Exception as error:
            if _depth.value > 1 or _filtering_mode() == "off" or not _exclude_paths:
                raise
            raise error.with_traceback(filter_traceback(error.__traceback__)) from \
                error.__cause__
        finally:
            _depth.value -= 1

    return wrapped
