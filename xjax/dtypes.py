"""Public dtype utilities (mirrors ``jax.dtypes``).

>>> import xjax.dtypes
>>> xjax.dtypes.canonicalize_dtype('float64')  # with 64-bit types disabled
dtype('float32')
"""

from xjax._src.core.dtypes import (  # noqa: F401
    TypePromotionError as TypePromotionError, canonicalize_dtype as canonicalize_dtype,
    extended as extended, finfo as finfo, float0 as float0, iinfo as iinfo,
    issubdtype as issubdtype, itemsize_bits as itemsize_bits, prng_key as prng_key,
    result_type as result_type, scalar_type_of as scalar_type_of,
)
from xjax._src.api.dtypes import (  # noqa: F401
    bfloat16 as bfloat16,
)
from xjax._src.api.dtypes import __all__ as __all__  # noqa: F401
