"""``xjax.numpy``: NumPy's API on xjax arrays, composed from ``xjax.lax``.

>>> import xjax.numpy as jnp
>>> jnp.add(1, 1.0)
Array(2., dtype=float32, weak_type=True)

Importing this package gives ``xjax.Array`` and tracers their operators and methods
(``x + y``, ``x[idx]``, ``x.at[idx].set(y)``, ``x.sum()``...).
"""

import numpy as _np

from xjax._src.core import dtypes as _dtypes
from xjax._src.core.array import Array as ndarray  # noqa: F401

from xjax._src.numpy.scalar_types import *  # noqa: F401,F403
from xjax._src.numpy.scalar_types import bool_ as bool_  # noqa: F401
from xjax._src.numpy.creation import *  # noqa: F401,F403
from xjax._src.numpy.ufuncs import *  # noqa: F401,F403
from xjax._src.numpy.logic import *  # noqa: F401,F403
from xjax._src.numpy.reductions import *  # noqa: F401,F403
from xjax._src.numpy.shape_ops import *  # noqa: F401,F403
from xjax._src.numpy.linalg_basic import *  # noqa: F401,F403
from xjax._src.numpy.matrices import *  # noqa: F401,F403
from xjax._src.numpy.index_tricks import *  # noqa: F401,F403
from xjax._src.numpy.indexing import take, take_along_axis  # noqa: F401
from xjax._src.numpy.array_methods import astype  # noqa: F401
from xjax._src.numpy import array_methods as _array_methods

# -- constants --
pi = _np.pi
e = _np.e
euler_gamma = _np.euler_gamma
inf = _np.inf
nan = _np.nan
newaxis = None

# -- dtype utilities --
dtype = _np.dtype
iinfo = _dtypes.iinfo
finfo = _dtypes.finfo
issubdtype = _dtypes.issubdtype
promote_types = _dtypes.promote_types
result_type = _dtypes.result_type
printoptions = _np.printoptions
set_printoptions = _np.set_printoptions
get_printoptions = _np.get_printoptions
iterable = _np.iterable


def can_cast(from_, to, casting="safe"):
    """Whether NumPy's casting rule ``casting`` allows ``from_`` to become ``to``."""
    from_ = from_.dtype if hasattr(from_, "dtype") else from_
    return _np.can_cast(from_, to, casting=casting)


def isscalar(element) -> bool:
    """True for Python and NumPy scalars and for 0-d arrays (JAX's definition)."""
    if isinstance(element, (_np.ndarray, ndarray)) or hasattr(element, "aval") or \
            hasattr(element, "__jax_array__") or _np.isscalar(element):
        return _np.ndim(element) == 0
    return False


def isdtype(dtype, kind) -> bool:
    """Whether ``dtype`` is of ``kind`` (a dtype or one of the Array API kind names)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    dt = _np.dtype(dtype)
    for k in kinds:
        if isinstance(k, str):
            test = {"bool": _dtypes.is_bool, "signed integer": _dtypes.is_signed_integer,
                    "unsigned integer": _dtypes.is_unsigned, "integral": _dtypes.is_integer,
                    "real floating": _dtypes.is_float, "complex floating": _dtypes.is_complex,
                    "numeric": _dtypes.is_numeric}.get(k)
            if test is None:
                raise ValueError(f"Unrecognized data type kind: {k!r}.")
            if test(dt):
                return True
        elif dt == _np.dtype(k):
            return True
    return False


_array_methods.install()
from xjax._src.numpy.sorting import *  # noqa: F401,F403,E402
from xjax._src.numpy.quantiles import *  # noqa: F401,F403,E402
from xjax._src.numpy.einsum import einsum, einsum_path  # noqa: F401,E402
from xjax._src.numpy.histograms import *  # noqa: F401,F403,E402
from xjax._src.numpy.polynomial import *  # noqa: F401,F403,E402
from xjax._src.numpy.misc import *  # noqa: F401,F403,E402
from xjax._src.numpy.padding import *  # noqa: F401,F403,E402
from xjax._src.numpy.numerical import *  # noqa: F401,F403,E402
from xjax._src.numpy.vectorize import *  # noqa: F401,F403,E402
from xjax._src.numpy.index_objects import *  # noqa: F401,F403,E402
from xjax._src.numpy.io import *  # noqa: F401,F403,E402
from xjax._src.numpy import fft, linalg  # noqa: F401,E402
from xjax._src.numpy.control_flow_functions import (digitize, gcd, lcm, piecewise,  # noqa: F401,E402
                                                    polyval, searchsorted)
