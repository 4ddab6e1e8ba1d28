"""Public dtype utilities (mirrors ``jax.dtypes``).

>>> import xjax.dtypes
>>> xjax.dtypes.canonicalize_dtype('float64')  # with 64-bit types disabled
dtype('float32')
"""

from __future__ import annotations

from ml_dtypes import bfloat16  # noqa: F401  (the scalar type, as jax.dtypes.bfloat16)

from xjax._src.core.dtypes import (  # noqa: F401
    TypePromotionError,
    canonicalize_dtype,
    extended,
    finfo,
    float0,
    iinfo,
    issubdtype,
    itemsize_bits,
    prng_key,
    result_type,
    scalar_type_of,
)

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo",
           "float0", "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type",
           "scalar_type_of"]
