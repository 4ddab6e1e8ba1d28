"""``xjax.extend``: access to xjax's machinery for extensions, as ``jax.extend``.

``core`` defines primitives and reads jaxprs, ``backend`` describes the XLA client,
``linear_util`` wraps functions, ``random`` gives the threefry primitive. Rules are attached
to primitives with :mod:`xjax.interpreters.ad`, :mod:`xjax.interpreters.batching` and
:mod:`xjax.interpreters.mlir`.
"""

from xjax._src.jax_adapters.extend import backend, core, linear_util, random  # noqa: F401

__all__ = ["backend", "core", "linear_util", "random"]
