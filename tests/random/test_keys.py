"""PRNG keys: typed key arrays (key<fry>) and legacy uint32 keys, seeding, key derivation,
the errors JAX raises for things that are not keys, and keys through jit and vmap."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import dtypes, random


def _data(keys):
    return np.asarray(random.key_data(keys))


# -- seeding --

@pytest.mark.parametrize("seed,expected", [
    (0, [0, 0]), (42, [0, 42]), (-1, [0, 4294967295]), (2 ** 31, [0, 2147483648]),
    (2 ** 32 + 5, [0, 5]), (True, [0, 1]), (np.uint32(2 ** 32 - 1), [0, 4294967295]),
    (np.int64(2 ** 40 + 3), [0, 3]), (np.int8(-3), [0, 4294967293]),
])
def test_prng_key_seeds(seed, expected):
    """Seeds as JAX converts them with 64-bit types disabled (low 32 bits kept)."""
    k = random.PRNGKey(seed)
    assert k.dtype == np.uint32 and k.shape == (2,)
    np.testing.assert_array_equal(np.asarray(k), expected)


@pytest.mark.parametrize("seed,expected", [
    (-1, [4294967295, 4294967295]), (2 ** 40 + 3, [256, 3]), (np.int32(-3), [0, 4294967293]),
])
def test_prng_key_seeds_with_x64(seed, expected):
    with xjax.config.override(jax_enable_x64=True):
        np.testing.assert_array_equal(np.asarray(random.PRNGKey(seed)), expected)


def test_traced_seed_matches_concrete():
    seeds = jnp.array([0, 1, 42, -7])
    batched = xjax.vmap(random.PRNGKey)(seeds)
    jitted = xjax.jit(random.PRNGKey)(jnp.int32(-7))
    np.testing.assert_array_equal(np.asarray(batched),
                                  np.stack([np.asarray(random.PRNGKey(s)) for s in (0, 1, 42, -7)]))
    np.testing.assert_array_equal(np.asarray(jitted), np.asarray(random.PRNGKey(-7)))


def test_seed_errors():
    with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
        random.PRNGKey(1.5)
    with pytest.raises(TypeError, match="key accepts a scalar seed, but was given an array of "
                                        r"shape \(2,\) != \(\). Use jax.vmap for batching"):
        random.key(jnp.zeros(2, jnp.int32))
    with pytest.raises(TypeError, match="accepts a scalar seed, but was given a PRNG key"):
        random.key(random.key(0))
    with pytest.raises(OverflowError):
        random.PRNGKey(2 ** 70)


# -- typed keys --

def test_typed_key_repr_and_attributes():
    k = random.key(0)
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert k.shape == () and k.ndim == 0 and k.size == 1
    assert str(k.dtype) == "key<fry>" and k.dtype == random.key_dtype()
    assert dtypes.issubdtype(k.dtype, dtypes.prng_key)
    assert random.key_impl(k) == "threefry2x32"
    ks = random.split(k, 3)
    assert repr(ks) == ("Array((3,), dtype=key<fry>) overlaying:\n"
                        "[[1797259609 2579123966]\n [ 928981903 3453687069]\n"
                        " [4146024105 2718843009]]")


def test_typed_key_array_operations():
    ks = random.split(random.key(0), 6)
    assert len(ks) == 6 and ks.shape == (6,)
    np.testing.assert_array_equal(_data(ks[1]), _data(ks)[1])
    np.testing.assert_array_equal(_data(ks[1:3]), _data(ks)[1:3])
    assert [k.shape for k in ks] == [()] * 6
    grid = ks.reshape(2, 3)
    assert grid.shape == (2, 3) and grid[1, 2].shape == ()
    np.testing.assert_array_equal(_data(grid[1, 2]), _data(ks)[5])
    assert grid.T.shape == (3, 2) and grid.ravel().shape == (6,)
    assert ks[None].shape == (1, 6) and ks[None].squeeze().shape == (6,)
    assert grid[..., 0].shape == (2,)
    with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
        len(random.key(0))
    with pytest.raises(TypeError, match="iteration over a 0-d key array"):
        iter(random.key(0))


def test_typed_key_equality_and_wrapping():
    k = random.key(42)
    assert bool(random.wrap_key_data(random.key_data(k)) == k)
    assert not bool(random.key(1) == k)
    assert bool(random.key(1) != k)
    assert random.key_data(k).dtype == np.uint32
    np.testing.assert_array_equal(_data(k), [0, 42])
    keys = random.wrap_key_data(np.zeros((4, 2), np.uint32))
    assert keys.shape == (4,)


def test_typed_keys_are_not_numbers():
    k = random.key(0)
    with pytest.raises(TypeError, match="cannot be converted to a NumPy array"):
        np.asarray(k)
    with pytest.raises(TypeError, match="cannot be converted to boolean"):
        bool(k)
    with pytest.raises(TypeError):
        k + 1


def test_typed_and_raw_keys_give_the_same_numbers():
    for fn in (lambda k: random.normal(k, (4,)), lambda k: random.bits(k, (3,)),
               lambda k: random.randint(k, (3,), 0, 9)):
        np.testing.assert_array_equal(np.asarray(fn(random.key(7))),
                                      np.asarray(fn(random.PRNGKey(7))))
    assert isinstance(random.split(random.key(7)), random.PRNGKeyArray)
    assert isinstance(random.fold_in(random.key(7), 3), random.PRNGKeyArray)
    assert random.split(random.PRNGKey(7)).dtype == np.uint32
    np.testing.assert_array_equal(_data(random.split(random.key(7), (2, 3))),
                                  np.asarray(random.split(random.PRNGKey(7), (2, 3))))


# -- errors for things that are not keys --

@pytest.mark.parametrize("bad,message", [
    (jnp.zeros(2, jnp.float32), "expected key_data.dtype = uint32; got dtype=float32"),
    (np.zeros(2, np.float32), "expected key_data.dtype = uint32; got dtype=float32"),
    (jnp.zeros(2, jnp.int32), "expected key_data.dtype = uint32; got dtype=int32"),
    (jnp.zeros(3, jnp.uint32), r"expected key_data.shape to end with \(2,\); got shape=\(3,\)"),
    (1.5, "expected key_data to have ndim, shape, and dtype attributes. Got 1.5"),
    (3, "expected key_data to have ndim, shape, and dtype attributes. Got 3"),
])
def test_invalid_keys_are_type_errors(bad, message):
    with pytest.raises(TypeError, match="JAX encountered invalid PRNG key data: " + message):
        random.normal(bad, (2,))


def test_float_key_is_a_type_error_under_jit():
    with pytest.raises(TypeError, match="expected key_data.dtype = uint32"):
        xjax.jit(lambda k: random.uniform(k))(jnp.zeros(2))


def test_batched_keys_need_vmap():
    with pytest.raises(ValueError, match=r"normal accepts a single key, but was given a key "
                                         r"array of shape \(2, 2\) != \(\). Use jax.vmap"):
        random.normal(jnp.zeros((2, 2), jnp.uint32), (2,))
    with pytest.raises(ValueError, match=r"split accepts a single key, but was given a key "
                                         r"array of shape \(3,\) != \(\)"):
        random.split(random.split(random.key(0), 3))
    with pytest.raises(TypeError, match="unexpected PRNG key type"):
        random.split([0, 0])


def test_fold_in_errors():
    with pytest.raises(TypeError, match="fold_in accepts a scalar"):
        random.fold_in(random.key(0), jnp.arange(2))
    with pytest.raises(OverflowError):
        random.fold_in(random.PRNGKey(0), -1)
    np.testing.assert_array_equal(np.asarray(random.fold_in(random.PRNGKey(0),
                                                            np.uint32(2 ** 32 - 1))),
                                  [743310391, 3789761811])


# -- keys consumed the JAX way --

def test_no_hidden_state():
    k = random.PRNGKey(3)
    a, b = random.normal(k, (5,)), random.normal(k, (5,))
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    k1, k2 = random.split(k)
    assert not np.array_equal(np.asarray(random.normal(k1, (5,))),
                              np.asarray(random.normal(k2, (5,))))


def test_typed_keys_through_jit_and_vmap():
    k = random.key(0)
    split = xjax.jit(lambda k: random.split(k))(k)
    assert isinstance(split, random.PRNGKeyArray) and split.shape == (2,)
    np.testing.assert_array_equal(_data(split), _data(random.split(k)))
    keys = random.split(k, 4)
    out = xjax.jit(lambda ks: random.key_data(ks))(keys)
    np.testing.assert_array_equal(np.asarray(out), _data(keys))
    sums = xjax.vmap(lambda k: random.normal(k, (3,)).sum())(keys)
    np.testing.assert_allclose(np.asarray(sums),
                               [float(random.normal(kk, (3,)).sum()) for kk in keys], rtol=1e-6)
    new_keys = xjax.vmap(lambda k: random.fold_in(k, 1))(keys)
    assert isinstance(new_keys, random.PRNGKeyArray) and new_keys.shape == (4,)
    np.testing.assert_array_equal(_data(new_keys[2]), _data(random.fold_in(keys[2], 1)))


def test_typed_keys_are_array_leaves_to_users():
    k = random.key(0)
    keys = random.split(k, 3)
    assert isinstance(k, xjax.Array) and isinstance(keys, xjax.Array)
    assert type(k) is not xjax.Array and type(random.PRNGKey(0)) is xjax.Array
    tu = xjax.tree_util
    assert tu.tree_leaves(k) == [k] and xjax.tree.leaves({"a": (k, 1)})[0] is k
    leaves, treedef = tu.tree_flatten({"k": keys, "x": 1.0})
    assert leaves[0] is keys and str(treedef) == "PyTreeDef({'k': *, 'x': *})"
    assert tu.tree_unflatten(treedef, leaves)["k"] is keys
    assert tu.tree_structure(k) == tu.tree_structure(0)
    assert tu.tree_map(lambda x: x.shape, {"a": keys}) == {"a": (3,)}
    assert tu.tree_map(lambda a, b: b, k, 5) == 5
    ((path, leaf),), _ = tu.tree_flatten_with_path({"a": k})
    assert path == (tu.DictKey("a"),) and leaf is k
    assert tu.all_leaves([k]) and not tu.is_tree_node(type(k))
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        tu.flatten_one_level(k)
    assert tu.tree_leaves([k, None], is_leaf=lambda x: x is None) == [k, None]
    # Transformations still see (and trace) the key data; results are typed keys again.
    assert isinstance(xjax.jit(lambda t: t["k"])({"k": k}), random.PRNGKeyArray)
    assert isinstance(k.unsafe_buffer_pointer(), int)


def test_key_data_under_vmap_and_traced_fold_in():
    keys = random.split(random.PRNGKey(1), 3)
    steps = jnp.arange(3)
    folded = xjax.vmap(random.fold_in)(keys, steps)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(folded[i]),
                                      np.asarray(random.fold_in(keys[i], i)))
    jitted = xjax.jit(random.fold_in)(random.PRNGKey(1), jnp.int32(5))
    np.testing.assert_array_equal(np.asarray(jitted),
                                  np.asarray(random.fold_in(random.PRNGKey(1), 5)))


def test_split_shapes():
    k = random.PRNGKey(0)
    assert random.split(k, 1).shape == (1, 2)
    assert random.split(k, (2, 3)).shape == (2, 3, 2)
    assert random.split(k, 0).shape == (0, 2)
    np.testing.assert_array_equal(np.asarray(random.split(k, (2, 3))).reshape(6, 2),
                                  np.asarray(random.split(k, 6)))


def test_array_equal_compares_typed_keys():
    # Chex's jittable assert_trees_all_equal compares key leaves with jnp.array_equal.
    keys = xjax.random.split(xjax.random.key(1))
    assert bool(xjax.numpy.array_equal(keys, xjax.random.split(xjax.random.key(1))))
    assert not bool(xjax.numpy.array_equal(keys, xjax.random.split(xjax.random.key(2))))
    assert not bool(xjax.numpy.array_equal(keys, keys[:1]))
    assert bool(xjax.jit(lambda k: xjax.numpy.array_equal(k, k, equal_nan=True))(keys))


def test_typeof_a_key_array_is_a_shaped_array_of_key_dtype():
    keys = xjax.random.split(xjax.random.key(0), 3)
    aval = xjax.typeof(keys)
    assert aval.shape == (3,) and aval.dtype == keys.dtype
    assert repr(aval) == "ShapedArray(key<fry>[3])"
