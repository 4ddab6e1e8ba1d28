"""``xjax.image``: image resampling, as ``jax.image``.

>>> import xjax, xjax.numpy as jnp
>>> xjax.image.resize(jnp.array([[0., 1.], [2., 3.]]), (2, 3), "linear")
Array([[0. , 0.5, 1. ],
       [2. , 2.5, 3. ]], dtype=float32)
"""

from xjax._src.image.scale import (  # noqa: F401
    ResizeMethod as ResizeMethod, resize as resize, scale_and_translate as scale_and_translate,
)
from xjax._src.image import __all__ as __all__  # noqa: F401
