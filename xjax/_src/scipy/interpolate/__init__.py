"""``xjax.scipy.interpolate``: SciPy's interpolation on xjax arrays (JAX's
``jax.scipy.interpolate``). Only :class:`RegularGridInterpolator` exists, as in JAX.
"""

from xjax._src.scipy.interpolate._regular_grid import RegularGridInterpolator  # noqa: F401

__all__ = ["RegularGridInterpolator"]
