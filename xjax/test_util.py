"""``xjax.test_util``: testing helpers users share with JAX (``check_grads``)."""

from xjax.testing.check_grads import check_grads, check_jvp, check_vjp  # noqa: F401
