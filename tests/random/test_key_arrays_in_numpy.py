"""Typed PRNG key arrays (``key<fry>``) in the ``xjax.numpy`` functions that JAX 0.10 accepts
them in: functions that move elements give key arrays over the moved key data (checked
against NumPy on the data), comparisons compare whole keys, and the functions refuse what JAX
refuses, with its error classes and messages. The same cases run against real JAX when it is
installed."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax, random

# Key data of three keys and of a 2x3 grid of keys (random words, fixed).
DATA3 = np.array([[1797259609, 2579123966], [928981903, 3453687069],
                  [4146024105, 2718843009]], np.uint32)
DATA23 = np.arange(12, dtype=np.uint32).reshape(2, 3, 2) * np.uint32(2654435761)
DATA1 = np.array([7, 11], np.uint32)
MASK = np.array([True, False, True])


def _data(keys):
    return np.asarray(random.key_data(keys))


def _inputs(lib):
    """(three keys, a 2x3 grid of keys, one key) of library ``lib`` (xjax or jax)."""
    wrap = lib.random.wrap_key_data
    return wrap(lib.numpy.asarray(DATA3)), wrap(lib.numpy.asarray(DATA23)), \
        wrap(lib.numpy.asarray(DATA1))


# Each case: (name, function of (numpy module, keys3, keys23, key), NumPy reference on the
# key data (data3, data23, data1) with the trailing key axis).
MOVES = [
    ("broadcast_to", lambda np_, a, g, k: np_.broadcast_to(k, (3,)),
     lambda a, g, k: np.broadcast_to(k, (3, 2))),
    ("broadcast_to_2d", lambda np_, a, g, k: np_.broadcast_to(a, (2, 3)),
     lambda a, g, k: np.broadcast_to(a, (2, 3, 2))),
    ("reshape", lambda np_, a, g, k: np_.reshape(a, (3, 1)), lambda a, g, k: a.reshape(3, 1, 2)),
    ("reshape_minus_one", lambda np_, a, g, k: np_.reshape(g, -1),
     lambda a, g, k: g.reshape(6, 2)),
    ("ravel", lambda np_, a, g, k: np_.ravel(g), lambda a, g, k: g.reshape(6, 2)),
    ("squeeze", lambda np_, a, g, k: np_.squeeze(a[:1]), lambda a, g, k: a[0]),
    ("expand_dims", lambda np_, a, g, k: np_.expand_dims(a, -1), lambda a, g, k: a[:, None]),
    ("transpose", lambda np_, a, g, k: np_.transpose(g), lambda a, g, k: g.transpose(1, 0, 2)),
    ("swapaxes", lambda np_, a, g, k: np_.swapaxes(g, 0, 1),
     lambda a, g, k: g.transpose(1, 0, 2)),
    ("moveaxis", lambda np_, a, g, k: np_.moveaxis(g, 0, 1),
     lambda a, g, k: g.transpose(1, 0, 2)),
    ("concatenate", lambda np_, a, g, k: np_.concatenate([a, a[::-1]]),
     lambda a, g, k: np.concatenate([a, a[::-1]])),
    ("concatenate_axis1", lambda np_, a, g, k: np_.concatenate([g, g], axis=1),
     lambda a, g, k: np.concatenate([g, g], axis=1)),
    ("concatenate_flat", lambda np_, a, g, k: np_.concatenate([g, a], axis=None),
     lambda a, g, k: np.concatenate([g.reshape(6, 2), a])),
    ("stack", lambda np_, a, g, k: np_.stack([k, k]), lambda a, g, k: np.stack([k, k])),
    ("stack_axis1", lambda np_, a, g, k: np_.stack([a, a[::-1]], axis=1),
     lambda a, g, k: np.stack([a, a[::-1]], axis=1)),
    ("hstack", lambda np_, a, g, k: np_.hstack([a, a]), lambda a, g, k: np.concatenate([a, a])),
    ("vstack", lambda np_, a, g, k: np_.vstack([a, a]), lambda a, g, k: np.stack([a, a])),
    ("atleast_2d", lambda np_, a, g, k: np_.atleast_2d(k), lambda a, g, k: k[None, None]),
    ("where", lambda np_, a, g, k: np_.where(np_.asarray(MASK), a, k),
     lambda a, g, k: np.where(MASK[:, None], a, k)),
    ("where_broadcast", lambda np_, a, g, k: np_.where(np_.asarray([[True], [False]]), a, k),
     lambda a, g, k: np.where(np.array([[True], [False]])[..., None], a, k)),
    ("select", lambda np_, a, g, k: np_.select([np_.asarray(MASK)], [a], k),
     lambda a, g, k: np.where(MASK[:, None], a, k)),
    ("take", lambda np_, a, g, k: np_.take(a, np_.asarray([2, 0])), lambda a, g, k: a[[2, 0]]),
    ("take_axis", lambda np_, a, g, k: np_.take(g, np_.asarray([2, 0]), axis=1),
     lambda a, g, k: g[:, [2, 0]]),
    ("take_along_axis", lambda np_, a, g, k: np_.take_along_axis(g, np_.asarray([[2], [0]]), 1),
     lambda a, g, k: np.take_along_axis(g, np.array([[2], [0]])[..., None], 1)),
    ("index", lambda np_, a, g, k: a[1], lambda a, g, k: a[1]),
    ("index_array", lambda np_, a, g, k: a[np_.asarray([2, 0])], lambda a, g, k: a[[2, 0]]),
    ("at_set", lambda np_, a, g, k: a.at[1].set(k),
     lambda a, g, k: np.concatenate([a[:1], k[None], a[2:]])),
    ("at_set_keys", lambda np_, a, g, k: a.at[np_.asarray([0, 2])].set(a[:2]),
     lambda a, g, k: a[[0, 1, 1]]),
    ("at_get", lambda np_, a, g, k: a.at[2].get(), lambda a, g, k: a[2]),
    ("tile", lambda np_, a, g, k: np_.tile(a, 2), lambda a, g, k: np.concatenate([a, a])),
    ("repeat", lambda np_, a, g, k: np_.repeat(a, 2), lambda a, g, k: np.repeat(a, 2, axis=0)),
    ("repeat_axis", lambda np_, a, g, k: np_.repeat(g, np.array([1, 2]), axis=0),
     lambda a, g, k: g[[0, 1, 1]]),
    ("flip", lambda np_, a, g, k: np_.flip(g, 1), lambda a, g, k: g[:, ::-1]),
    ("roll", lambda np_, a, g, k: np_.roll(a, 1), lambda a, g, k: np.roll(a, 1, axis=0)),
    ("roll_2d", lambda np_, a, g, k: np_.roll(g, (1, 1), (0, 1)),
     lambda a, g, k: np.roll(g, (1, 1), (0, 1))),
    ("rot90", lambda np_, a, g, k: np_.rot90(g), lambda a, g, k: np.rot90(g, axes=(0, 1))),
    ("copy", lambda np_, a, g, k: np_.copy(a), lambda a, g, k: a),
    ("asarray", lambda np_, a, g, k: np_.asarray(a), lambda a, g, k: a),
    ("array_of_keys", lambda np_, a, g, k: np_.array([k, a[0]]),
     lambda a, g, k: np.stack([k, a[0]])),
    ("append", lambda np_, a, g, k: np_.append(a, k), lambda a, g, k: np.concatenate([a, k[None]])),
    ("insert", lambda np_, a, g, k: np_.insert(a, 1, k),
     lambda a, g, k: np.concatenate([a[:1], k[None], a[1:]])),
    ("delete", lambda np_, a, g, k: np_.delete(a, 1), lambda a, g, k: a[[0, 2]]),
    ("full", lambda np_, a, g, k: np_.full((2,), k), lambda a, g, k: np.stack([k, k])),
    ("full_like", lambda np_, a, g, k: np_.full_like(a, k), lambda a, g, k: np.stack([k] * 3)),
    ("zeros_like", lambda np_, a, g, k: np_.zeros_like(a), lambda a, g, k: np.zeros_like(a)),
    ("ones_like", lambda np_, a, g, k: np_.ones_like(g), lambda a, g, k: np.ones_like(g)),
    ("triu", lambda np_, a, g, k: np_.triu(g), lambda a, g, k: g * np.triu(np.ones((2, 3),
                                                                                np.uint32))[..., None]),
]


def _run(case, lib):
    return case[1](lib.numpy, *_inputs(lib))


@pytest.mark.parametrize("case", MOVES, ids=[c[0] for c in MOVES])
def test_moving_keys_moves_their_data(case):
    out = _run(case, xjax)
    expected = case[2](DATA3, DATA23, DATA1)
    assert isinstance(out, random.PRNGKeyArray) and out.dtype == random.key_dtype()
    assert out.shape == expected.shape[:-1]
    np.testing.assert_array_equal(_data(out), expected)


@pytest.mark.parametrize("case", MOVES, ids=[c[0] for c in MOVES])
def test_moving_keys_under_jit_matches_eager(case):
    out = xjax.jit(lambda: _run(case, xjax))()
    np.testing.assert_array_equal(_data(out), case[2](DATA3, DATA23, DATA1))


def test_moving_key_arguments_under_jit_and_vmap():
    keys = random.wrap_key_data(jnp.asarray(DATA3))
    stacked = xjax.jit(lambda k: jnp.stack([k, k[::-1]]))(keys)
    np.testing.assert_array_equal(_data(stacked), np.stack([DATA3, DATA3[::-1]]))
    chosen = xjax.vmap(lambda c, k: jnp.where(c, k, k[0] if k.ndim else k))(
        jnp.asarray(MASK), keys)
    np.testing.assert_array_equal(_data(chosen), DATA3)
    spread = xjax.vmap(lambda k: jnp.broadcast_to(k, (2,)))(keys)
    np.testing.assert_array_equal(_data(spread), np.stack([DATA3, DATA3], axis=1))
    grid = random.wrap_key_data(jnp.asarray(DATA23))
    updated = xjax.vmap(lambda row, k: row.at[0].set(k))(grid, keys[:2])
    expected = DATA23.copy()
    expected[:, 0] = DATA3[:2]
    np.testing.assert_array_equal(_data(updated), expected)


def test_functions_of_several_keys_return_keys():
    keys, grid, key = _inputs(xjax)
    left, right = jnp.broadcast_arrays(key, keys)
    np.testing.assert_array_equal(_data(left), np.broadcast_to(DATA1, (3, 2)))
    np.testing.assert_array_equal(_data(right), DATA3)
    key_part, numbers = jnp.broadcast_arrays(key, jnp.zeros(3))  # other arrays come along
    assert key_part.shape == (3,) and numbers.dtype == np.float32
    parts = jnp.split(grid, [1], axis=1)
    assert [p.shape for p in parts] == [(2, 1), (2, 2)]
    np.testing.assert_array_equal(_data(parts[1]), DATA23[:, 1:])
    rows = jnp.unstack(keys)
    assert len(rows) == 3 and all(r.shape == () for r in rows)
    np.testing.assert_array_equal(_data(rows[2]), DATA3[2])


def test_out_of_bounds_positions_fill_the_data_as_jax():
    keys, _, _ = _inputs(xjax)
    # JAX's physical gather fills key data with the uint32 maximum
    filled = jnp.take(keys, jnp.asarray([5, 0]))
    np.testing.assert_array_equal(_data(filled), [[2 ** 32 - 1] * 2, DATA3[0]])
    np.testing.assert_array_equal(_data(keys.at[5].get(mode="fill")), [2 ** 32 - 1] * 2)
    np.testing.assert_array_equal(_data(keys.at[5].set(keys[0])), DATA3)  # dropped


# -- comparisons --

def test_comparisons_compare_whole_keys():
    keys, grid, _ = _inputs(xjax)
    other = random.wrap_key_data(jnp.asarray(np.array([DATA3[0], DATA3[0] ^ [0, 1],
                                                       [0, 0]], np.uint32)))
    expected = (DATA3 == np.asarray(_data(other))).all(-1)
    for result in (jnp.equal(keys, other), keys == other, jnp.isclose(keys, other)):
        assert result.dtype == np.bool_
        np.testing.assert_array_equal(np.asarray(result), expected)
    np.testing.assert_array_equal(np.asarray(jnp.not_equal(keys, other)), ~expected)
    np.testing.assert_array_equal(np.asarray(keys != other), ~expected)
    np.testing.assert_array_equal(np.asarray(jnp.equal(grid, grid[0])),
                                  (DATA23 == DATA23[0]).all(-1))
    assert not bool(jnp.allclose(keys, other))
    assert bool(jnp.array_equiv(jnp.broadcast_to(keys[1], (3,)), keys[1]))
    assert bool(jnp.array_equal(keys, keys)) and not bool(jnp.array_equal(keys, other))
    batched = xjax.vmap(lambda k: jnp.isclose(k, keys[0]))(keys)
    np.testing.assert_array_equal(np.asarray(batched), [True, False, False])
    assert bool(xjax.jit(lambda a, b: jnp.equal(a, b).all())(keys, keys))


def test_comparisons_with_other_dtypes_raise_jax_errors():
    keys, _, key = _inputs(xjax)
    with pytest.raises(TypeError, match=r"^equal does not accept dtypes key<fry>, int32\.$"):
        jnp.equal(keys, 0)
    with pytest.raises(TypeError, match=r"^equal does not accept dtypes uint32, key<fry>\.$"):
        jnp.zeros(3, jnp.uint32) == keys
    with pytest.raises(TypeError, match=r"^not_equal does not accept dtypes key<fry>, int32\."):
        keys != 0
    with pytest.raises(TypeError, match=r"^isclose does not accept dtypes key<fry>, float32\."):
        jnp.isclose(keys, jnp.zeros(3))
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting"):
        jnp.equal(keys, keys[:2])
    assert (keys == None) is False  # noqa: E711  (Python's identity test, as JAX)
    assert not bool(jnp.array_equal(keys, 0))


# -- errors --

def test_mixing_keys_and_numbers_is_jaxs_promotion_error():
    keys, _, key = _inputs(xjax)
    message = r"^dtype=key<fry> is not a valid dtype for JAX type promotion\.$"
    for call in (lambda: jnp.where(True, keys, 0),
                 lambda: jnp.concatenate([keys, jnp.zeros(3, jnp.uint32)]),
                 lambda: jnp.stack([key, jnp.uint32(0)]),
                 lambda: jnp.select([jnp.asarray(MASK)], [keys])):  # the default 0
        with pytest.raises(ValueError, match=message):
            call()
    with pytest.raises(ValueError, match=r"^Cannot convert_element_type from key<fry> to "
                                         r"uint32$"):
        jnp.concatenate([keys, keys], dtype=jnp.uint32)
    with pytest.raises(ValueError, match="Zero-dimensional arrays cannot be concatenated"):
        jnp.concatenate([key, key])


def test_shape_errors_name_the_key_dtype():
    keys, grid, _ = _inputs(xjax)
    with pytest.raises(ValueError, match=r"^Incompatible types for broadcasting: input "
                                         r"type=key<fry>\[3\] and requested type=key<fry>\[2\]$"):
        jnp.broadcast_to(keys, (2,))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(3,\) \(size 3\) into "
                                        r"shape \(2,\)"):
        jnp.reshape(keys, (2,))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out"):
        jnp.squeeze(keys, 0)


def test_keys_have_no_arithmetic():
    keys, _, key = _inputs(xjax)
    for update in (lambda: keys.at[0].add(key), lambda: keys.at[0].set(0),
                   lambda: keys.at[0].min(key)):
        with pytest.raises(TypeError, match=r"^Cannot interpret 'key<fry>' as a data type$"):
            update()
    with pytest.raises(TypeError):
        jnp.add(keys, keys)
    with pytest.raises(TypeError):
        jnp.sum(keys)


# -- creation --

def test_filled_keys():
    keys, _, key = _inputs(xjax)
    np.testing.assert_array_equal(_data(jnp.full_like(keys, 5)), np.full((3, 2), 5))
    np.testing.assert_array_equal(_data(jnp.zeros((2,), random.key_dtype())), np.zeros((2, 2)))
    np.testing.assert_array_equal(_data(jnp.full((2,), 3, dtype=keys.dtype)), np.full((2, 2), 3))
    numbers = jnp.zeros_like(keys, dtype=jnp.float32)
    assert numbers.dtype == np.float32 and numbers.shape == (3,)
    np.testing.assert_array_equal(_data(jnp.zeros_like(keys, shape=(2,))), np.zeros((2, 2)))
    np.testing.assert_array_equal(_data(jnp.asarray(keys, dtype=keys.dtype)), DATA3)
    np.testing.assert_array_equal(_data(jnp.array(key, ndmin=2)), DATA1[None, None])
    np.testing.assert_array_equal(_data(xjax.vmap(jnp.zeros_like)(keys)), np.zeros((3, 2)))


def test_rngs_broadcast_pattern():
    # Flax's Rngs broadcasts a key over a batch, then splits each under vmap.
    key = random.key(0)
    batch = jnp.broadcast_to(key, (4,))
    assert batch.shape == (4,)
    assert bool(jnp.all(batch == key))
    children = xjax.vmap(lambda k: random.split(k)[1])(batch)
    np.testing.assert_array_equal(_data(children), np.broadcast_to(_data(random.split(key)[1]),
                                                                   (4, 2)))


# -- against JAX --

def _jax():
    return pytest.importorskip("jax")


@pytest.mark.parametrize("case", MOVES, ids=[c[0] for c in MOVES])
def test_moving_keys_matches_jax(case):
    jax = _jax()
    ours, theirs = _run(case, xjax), _run(case, jax)
    assert ours.shape == theirs.shape
    np.testing.assert_array_equal(_data(ours), np.asarray(jax.random.key_data(theirs)))


COMPARISONS = [
    ("equal", lambda np_, a, g, k: np_.equal(g, a)),
    ("not_equal", lambda np_, a, g, k: np_.not_equal(a, a[::-1])),
    ("isclose", lambda np_, a, g, k: np_.isclose(a, a[1])),
    ("array_equal", lambda np_, a, g, k: np_.array_equal(a, a)),
    ("array_equiv", lambda np_, a, g, k: np_.array_equiv(a, k)),
]


@pytest.mark.parametrize("case", COMPARISONS, ids=[c[0] for c in COMPARISONS])
def test_comparisons_match_jax(case):
    jax = _jax()
    ours, theirs = _run(case, xjax), _run(case, jax)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


ERRORS = [
    ("where_number", lambda np_, a, g, k: np_.where(True, a, 0)),
    ("stack_number", lambda np_, a, g, k: np_.stack([k, np_.uint32(0)])),
    ("concatenate_dtype", lambda np_, a, g, k: np_.concatenate([a, a], dtype=np_.uint32)),
    ("concatenate_scalars", lambda np_, a, g, k: np_.concatenate([k, k])),
    ("equal_number", lambda np_, a, g, k: np_.equal(a, 0)),
    ("number_equal", lambda np_, a, g, k: np_.equal(0, a)),
    ("isclose_number", lambda np_, a, g, k: np_.isclose(a, 0)),
    ("broadcast_to", lambda np_, a, g, k: np_.broadcast_to(a, (2,))),
    ("at_add", lambda np_, a, g, k: a.at[0].add(k)),
    ("astype", lambda np_, a, g, k: np_.astype(a, np_.uint32)),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors_match_jax(case):
    jax = _jax()
    with pytest.raises(Exception) as theirs:
        _run(case, jax)
    with pytest.raises(type(theirs.value)) as ours:
        _run(case, xjax)
    assert str(ours.value) == str(theirs.value)


def test_vmap_and_jit_match_jax():
    jax = _jax()

    def cases(lib):
        keys, grid, key = _inputs(lib)
        np_ = lib.numpy
        return [
            lib.vmap(lambda k: np_.broadcast_to(k, (2,)))(keys),
            lib.vmap(lambda c, k: np_.where(c, k, key))(np_.asarray(MASK), keys),
            lib.vmap(lambda r: r.at[0].set(key))(grid),
            lib.vmap(lambda r: np_.roll(r, 1))(grid),
            lib.jit(lambda k: np_.stack([k, k]))(keys),
            lib.jit(lambda k: k.at[0].set(k[2]))(keys),
            lib.jit(lambda k: np_.take(k, np_.asarray([2, 0])))(keys),
        ]
    for ours, theirs in zip(cases(xjax), cases(jax), strict=True):
        assert ours.shape == theirs.shape
        np.testing.assert_array_equal(_data(ours), np.asarray(jax.random.key_data(theirs)))
    np.testing.assert_array_equal(
        np.asarray(xjax.vmap(lambda k: jnp.isclose(k, _inputs(xjax)[2]))(_inputs(xjax)[0])),
        np.asarray(jax.vmap(lambda k: jax.numpy.isclose(k, _inputs(jax)[2]))(_inputs(jax)[0])))
