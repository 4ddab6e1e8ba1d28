"""xjax.nn.initializers: shapes, dtypes, statistics, fans and errors; bit-for-bit against
JAX 0.10.2 where it is installed (xjax.random reproduces jax.random's streams)."""

import numpy as np
import pytest

import xjax
from xjax import random
from xjax._src.core import dtypes
from xjax._src.nn import initializers as init

try:
    import jax
except ImportError:
    jax = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is not installed")

FACTORIES = {
    "constant": lambda m: m.constant(0.5),
    "uniform": lambda m: m.uniform(2.0),
    "normal": lambda m: m.normal(3.0),
    "truncated_normal": lambda m: m.truncated_normal(2.0, lower=-1.0, upper=1.5),
    "glorot_uniform": lambda m: m.glorot_uniform(),
    "glorot_normal": lambda m: m.glorot_normal(),
    "xavier_uniform": lambda m: m.xavier_uniform(),
    "xavier_normal": lambda m: m.xavier_normal(),
    "lecun_uniform": lambda m: m.lecun_uniform(),
    "lecun_normal": lambda m: m.lecun_normal(),
    "he_uniform": lambda m: m.he_uniform(),
    "he_normal": lambda m: m.he_normal(),
    "kaiming_uniform": lambda m: m.kaiming_uniform(),
    "kaiming_normal": lambda m: m.kaiming_normal(),
    "vs_fan_out_normal": lambda m: m.variance_scaling(0.5, "fan_out", "normal"),
    "vs_geo_avg_uniform": lambda m: m.variance_scaling(1.5, "fan_geo_avg", "uniform"),
    "vs_batch_axis": lambda m: m.variance_scaling(1.0, "fan_in", "truncated_normal",
                                                  in_axis=1, out_axis=2, batch_axis=0),
    "vs_multi_axes": lambda m: m.variance_scaling(1.0, "fan_avg", "uniform",
                                                  in_axis=(0, 1), out_axis=-1),
    "zeros": lambda m: m.zeros,
    "ones": lambda m: m.ones,
}
SHAPES = [(4, 5), (3, 3, 2, 6)]


@needs_jax
@pytest.mark.parametrize("dtype", [np.dtype(np.float32), np.dtype(np.float16),
                                   dtypes.bfloat16], ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(FACTORIES))
def test_bitwise_equal_to_jax(name, shape, dtype):
    if name == "vs_batch_axis" and len(shape) < 3:
        shape = (2,) + shape
    got = FACTORIES[name](init)(random.PRNGKey(42), shape, dtype)
    want = FACTORIES[name](jax.nn.initializers)(jax.random.PRNGKey(42), shape, dtype)
    assert got.shape == shape and got.dtype == want.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


@needs_jax
@pytest.mark.parametrize("distribution", ["uniform", "truncated_normal", "normal"])
def test_complex_variance_scaling_matches_jax(distribution):
    got = init.variance_scaling(1.0, "fan_in", distribution)(random.PRNGKey(1), (3, 4),
                                                             np.complex64)
    want = jax.nn.initializers.variance_scaling(1.0, "fan_in", distribution)(
        jax.random.PRNGKey(1), (3, 4), np.complex64)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-7)


def test_default_dtype_and_typed_keys():
    for name in ("normal", "glorot_uniform", "zeros", "constant"):
        out = FACTORIES[name](init)(random.key(0), (2, 3))
        assert out.dtype == np.float32 and out.shape == (2, 3)
    # the dtype given to the factory is the default of the initializer
    out = init.normal(dtype=np.float16)(random.PRNGKey(0), (2,))
    assert out.dtype == np.float16


