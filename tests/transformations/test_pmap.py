"""pmap: JAX 0.10.2's semantics (jit of a one-axis shard_map with check_vma=False) on the
devices of this process. The 4-device comparison with JAX is in tests/test_shard_map.py."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

N = len(xjax.devices())


def test_pmap_values_and_collectives():
    x = np.arange(1.0, N + 1, dtype=np.float32)
    np.testing.assert_allclose(xjax.pmap(lambda a: a / lax.psum(a, "i"), "i")(x), x / x.sum())
    np.testing.assert_array_equal(xjax.pmap(lambda a: a + lax.axis_index("i"), "i")(x),
                                  x + np.arange(N))
    got = xjax.pmap(lambda a: lax.all_gather(a, "i"), "i")(x)
    np.testing.assert_array_equal(got, np.tile(x, (N, 1)))
    m = np.arange(N * 6.0, dtype=np.float32).reshape(N, 2, 3)
    np.testing.assert_allclose(xjax.pmap(jnp.dot)(m, m.transpose(0, 2, 1)),
                               m @ m.transpose(0, 2, 1), rtol=1e-6)


def test_pmap_axes_static_and_kwargs():
    x = np.arange(2.0 * N, dtype=np.float32).reshape(2, N)
    got = xjax.pmap(lambda a, b: (a * b, b), in_axes=(1, None))(x, 3.0)
    np.testing.assert_array_equal(got[0], x.T * 3)
    np.testing.assert_array_equal(got[1], np.full(N, 3.0))
    np.testing.assert_array_equal(xjax.pmap(lambda a: a * 2, out_axes=1)(x.T), x * 2)
    np.testing.assert_array_equal(
        xjax.pmap(lambda a, n: a * n, static_broadcasted_argnums=1)(x[0], 4), x[0] * 4)
    np.testing.assert_array_equal(xjax.pmap(lambda a, b: a + b)(x[0], b=x[1]), x[0] + x[1])
    # out_axes=None keeps the first instance's value (JAX's check_vma=False shard_map)
    np.testing.assert_array_equal(
        xjax.pmap(lambda a: a + lax.axis_index("i"), "i", out_axes=None)(x[0]), x[0, 0])
    out = xjax.pmap(lambda t: {"s": t["a"].sum()})({"a": x.T})
    np.testing.assert_array_equal(out["s"], x.sum(0))


def test_pmap_composes():
    x = np.arange(1.0, N + 1, dtype=np.float32)
    f = xjax.pmap(lambda a: lax.psum(a ** 2, "i"), "i")
    np.testing.assert_allclose(xjax.grad(lambda z: f(z).sum())(x), 2 * N * x, rtol=1e-6)
    np.testing.assert_allclose(xjax.jit(f)(x), np.full(N, (x ** 2).sum()), rtol=1e-6)
    batch = np.stack([x, 2 * x])
    np.testing.assert_allclose(xjax.vmap(f)(batch), (batch ** 2).sum(1)[:, None]
                               * np.ones(N), rtol=1e-6)
    nested = xjax.pmap(xjax.pmap(lambda a: lax.psum(a, ("i", "j")), "j"), "i")
    np.testing.assert_array_equal(nested(np.ones((1, 1), np.float32)), [[1.0]])


def test_pmap_errors():
    with pytest.raises(ValueError, match="XLA devices are available"):
        xjax.pmap(lambda a: a)(np.arange(N + 1.0))
    with pytest.raises(ValueError, match="at least one argument with a mapped axis"):
        xjax.pmap(lambda a: a, in_axes=None)(np.arange(float(N)))
    with pytest.raises(ValueError, match="doesn't match received axis_size"):
        xjax.pmap(lambda a: a, axis_size=N + 1)(np.arange(float(N)))
    with pytest.raises(TypeError, match="pmap in_axes must be an int"):
        xjax.pmap(lambda a: a, in_axes=(0.5,))
    with pytest.raises(ValueError, match="static_broadcasted_argnums"):
        xjax.pmap(lambda a, n: a, static_broadcasted_argnums=1)(np.arange(float(N)))
    with pytest.raises(ValueError, match="must be non-empty"):
        xjax.pmap(lambda a: a, devices=[])
    with pytest.raises(NameError):
        xjax.pmap(lambda a: lax.psum(a, "j"), "i")(np.arange(float(N)))


def test_pmap_matches_jax():
    jax = pytest.importorskip("jax")
    x = np.arange(1.0, 2.0, dtype=np.float32)
    for make in [lambda L: (lambda a: a / L.psum(a, "i")),
                 lambda L: (lambda a: L.all_gather(a, "i") + L.axis_index("i"))]:
        want = jax.pmap(make(jax.lax), "i")(x)
        got = xjax.pmap(make(lax), "i")(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want))
