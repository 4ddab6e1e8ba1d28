"""``xjax.extend.linear_util``: functions wrapped with their transformations, as
``jax.extend.linear_util`` (xjax's small :class:`~xjax.api_util.WrappedFun`).

>>> from xjax.extend import linear_util as lu
>>> lu.wrap_init(lambda x, scale: x * scale, {"scale": 3}).call_wrapped(2)
6
"""

from xjax._src.transformations.api_util import (  # noqa: F401
    StoreException as StoreException, WrappedFun as WrappedFun, wrap_init as wrap_init,
)
from xjax._src.jax_adapters.extend.linear_util import __all__ as __all__  # noqa: F401
