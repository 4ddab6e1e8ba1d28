"""Named axes bound by ``shard_map`` bodies: the mesh axes a body is manual over, for the
collectives staged in it (vmap binds its axis names with its BatchTrace instead).

``body_axis_sizes`` maps a primitive holding such a body to ``params -> {name: size}``, so
that code re-reading a body (``check_jaxpr``) binds the same names.
"""

from __future__ import annotations

import contextlib

_frames: list[dict] = []  # innermost last: name -> size

body_axis_sizes: dict = {}


@contextlib.contextmanager
def axes_bound(sizes: dict):
    """Bind the axis names of ``sizes`` (name -> size) inside this context."""
    _frames.append(dict(sizes))
    try:
        yield
    finally:
        _frames.pop()


def bound_frames() -> list[dict]:
    """The bound frames, innermost first."""
    return _frames[::-1]
