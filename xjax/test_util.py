"""``xjax.test_util``: public names (the implementation is in ``xjax._src.api.test_util``).
"""

from xjax._src.testing.check_grads import (  # noqa: F401
    check_grads as check_grads, check_jvp as check_jvp, check_vjp as check_vjp,
)
