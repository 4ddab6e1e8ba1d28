"""``xjax.scipy.interpolate``: SciPy's interpolation on xjax arrays (JAX's
``jax.scipy.interpolate``). Only :class:`RegularGridInterpolator` exists, as in JAX.
"""

from xjax._src.scipy.interpolate._regular_grid import (  # noqa: F401
    RegularGridInterpolator as RegularGridInterpolator,
)
from xjax._src.scipy.interpolate import __all__ as __all__  # noqa: F401
