"""``xjax.scipy``: SciPy's API on xjax arrays (JAX's ``jax.scipy``).

``linalg``, ``special``, ``stats`` and ``sparse`` load with the package; the other
submodules JAX loads lazily (``xjax.scipy.signal`` etc.) load on first attribute access.
"""

import importlib as _importlib

from xjax._src.scipy import linalg  # noqa: F401
from xjax._src.scipy import special, stats  # noqa: F401
from xjax._src.scipy import sparse  # noqa: F401

_LAZY_SUBMODULES = ("interpolate", "ndimage", "signal", "fft", "cluster", "integrate")


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
