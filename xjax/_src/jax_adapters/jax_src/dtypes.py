"""``jax._src.dtypes`` under the import hook: xjax's dtype rules, with JAX's internal names."""

import numpy as np

from xjax._src.core.dtypes import *  # noqa: F401,F403
from xjax._src.core.dtypes import (  # noqa: F401
    ExtendedDType, TypePromotionError, canonicalize_dtype, extended, finfo, iinfo,
    is_weakly_typed, issubdtype, prng_key, result_type, scalar_type_of)
from xjax._src.core.dtypes import dtype as dtype  # noqa: F401

DType = np.dtype


def supports_inf(dtype) -> bool:
    """Whether floating ``dtype`` has infinities (float8 ``fn`` types have none)."""
    if not issubdtype(dtype, np.inexact):
        return False
    with np.errstate(all="ignore"):  # inf becomes NaN in a type without infinities
        return bool(np.isinf(np.array(np.inf).astype(dtype)))
