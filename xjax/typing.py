"""``xjax.typing``: type annotations for xjax code (JAX's ``jax.typing``).

``ArrayLike`` is anything xjax accepts where an array is expected (Arrays, NumPy arrays and
scalars, Python scalars); ``DTypeLike`` anything that names a dtype.

Examples
--------
>>> from xjax.typing import ArrayLike
>>> def double(x: ArrayLike):
...     return x * 2
"""

from xjax._src.api.typing import (  # noqa: F401
    ArrayLike as ArrayLike, DTypeLike as DTypeLike,
)
from xjax._src.api.typing import __all__ as __all__  # noqa: F401
