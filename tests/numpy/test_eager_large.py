"""Eager operations on large arrays run as XLA programs, as JAX's do, and agree with NumPy
and with the same operations under jit; small arrays stay on the NumPy kernels."""

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax._src.interpreters.eval import LARGE_ELEMENTS

RNG = np.random.default_rng(0)
BIG = RNG.standard_normal((LARGE_ELEMENTS // 8, 10)).astype(np.float32)
SMALL = BIG[:3]


def _on_device(x) -> bool:
    """The result came from an XLA executable (a device buffer, no host copy yet)."""
    return x._npy is None and x._buffer is not None


@pytest.mark.parametrize("fun, reference", [
    (jnp.exp, np.exp),
    (lambda x: x * 2.0 - 1.0, lambda x: x * np.float32(2.0) - np.float32(1.0)),
    (lambda x: jnp.where(x > 0, x, 0.5 * x), lambda x: np.where(x > 0, x, np.float32(0.5) * x)),
])
def test_elementwise_runs_compiled(fun, reference):
    out = fun(jnp.asarray(BIG))
    assert _on_device(out)
    np.testing.assert_allclose(np.asarray(out), reference(BIG), rtol=2e-6, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(jax.jit(fun)(BIG)))


@pytest.mark.parametrize("name", ["mean", "sum", "max", "min", "prod", "std", "var"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions_match_numpy_and_jit(name, axis):
    x = jnp.asarray(BIG if name != "prod" else 1 + BIG / 100)
    fun = getattr(jnp, name)
    out = fun(x, axis=axis)
    expected = getattr(np, name)(np.asarray(x, np.float64), axis=axis)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-4, atol=1e-5)
    # the eager call is the jitted program: the same bits
    np.testing.assert_array_equal(np.asarray(out),
                                  np.asarray(jax.jit(lambda v: fun(v, axis=axis))(x)))


def test_broadcasting_binary_op_is_one_program():
    x = jnp.asarray(BIG)
    centered = x - x.mean(0)
    assert _on_device(centered)
    np.testing.assert_allclose(np.asarray(centered), BIG - BIG.mean(0), rtol=1e-5, atol=1e-5)
    scaled = centered / jnp.std(centered, axis=0)
    np.testing.assert_allclose(np.asarray(scaled), (BIG - BIG.mean(0)) / BIG.std(0),
                               rtol=1e-4, atol=1e-4)
    # NumPy and Python operands promote as usual
    np.testing.assert_array_equal(np.asarray(jnp.add(BIG, np.arange(10, dtype=np.int32))),
                                  BIG + np.arange(10, dtype=np.float32))


def test_small_arrays_stay_on_numpy():
    x = jnp.asarray(SMALL)
    for out in (jnp.exp(x), x - x.mean(0), jnp.sum(x, axis=1)):
        assert out._npy is not None


def test_staging_is_unchanged():
    # JAX jits these with inline=True: no equation of their own in a jaxpr
    text = str(jax.make_jaxpr(lambda v: v - jnp.mean(v, axis=0))(BIG))
    assert "jit" not in text and "reduce_sum" in text and "sub" in text


@pytest.mark.parametrize("call", [lambda x: jnp.mean(x, axis=2), lambda x: jnp.sum(x, axis=-3),
                                  lambda x: x - jnp.ones(3), lambda x: jnp.max(x, axis=(0, 0))])
def test_errors_on_large_arrays_are_the_small_ones(call):
    errors = []
    for value in (SMALL, BIG):
        with pytest.raises(Exception) as info:
            call(jnp.asarray(value))
        errors.append((type(info.value), str(info.value).replace(str(value.shape), "S")))
    assert errors[0] == errors[1]
