"""``xjax.scipy``: SciPy's API on xjax arrays (JAX's ``jax.scipy``).

``linalg``, ``special``, ``stats`` and ``sparse`` load with the package; the other
submodules JAX loads lazily (``xjax.scipy.signal`` etc.) load on first attribute access.
"""

from xjax.scipy import cluster as cluster  # noqa: F401
from xjax.scipy import fft as fft  # noqa: F401
from xjax.scipy import integrate as integrate  # noqa: F401
from xjax.scipy import interpolate as interpolate  # noqa: F401
from xjax.scipy import linalg as linalg  # noqa: F401
from xjax.scipy import ndimage as ndimage  # noqa: F401
from xjax.scipy import signal as signal  # noqa: F401
from xjax.scipy import sparse as sparse  # noqa: F401
from xjax.scipy import special as special  # noqa: F401
from xjax.scipy import stats as stats  # noqa: F401
