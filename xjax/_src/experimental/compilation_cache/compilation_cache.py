"""``xjax.experimental.compilation_cache.compilation_cache``: set up xjax's persistent
compilation cache (``xjax.runtime.compilation_cache``), as JAX 0.10.2's module of the
same name: ``set_cache_dir`` and ``reset_cache``.
"""

from __future__ import annotations
from xjax._src.core.config import config
from xjax._src.higher_order import jit_call

__all__ = ["reset_cache", "set_cache_dir"]


def set_cache_dir(path) -> None:
    """Store compiled executables under ``path`` and load them from there before compiling.

    The same as ``xjax.config.update("jax_compilation_cache_dir", path)``; ``None`` turns
    the persistent cache off. The directory is created when the first entry is written.

    .. warning::
       Cache entries are trusted executables: do not use a directory others can write to.

    Examples
    --------
    >>> import tempfile, xjax
    >>> from xjax.experimental.compilation_cache import compilation_cache as cc
    >>> cc.set_cache_dir(tempfile.mkdtemp())
    >>> cc.set_cache_dir(None)
    """
    config.update("jax_compilation_cache_dir", path)


def reset_cache() -> None:
    """Return the cache to its pristine state.

    As in JAX, the directory setting and the files on disk are kept; what is reset is the
    per-process state: the once-per-process cache adoption event
    (``/jax/compilation_cache/tasks_using_cache`` or ``task_disabled_cache``) is recorded
    again at the next compile.
    """
    jit_call.reset_cache_events()
