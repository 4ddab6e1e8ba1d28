"""``xjax.errors``: the classes of JAX's errors."""

import xjax
from xjax import errors


def test_xla_errors_at_run_time_are_jax_runtime_errors():
    # As in JAX (jaxlib's XlaRuntimeError is errors.JaxRuntimeError): Equinox tests for it.
    lowered = xjax.jit(lambda x: x + 1).lower(1.0)
    try:
        lowered.compile(compiler_options={"an option that does not exist": "1"})
    except errors.JaxRuntimeError as e:
        assert "No such compile option" in str(e)
    else:
        raise AssertionError("an unknown compiler option was accepted")
