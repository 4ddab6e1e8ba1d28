"""``xjax.lib``: as ``jax.lib``, which in JAX 0.10.2 holds only the version of the compiled
runtime (jaxlib). xjax's runtime (its PJRT bindings) ships with xjax, so this is xjax's
version. The removed ``jax.lib.xla_bridge`` and ``jax.lib.xla_client`` are absent here too
(AttributeError).

>>> import xjax
>>> xjax.lib.__version__ == xjax.__version__
True
"""

from xjax.version import __version__  # noqa: F401
