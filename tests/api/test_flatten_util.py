"""xjax.flatten_util.ravel_pytree: against NumPy concatenation, JAX's dtype rules and errors,
under jit/grad/vmap, and against JAX itself where it is installed."""

import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.flatten_util import ravel_pytree


def _np_ravel(leaves, dtype):
    return np.concatenate([np.asarray(x, dtype).ravel() for x in leaves])


def test_round_trip_matches_numpy_concatenation():
    rng = np.random.RandomState(0)
    tree = {"b": (rng.randn(2, 3).astype(np.float32), rng.randn(4).astype(np.float32)),
            "a": [np.float32(rng.randn()), rng.randn(1, 2, 2).astype(np.float32)]}
    flat, unravel = ravel_pytree(tree)
    leaves = [tree["a"][0], tree["a"][1], tree["b"][0], tree["b"][1]]  # sorted dict keys
    np.testing.assert_array_equal(np.asarray(flat), _np_ravel(leaves, np.float32))
    assert flat.dtype == np.float32 and flat.shape == (1 + 4 + 6 + 4,)
    back = unravel(flat)
    assert xjax.tree.structure(back) == xjax.tree.structure(tree)
    for got, want in zip(xjax.tree.leaves(back), xjax.tree.leaves(tree)):
        assert got.shape == np.shape(want) and got.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(got), want)


def test_empty_pytree_gives_empty_float32_vector():
    for tree in [(), [], {}, None, {"a": [None, ()]}]:
        flat, unravel = ravel_pytree(tree)
        assert flat.shape == (0,) and flat.dtype == np.float32
        assert unravel(flat) == tree


def test_zero_size_leaves():
    flat, unravel = ravel_pytree([jnp.ones((2, 0)), jnp.float32(3.0)])
    np.testing.assert_array_equal(np.asarray(flat), [3.0])
    a, b = unravel(flat)
    assert a.shape == (2, 0) and b.shape == ()


@pytest.mark.parametrize("leaves, want", [
    ([np.ones(2, np.int32), np.ones(2, np.float16), 3], np.float16),
    ([np.ones(2, np.uint8), np.ones(1, np.int8)], np.int16),
    ([jnp.ones(2, jnp.bfloat16), jnp.ones(1, jnp.float16)], np.float32),
    ([np.ones(2, np.float32), np.ones(1, np.complex64)], np.complex64),
    ([1, 2.0, True], np.float32),  # Python scalars count at their default dtypes, strongly
])
def test_mixed_dtypes_promote_and_unravel_casts_back(leaves, want):
    flat, unravel = ravel_pytree(leaves)
    assert flat.dtype == want and not flat.aval.weak_type
    np.testing.assert_array_equal(np.asarray(flat), _np_ravel(leaves, want))
    back = unravel(flat)
    for got, leaf in zip(back, leaves):
        want_leaf_dtype = xjax.dtypes.canonicalize_dtype(np.asarray(leaf).dtype)
        assert got.dtype == want_leaf_dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(leaf, want_leaf_dtype))


def test_mixed_dtype_unravel_rejects_other_dtypes():
    flat, unravel = ravel_pytree([np.ones(2, np.int32), np.ones(2, np.float16)])
    with pytest.raises(TypeError, match="unravel function given array of dtype float32, "
                                        "but expected dtype float16"):
        unravel(jnp.ones(4, jnp.float32))


def test_single_dtype_unravel_keeps_the_given_dtype():
    _, unravel = ravel_pytree([jnp.ones(2), jnp.ones((1, 2))])
    a, b = unravel(jnp.arange(4, dtype=jnp.int32))
    assert a.dtype == b.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(b), [[2, 3]])


def test_unravel_of_the_wrong_length_raises_value_error():
    _, unravel = ravel_pytree([jnp.ones(2), jnp.ones(3)])
    with pytest.raises(ValueError, match="Sum of sizes 5 must be equal to dimension 0"):
        unravel(jnp.ones(4))


def test_complex_to_real_cast_back_is_silent():
    flat, unravel = ravel_pytree([jnp.ones(2), jnp.ones(1, jnp.complex64)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        real, cplx = unravel(flat * 1j)
    assert real.dtype == np.float32 and cplx.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(real), [0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(cplx), [1j])


def test_non_array_leaves_raise_type_error():
    with pytest.raises(TypeError, match="Cannot determine dtype"):
        ravel_pytree([object()])


def test_under_jit_grad_and_vmap():
    tree = (jnp.ones(2), jnp.arange(3.0))
    flat = xjax.jit(lambda t: ravel_pytree(t)[0])(tree)
    np.testing.assert_array_equal(np.asarray(flat), [1, 1, 0, 1, 2])
    grads = xjax.grad(lambda t: jnp.sum(ravel_pytree(t)[0] ** 2))(tree)
    np.testing.assert_array_equal(np.asarray(grads[1]), [0.0, 2.0, 4.0])
    batched = xjax.vmap(lambda t: ravel_pytree(t)[0])((jnp.ones((4, 2)), jnp.zeros((4, 3))))
    np.testing.assert_array_equal(np.asarray(batched), np.tile([1, 1, 0, 0, 0], (4, 1)))
    _, unravel = ravel_pytree([np.ones(2, np.float32), np.int32(3)])
    a, b = xjax.vmap(unravel)(jnp.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(np.asarray(b), [2, 5])
    assert b.dtype == np.int32
    # Round trip inside jit, the unravel function a static argument: equal structures give
    # equal (and equally hashed) unravel functions, so the second call reuses the trace.
    traces = []

    def double(flat, unravel):
        traces.append(1)
        return unravel(flat * 2)
    double = xjax.jit(double, static_argnums=1)
    for _ in range(2):
        flat, unravel = ravel_pytree({"w": jnp.ones((2, 2)), "b": jnp.ones(2, jnp.int32)})
        out = double(flat, unravel)
    assert len(traces) == 1 and out["b"].dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out["w"]), 2 * np.ones((2, 2)))


def test_x64_keeps_64_bit_leaves():
    with xjax.enable_x64(True):
        flat, unravel = ravel_pytree([np.ones(2), np.int64(3), 1.0])
        assert flat.dtype == np.float64
        assert [x.dtype for x in unravel(flat)] == [np.float64, np.int64, np.float64]
    flat, _ = ravel_pytree([np.ones(2), np.int64(3)])
    assert flat.dtype == np.float32


@pytest.mark.parametrize("case", range(5))
def test_matches_jax(case):
    jax = pytest.importorskip("jax")
    from jax.flatten_util import ravel_pytree as jax_ravel_pytree
    rng = np.random.RandomState(case)
    trees = [
        {"a": rng.randn(3).astype(np.float32), "b": (rng.randn(2, 2).astype(np.float32), 2.0)},
        [rng.randint(0, 5, 2).astype(np.int32), rng.randn(2).astype(np.float16), 3],
        [1, 2.0, 3],
        (rng.randn(2).astype(np.float32), (rng.randn(1) + 1j).astype(np.complex64)),
        [rng.randint(0, 5, 3).astype(np.uint8), np.int8(-1), True],
    ]
    tree = trees[case]
    flat, unravel = ravel_pytree(tree)
    jflat, junravel = jax_ravel_pytree(tree)
    assert flat.dtype == jflat.dtype and flat.aval.weak_type == jflat.aval.weak_type
    np.testing.assert_array_equal(np.asarray(flat), np.asarray(jflat))
    for got, want in zip(xjax.tree.leaves(unravel(flat)), jax.tree.leaves(junravel(jflat))):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
