"""``xjax.version``: the library's version (as ``jax.version.__version__``)."""

__version__ = "0.1.0"
_version = __version__

# The JAX release whose API, numbers and errors xjax matches (``../shared/api`` was measured
# from it). ``import jax`` under xjax's import hook reports it, so version gates in libraries
# take the paths written for it.
jax_version = "0.10.2"
jax_version_info = tuple(int(part) for part in jax_version.split("."))
