"""``jax._src.traceback_util``: libraries mark their own files for removal from the
tracebacks of errors that pass through an :func:`api_boundary`, as JAX does for its own.

xjax's own files are excluded from the start, as JAX's are, so an error leaving a library's
entry point shows the user's frames only. The mode is the ``jax_traceback_filtering`` flag:
``"off"`` keeps every frame; ``"tracebackhide"`` marks the excluded frames with a
``__tracebackhide__`` local (for pytest and IPython); ``"remove_frames"`` drops them and
chains the whole traceback as an :class:`UnfilteredStackTrace` cause; ``"quiet_remove_frames"``
(the default) drops them and says so in a note.
"""

from __future__ import annotations

import functools
import os
import pathlib
import threading
import traceback
import types

from xjax._src.core.config import config

# xjax's package directory (with a trailing separator: not a sibling named xjax_something)
_XJAX_DIRECTORY = str(pathlib.Path(__file__).resolve().parents[3]) + os.sep
_exclude_paths: list[str] = [_XJAX_DIRECTORY]
_FILTERED_NOTE = ("--------------------\nFor simplicity, xjax has removed its internal frames "
                  "from the traceback of the following exception. Set "
                  "JAX_TRACEBACK_FILTERING=off to include these.")


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
        __tracebackhide__ = True  # noqa: F841  (read by pytest and IPython)
        _depth.value += 1
        try:
            return fun(*args, **kwargs)
        except Exception as error:
            mode = _filtering_mode()
            if _depth.value > 1 or mode == "off":
                raise
            if mode == "tracebackhide":
                _hide_excluded_frames(error.__traceback__)
                raise
            _remove_excluded_frames(error, mode)
            raise  # a bare raise adds no frame of this file to the filtered traceback
        finally:
            _depth.value -= 1

    return wrapped


def _hide_excluded_frames(tb) -> None:
    for frame, _ in traceback.walk_tb(tb):
        if not include_frame(frame):
            frame.f_locals["__tracebackhide__"] = True


def _remove_excluded_frames(error: BaseException, mode: str) -> None:
    """Filter ``error``'s traceback in place; keep the whole one as its cause
    (``remove_frames``) or add a note saying frames were removed."""
    unfiltered = error.__traceback__
    error.with_traceback(filter_traceback(unfiltered))
    if mode != "remove_frames":
        error.add_note(_FILTERED_NOTE)
        return
    whole = UnfilteredStackTrace("".join(traceback.format_exception_only(error)).strip()
                                 + "\n\nThe preceding is the original exception that "
                                 "occurred, unmodified.\n\n--------------------")
    whole.__cause__, whole.__context__ = error.__cause__, error.__context__
    whole.__suppress_context__ = error.__suppress_context__
    error.__cause__ = whole.with_traceback(unfiltered)
