"""``xjax.extend``: access to xjax's machinery for extensions, as ``jax.extend``.

``core`` defines primitives and reads jaxprs, ``backend`` describes the XLA client,
``linear_util`` wraps functions, ``random`` gives the threefry primitive. Rules are attached
to primitives with :mod:`xjax.interpreters.ad`, :mod:`xjax.interpreters.batching` and
:mod:`xjax.interpreters.mlir`.
"""

from xjax.extend import backend as backend  # noqa: F401
from xjax.extend import core as core  # noqa: F401
from xjax.extend import linear_util as linear_util  # noqa: F401
from xjax.extend import random as random  # noqa: F401
from xjax._src.jax_adapters.extend import __all__ as __all__  # noqa: F401
