"""xjax.ops.segment_{sum,prod,min,max} against a NumPy loop, under jit/vmap/grad, and
against JAX where it is installed."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import ops
from xjax._src.testing.check_grads import check_grads

KINDS = ["sum", "prod", "min", "max"]
_UFUNCS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}


def _fn(kind):
    return getattr(ops, f"segment_{kind}")


def _identity(kind, dtype):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if dtype == np.bool_:
        return kind == "min"
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.max if kind == "min" else info.min
    return np.inf if kind == "min" else -np.inf


def reference(kind, data, ids, num_segments, clip=False):
    """A Python loop over the rows: the independent reference."""
    data, ids = np.asarray(data), np.asarray(ids)
    out = np.full((num_segments,) + data.shape[1:], _identity(kind, data.dtype), data.dtype)
    combine = _UFUNCS[kind]
    for i, s in enumerate(ids):
        if clip:
            s = min(max(s, 0), num_segments - 1)
        if 0 <= s < num_segments:
            out[s] = combine(out[s], data[i])
    return out


def _random(rng, shape, dtype):
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        low = 0 if np.issubdtype(dtype, np.unsignedinteger) else -3
        return rng.integers(low, 4, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _ids(rng, n, num_segments):
    """Ids with repeats, an out-of-range one, a negative one and (usually) empty segments."""
    ids = rng.integers(0, num_segments, n)
    ids[0], ids[-1] = num_segments + 2, -1
    return ids.astype(np.int32)


DTYPES = [np.float32, np.int32, np.int8, np.uint8, np.bool_, np.complex64]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_loop(kind, dtype):
    rng = np.random.default_rng(0)
    if dtype == np.bool_ and kind in ("sum", "prod"):
        with pytest.raises(TypeError, match="does not accept dtype bool"):
            _fn(kind)(np.ones(3, np.bool_), np.array([0, 1, 1]), 2)
        return
    data = _random(rng, (9, 2, 3), dtype)
    ids = _ids(rng, 9, 6)
    got = _fn(kind)(data, ids, 6)
    want = reference(kind, data, ids, 6)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


@pytest.mark.parametrize("kind", KINDS)
def test_num_segments_inferred_and_empty_segments(kind):
    data = np.arange(1.0, 6.0, dtype=np.float32)
    ids = np.array([0, 0, 3, 3, 1])  # segment 2 is empty
    got = _fn(kind)(data, ids)
    assert got.shape == (4,)
    np.testing.assert_array_equal(np.asarray(got), reference(kind, data, ids, 4))


@pytest.mark.parametrize("kind", KINDS)
def test_clip_mode_clamps_out_of_range_ids(kind):
    data = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    ids = np.array([-2, 0, 5, 1])
    got = _fn(kind)(data, ids, 2, mode="clip")
    np.testing.assert_array_equal(np.asarray(got), reference(kind, data, ids, 2, clip=True))


@pytest.mark.parametrize("kind", KINDS)
def test_bucket_size(kind):
    rng = np.random.default_rng(1)
    data = rng.uniform(0.5, 1.5, (11, 2)).astype(np.float32)
    ids = _ids(rng, 11, 4)
    got = _fn(kind)(data, ids, 4, bucket_size=3)
    np.testing.assert_allclose(np.asarray(got), reference(kind, data, ids, 4), rtol=1e-5)


def test_bucket_size_keeps_integer_dtype():
    got = ops.segment_prod(np.arange(1, 6, dtype=np.int8), np.zeros(5, np.int32), 1,
                           bucket_size=2)
    assert got.dtype == np.int8 and int(got[0]) == 120


def test_scalar_data_and_multi_dim_ids_broadcast_as_jax():
    np.testing.assert_array_equal(np.asarray(ops.segment_sum(3.0, np.array(1), 2)), [0.0, 3.0])
    got = ops.segment_sum(np.ones(2, np.float32), np.array([[0, 1], [1, 1]]), 2)
    np.testing.assert_array_equal(np.asarray(got), [1.0, 3.0])


def test_nan_propagates_through_max():
    got = ops.segment_max(np.array([1.0, np.nan, 2.0], np.float32), np.array([0, 0, 1]), 3)
    assert np.isnan(got[0]) and got[1] == 2.0 and got[2] == -np.inf


@pytest.mark.parametrize("kind", KINDS)
def test_jit_with_static_num_segments(kind):
    rng = np.random.default_rng(2)
    data = rng.standard_normal((7, 3)).astype(np.float32)
    ids = _ids(rng, 7, 5)
    got = xjax.jit(_fn(kind), static_argnums=2)(data, ids, 5)
    np.testing.assert_allclose(np.asarray(got), reference(kind, data, ids, 5), rtol=1e-5)
    compiled = xjax.jit(_fn(kind), static_argnums=2, static_argnames=("bucket_size", "mode"))
    got = compiled(data, ids, 5, bucket_size=3)
    np.testing.assert_allclose(np.asarray(got), reference(kind, data, ids, 5), rtol=1e-5)
    got = compiled(data, ids, 5, mode="clip")
    np.testing.assert_allclose(np.asarray(got), reference(kind, data, ids, 5, clip=True),
                               rtol=1e-5)


def test_traced_ids_without_num_segments_raise_concretization_error():
    f = xjax.jit(ops.segment_sum)
    with pytest.raises(xjax.errors.ConcretizationTypeError, match="num_segments"):
        f(np.ones(3, np.float32), np.array([0, 1, 1]))


def test_traced_num_segments_raise_concretization_error():
    f = xjax.jit(lambda d, s, n: ops.segment_sum(d, s, n))
    with pytest.raises(xjax.errors.ConcretizationTypeError):
        f(np.ones(3, np.float32), np.array([0, 1, 1]), 2)


def test_bad_arguments():
    data, ids = np.ones(3, np.float32), np.array([0, 1, 1])
    with pytest.raises(ValueError, match="num_segments must be non-negative"):
        ops.segment_sum(data, ids, -1)
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        ops.segment_sum(data, ids, 2.0)
    with pytest.raises(TypeError, match="Indexer must have integer or boolean type"):
        ops.segment_sum(data, ids.astype(np.float32), 2)
    with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
        ops.segment_sum([1.0, 2.0], ids[:2], 2)
    with pytest.raises(NotImplementedError, match="boolean segment_ids"):
        ops.segment_sum(data, np.array([True, False, True]), 2)
    with pytest.raises(ValueError, match="zero-size array"):
        ops.segment_sum(np.ones(0, np.float32), np.zeros(0, np.int32))
    assert ops.segment_sum(data, ids, 0).shape == (0,)
    assert ops.segment_sum(data, ids, np.int64(2)).shape == (2,)
    assert ops.segment_sum(data, ids, jnp.array(2)).shape == (2,)


@pytest.mark.parametrize("kind", KINDS)
def test_vmap_matches_python_loop(kind):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 6, 2)).astype(np.float32)
    ids = np.stack([_ids(rng, 6, 3) for _ in range(4)])
    f = _fn(kind)
    got = xjax.vmap(lambda d, s: f(d, s, 3))(data, ids)
    want = np.stack([reference(kind, data[b], ids[b], 3) for b in range(4)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)
    # only the data batched
    got = xjax.vmap(lambda d: f(d, ids[0], 3))(data)
    want = np.stack([reference(kind, data[b], ids[0], 3) for b in range(4)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5)


@pytest.mark.parametrize("kind", [k for k in KINDS if k != "prod"])
def test_grad_matches_finite_differences(kind):
    rng = np.random.default_rng(4)
    data = rng.uniform(0.5, 1.5, (8, 2))  # distinct values: no ties for min/max
    ids = _ids(rng, 8, 3)
    with xjax.enable_x64(True):
        check_grads(lambda d: _fn(kind)(d, ids, 3), (jnp.asarray(data),), order=1,
                    modes=("fwd", "rev"))


def test_grad_of_segment_prod_raises_as_jax():
    # JAX's segment_prod is a scatter-multiply, whose update gradient needs unique indices
    ids = np.array([0, 0, 1])
    f = lambda d: _fn("prod")(d, ids, 2).sum()  # noqa: E731
    with pytest.raises(NotImplementedError, match="scatter_mul gradients"):
        xjax.grad(f)(jnp.array([1.0, 2.0, 3.0]))
    with pytest.raises(NotImplementedError, match="scatter_mul gradients"):
        xjax.jvp(f, (jnp.array([1.0, 2.0, 3.0]),), (jnp.ones(3),))


@pytest.mark.parametrize("kind", ["min", "max"])
def test_grad_splits_ties_evenly(kind):
    # three tied winners in segment 0 share its cotangent, as JAX's scatter rules do
    data = np.array([2.0, 2.0, 2.0, 5.0], np.float32)
    if kind == "max":
        data[3] = -5.0
    ids = np.array([0, 0, 0, 1])
    g = xjax.grad(lambda d: _fn(kind)(d, ids, 2).sum())(data)
    np.testing.assert_allclose(np.asarray(g), [1 / 3, 1 / 3, 1 / 3, 1.0], rtol=1e-6)


def test_grad_of_dropped_rows_is_zero():
    ids = np.array([0, 5, -1, 1])
    g = xjax.grad(lambda d: (ops.segment_sum(d, ids, 2) ** 2).sum())(
        np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    np.testing.assert_allclose(np.asarray(g), [2.0, 0.0, 0.0, 8.0])


# -- JAX as a differential reference (skipped without it) --

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", [np.float32, np.int16, np.uint8, np.bool_])
@pytest.mark.parametrize("bucket_size", [None, 2])
def test_matches_jax(kind, dtype, bucket_size):
    jax = pytest.importorskip("jax")
    if dtype == np.bool_ and kind in ("sum", "prod"):
        return  # both raise TypeError (test_matches_loop)
    rng = np.random.default_rng(5)
    data = _random(rng, (10, 3), dtype)
    ids = _ids(rng, 10, 4)
    kwargs = dict(num_segments=4, bucket_size=bucket_size)
    got = _fn(kind)(data, ids, **kwargs)
    want = getattr(jax.ops, f"segment_{kind}")(data, ids, **kwargs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)


@pytest.mark.parametrize("kind", ["sum", "min", "max"])
def test_grad_matches_jax_with_ties(kind):
    jax = pytest.importorskip("jax")
    data = np.array([1.0, 3.0, 3.0, 2.0, 2.0, 7.0], np.float32)
    ids = np.array([0, 0, 0, 1, 1, 4])
    weights = np.arange(1.0, 4.0, dtype=np.float32)

    def loss(mod, d):
        return (getattr(mod.ops, f"segment_{kind}")(d, ids, 3) * weights).sum()
    got = xjax.grad(lambda d: loss(xjax, d))(data)
    want = jax.grad(lambda d: loss(jax, d))(data)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
