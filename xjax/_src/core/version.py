"""``xjax.version``: the library's version (as ``jax.version.__version__``)."""

__version__ = "0.1.0"
_version = __version__
