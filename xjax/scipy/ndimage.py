"""``xjax.scipy.ndimage``: SciPy's N-dimensional image interpolation on xjax arrays (JAX's
``jax.scipy.ndimage``). Only :func:`map_coordinates` with spline orders 0 and 1 exists, as in
JAX.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.ndimage import map_coordinates
>>> image = jnp.arange(12.0).reshape(3, 4)
>>> map_coordinates(image, [jnp.array([0.5, 1.5]), jnp.array([1.5, 2.5])], order=1)
Array([3.5, 8.5], dtype=float32)
"""

from xjax._src.scipy.ndimage import (  # noqa: F401
    map_coordinates as map_coordinates,
)
from xjax._src.scipy.ndimage import __all__ as __all__  # noqa: F401
