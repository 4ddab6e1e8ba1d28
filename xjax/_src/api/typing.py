"""``xjax.typing``: type annotations for xjax code (JAX's ``jax.typing``).

``ArrayLike`` is anything xjax accepts where an array is expected (Arrays, NumPy arrays and
scalars, Python scalars); ``DTypeLike`` anything that names a dtype.

Examples
--------
>>> from xjax.typing import ArrayLike
>>> def double(x: ArrayLike):
...     return x * 2
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from xjax._src.core.array import Array

ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype]

__all__ = ["ArrayLike", "DTypeLike"]