@pytest.mark.parametrize("distribution", ["uniform", "normal", "truncated_normal"])
@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"])
def test_variance_scaling_statistics(mode, distribution):
    shape = (3, 3, 40, 60)
    fan_in, fan_out = 9 * 40, 9 * 60
    n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
         "fan_geo_avg": np.sqrt(fan_in * fan_out)}[mode]
    out = np.asarray(init.variance_scaling(2.0, mode, distribution)(random.PRNGKey(3),
                                                                    shape))
    np.testing.assert_allclose(out.var(), 2.0 / n, rtol=0.05)
    assert abs(out.mean()) < 0.05 * np.sqrt(2.0 / n)
    if distribution == "uniform":
        assert np.abs(out).max() <= np.sqrt(3 * 2.0 / n)
    if distribution == "truncated_normal":
        assert np.abs(out).max() <= 2 * np.sqrt(2.0 / n) / .87962566103423978 + 1e-6


def test_fans():
    assert init._compute_fans((4, 5)) == (4, 5)
    assert init._compute_fans((3, 3, 4, 5)) == (36, 45)
    assert init._compute_fans((2, 3, 4), in_axis=1, out_axis=2, batch_axis=0) == (3, 4)
    with pytest.raises(ValueError, match="Can't compute input and output sizes"):
        init._compute_fans((4,))


def test_errors():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1.0, "fan_all", "normal")(key, (2, 2))
    with pytest.raises(ValueError, match="invalid distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")(key, (2, 2))
    with pytest.raises(ValueError, match="at least a 2D shape"):
        init.orthogonal()(key, (3,))
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        init.delta_orthogonal()(key, (3, 3))
    with pytest.raises(ValueError, match="fan_in"):
        init.delta_orthogonal()(key, (3, 5, 4))


def test_initializers_under_jit():
    f = xjax.jit(lambda key: init.he_normal()(key, (4, 6)))
    key = random.PRNGKey(7)
    np.testing.assert_array_equal(np.asarray(f(key)),
                                  np.asarray(init.he_normal()(key, (4, 6))))


def _orthogonal_available():
    return hasattr(random, "orthogonal")


@pytest.mark.parametrize("shape,column_axis", [((4, 4), -1), ((6, 3), -1), ((3, 6), -1),
                                               ((2, 3, 5), 0)])
def test_orthogonal(shape, column_axis):
    if not _orthogonal_available():
        with pytest.raises(NotImplementedError, match="xjax.random.orthogonal"):
            init.orthogonal()(random.PRNGKey(0), shape)
        return
    out = np.asarray(init.orthogonal(scale=2.0, column_axis=column_axis)(random.PRNGKey(0),
                                                                       shape))
    assert out.shape == shape
    mat = np.moveaxis(out, column_axis, -1).reshape(-1, shape[column_axis]) / 2
    gram = mat.T @ mat if mat.shape[0] >= mat.shape[1] else mat @ mat.T
    np.testing.assert_allclose(gram, np.eye(len(gram)), atol=1e-5)


def test_delta_orthogonal():
    if not _orthogonal_available():
        with pytest.raises(NotImplementedError, match="xjax.random.orthogonal"):
            init.delta_orthogonal()(random.PRNGKey(0), (3, 3, 4, 4))
        return
    out = np.array(init.delta_orthogonal()(random.PRNGKey(0), (3, 3, 4, 4)))  # a writeable copy
    centre = out[1, 1]
    np.testing.assert_allclose(centre @ centre.T, np.eye(4), atol=1e-5)
    out[1, 1] = 0
    assert not out.any()


@needs_jax
@pytest.mark.parametrize("shape,column_axis", [((4, 4), -1), ((6, 3), -1), ((3, 6), 0),
                                               ((2, 3, 5), 0)])
def test_orthogonal_matches_jax(shape, column_axis):
    if not _orthogonal_available():
        pytest.skip("xjax.random.orthogonal does not exist yet")
    got = init.orthogonal(column_axis=column_axis)(random.PRNGKey(5), shape)
    want = jax.nn.initializers.orthogonal(column_axis=column_axis)(jax.random.PRNGKey(5),
                                                                   shape)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-6)
    got = init.delta_orthogonal()(random.PRNGKey(5), (3, 3, 4, 4))
    want = jax.nn.initializers.delta_orthogonal()(jax.random.PRNGKey(5), (3, 3, 4, 4))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), atol=1e-6)
