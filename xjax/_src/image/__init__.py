"""``xjax.image``: image resampling, as ``jax.image``.

>>> import xjax, xjax.numpy as jnp
>>> xjax.image.resize(jnp.array([[0., 1.], [2., 3.]]), (2, 3), "linear")
Array([[0. , 0.5, 1. ],
       [2. , 2.5, 3. ]], dtype=float32)
"""

from xjax._src.image.scale import ResizeMethod, resize, scale_and_translate  # noqa: F401

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
