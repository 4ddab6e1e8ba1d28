"""``jax._src.checkify`` under the import hook: xjax's checkify (Flax's ``nnx.checkify``)."""

from xjax._src.experimental.checkify import *  # noqa: F401,F403
from xjax._src.experimental.checkify import (  # noqa: F401
    Error, JaxException, checkify, user_checks)
from typing import Any as Out  # noqa: F401  (JAX's type variable of checkified outputs)
