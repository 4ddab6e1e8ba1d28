"""``xjax.version``: the library's version (as ``jax.version.__version__``)."""

from xjax import __version__  # noqa: F401

_version = __version__
