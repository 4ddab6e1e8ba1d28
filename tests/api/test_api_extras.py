"""Smaller public names of ``jax``: closure_convert, typing, dlpack, version, Device."""

from functools import partial

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp


def test_closure_convert_hoists_traced_closed_over_values():
    def outer(a):
        f, consts = xjax.closure_convert(lambda x: x * a + jnp.sin(a), 1.0)
        return f(2.0, *consts), len(consts)

    value, n = outer(3.0)
    assert n == 0  # nothing traced outside a transformation
    np.testing.assert_allclose(float(value), 6.0 + np.sin(3.0), rtol=1e-6)
    np.testing.assert_allclose(float(xjax.grad(lambda a: outer(a)[0])(3.0)),
                               2.0 + np.cos(3.0), rtol=1e-6)
    f, consts = xjax.closure_convert(lambda x: x + 1, 1.0)
    with pytest.raises(TypeError, match="same Pytree structure"):
        f((1.0, 2.0), *consts)


def test_closure_convert_carries_closed_values_through_custom_vjp():
    @partial(xjax.custom_vjp, nondiff_argnums=(0,))
    def solve(fn, x0, *args):
        return fn(x0, *args)

    def fwd(fn, x0, *args):
        return solve(fn, x0, *args), (x0, args)

    def bwd(fn, res, g):
        x0, args = res
        return (g * 0.0, *[g * 2.0 for _ in args])  # deliberately not the true derivative

    solve.defvjp(fwd, bwd)

    def minimize_like(a):
        fn, args = xjax.closure_convert(lambda x: x * a, 1.0)
        assert len(args) == 1  # `a` is traced under grad, so it is hoisted
        return solve(fn, 1.0, *args)

    assert float(xjax.grad(minimize_like)(5.0)) == 2.0


def test_typing_dlpack_version_device():
    from xjax.typing import ArrayLike, DTypeLike  # noqa: F401
    import xjax.version
    assert xjax.version.__version__ == xjax.__version__
    assert xjax.dlpack.is_supported_dtype(jnp.float32)
    assert not xjax.dlpack.is_supported_dtype(np.dtype("V4"))
    np.testing.assert_array_equal(xjax.dlpack.from_dlpack(np.arange(3.0)), [0.0, 1.0, 2.0])
    assert all(isinstance(d, xjax.Device) for d in xjax.devices())


def test_device_put_of_traced_values_is_the_value():
    """JAX's device_put inside jit/grad/vmap is the identity on one device."""
    x = xjax.numpy.arange(3.0)
    np.testing.assert_array_equal(xjax.jit(lambda x: xjax.device_put(x) * 2)(x), [0, 2, 4])
    np.testing.assert_array_equal(xjax.grad(lambda x: (xjax.device_put(x) ** 2).sum())(x),
                                  [0, 2, 4])
    np.testing.assert_array_equal(xjax.vmap(lambda x: xjax.device_put(x) + 1)(x), [1, 2, 3])


def test_device_put_rejects_targets_that_are_not_devices_or_shardings():
    """As JAX: a ValueError naming the value (a string made it recurse forever)."""
    for fun in (lambda x: xjax.device_put(x, "cpu"),
                xjax.jit(lambda x: xjax.device_put(x, "cpu")),
                lambda x: xjax.device_put((x, x), (None, 3))):
        with pytest.raises(ValueError, match="Received invalid value"):
            fun(np.ones(2, np.float32))


def test_live_arrays_lists_arrays_alive_and_not_deleted():
    x = jnp.arange(3.0)
    y = jnp.ones(2)
    y.delete()
    live = xjax.live_arrays()
    assert any(a is x for a in live)
    assert not any(a is y for a in live)
    assert all(type(a) is xjax.Array for a in live)
    del live
    with pytest.raises(RuntimeError):
        xjax.live_arrays("no_such_platform")
