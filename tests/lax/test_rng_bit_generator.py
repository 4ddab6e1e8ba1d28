"""lax.rng_bit_generator and lax.rng_uniform: the NumPy bit generators against published
known answers, against XLA (jit and eager-via-XLA) and against JAX; vmap; errors."""

import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

ALGORITHMS = list(lax.RandomAlgorithm)
BIT_DTYPES = [np.uint8, np.uint16, np.uint32]
SHAPES = [(), (0,), (1,), (3,), (4,), (5,), (9,), (2, 3), (3, 4), (3, 5), (1, 7), (7, 1),
          (5, 3, 2), (3, 5, 7)]


def _key(seed):
    return np.random.default_rng(seed).integers(0, 2**32, 4, dtype=np.uint32)


# -- known answers (Random123's kat_vectors, and XLA's u64[2]-state layout) --

def test_philox_known_answers():
    # Random123 philox4x32_10: counter 0, key 0 -> 6627e8d5 e169c58d bc57ac4c 9b00dbd8
    _, bits = lax.rng_bit_generator(np.zeros(4, np.uint32), (4,),
                                    algorithm=lax.RandomAlgorithm.RNG_PHILOX)
    assert [hex(int(b)) for b in bits] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c",
                                           "0x9b00dbd8"]
    # all-ones counter and key -> 408f276d 41c83b0e a20bc7c6 6d5451fd (the state's first
    # word is both the key and the counter's high half)
    new_key, bits = lax.rng_bit_generator(np.full(4, 0xFFFFFFFF, np.uint32), (4,))
    assert [hex(int(b)) for b in bits] == ["0x408f276d", "0x41c83b0e", "0xa20bc7c6",
                                           "0x6d5451fd"]
    # the counter (second u64 word) wraps to 0; the key word is unchanged
    np.testing.assert_array_equal(new_key, [0xFFFFFFFF, 0xFFFFFFFF, 0, 0])


def test_threefry_known_answer():
    # Random123 threefry2x32_20: counter 0, key 0 -> 6b200159 99ba4efe
    new_key, bits = lax.rng_bit_generator(np.zeros(4, np.uint32), (2,),
                                          algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    assert [hex(int(b)) for b in bits] == ["0x6b200159", "0x99ba4efe"]
    np.testing.assert_array_equal(new_key, [0, 0, 1, 0])  # one counter drawn


def test_counter_advances_by_blocks():
    key = np.array([7, 0, 10, 0], np.uint32)
    # Philox: 4 uint32 (or 2 uint64) per counter; Threefry: 2 uint32 per counter.
    new_key, _ = lax.rng_bit_generator(key, (9,))
    np.testing.assert_array_equal(new_key, [7, 0, 13, 0])
    new_key, _ = lax.rng_bit_generator(key, (9,), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
    np.testing.assert_array_equal(new_key, [7, 0, 15, 0])


def test_philox_counter_carries_into_key_word():
    # the low counter word wraps mid-draw: the high word (the key) is incremented for the
    # later blocks, as XLA's 128-bit counter does
    key = np.array([1, 2, 0xFFFFFFFF, 0xFFFFFFFF], np.uint32)
    _, bits = lax.rng_bit_generator(key, (8,))
    _, first = lax.rng_bit_generator(key, (4,))
    np.testing.assert_array_equal(bits[:4], first)
    jit_bits = xjax.jit(lambda k: lax.rng_bit_generator(k, (8,))[1])(key)
    np.testing.assert_array_equal(bits, jit_bits)


# -- the NumPy impl against XLA's lowering --

@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=str)
@pytest.mark.parametrize("dtype", BIT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_eager_matches_jit(algorithm, dtype):
    for i, shape in enumerate(SHAPES):
        key = _key(i)
        eager = lax.rng_bit_generator(key, shape, dtype, algorithm)
        jitted = xjax.jit(lambda k: lax.rng_bit_generator(k, shape, dtype, algorithm))(key)
        with xjax.config.override(xjax_eager_via_xla=True):
            via_xla = lax.rng_bit_generator(key, shape, dtype, algorithm)
        for got in (jitted, via_xla):
            for e, g in zip(eager, got, strict=True):
                assert e.dtype == g.dtype and e.shape == g.shape
                np.testing.assert_array_equal(np.asarray(e), np.asarray(g), err_msg=str(shape))
        assert eager[1].shape == shape and eager[1].dtype == np.dtype(dtype)
        assert eager[0].shape == (4,) and eager[0].dtype == np.uint32


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=str)
def test_uint64_bits_and_key(algorithm):
    with xjax.config.override(jax_enable_x64=True):
        for i, shape in enumerate([(), (1,), (3,), (2, 3), (5, 3)]):
            key64 = _key(i).view(np.uint64)
            for key in (key64, key64.view(np.uint32)):
                eager = lax.rng_bit_generator(key, shape, np.uint64, algorithm)
                jitted = xjax.jit(
                    lambda k: lax.rng_bit_generator(k, shape, np.uint64, algorithm))(key)
                assert eager[1].dtype == np.uint64 and eager[0].dtype == key.dtype
                for e, g in zip(eager, jitted, strict=True):
                    np.testing.assert_array_equal(np.asarray(e), np.asarray(g))
            # the two key forms are the same state
            a = lax.rng_bit_generator(key64, shape, np.uint64, algorithm)
            b = lax.rng_bit_generator(key64.view(np.uint32), shape, np.uint64, algorithm)
            np.testing.assert_array_equal(a[1], b[1])
            np.testing.assert_array_equal(np.asarray(a[0]).view(np.uint32), b[0])


def test_narrow_dtypes_keep_low_bits():
    key = _key(3)
    for algorithm in ALGORITHMS:
        _, wide = lax.rng_bit_generator(key, (3, 5), np.uint32, algorithm)
        for dtype in (np.uint8, np.uint16):
            _, narrow = lax.rng_bit_generator(key, (3, 5), dtype, algorithm)
            np.testing.assert_array_equal(narrow, np.asarray(wide).astype(dtype))


def test_default_is_philox():
    key = _key(5)
    a = lax.rng_bit_generator(key, (2, 3))
    b = lax.rng_bit_generator(key, (2, 3), algorithm=lax.RandomAlgorithm.RNG_PHILOX)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_jaxpr_and_enum():
    jaxpr = xjax.make_jaxpr(lambda k: lax.rng_bit_generator(k, (3,)))(np.zeros(4, np.uint32))
    text = str(jaxpr)
    assert "rng_bit_generator" in text and "shape=(3,)" in text and "dtype=uint32" in text
    assert str(lax.RandomAlgorithm.RNG_PHILOX) == "RNG_PHILOX"
    assert [int(a) for a in lax.RandomAlgorithm] == [0, 1, 2]
    assert lax.rng_bit_generator_p.name == "rng_bit_generator"


# -- vmap: JAX's rule (the first example's key draws the whole batch) --

@pytest.mark.parametrize("in_axes", [0, 1])
def test_vmap_rule(in_axes):
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4)
    if in_axes == 1:
        keys = keys.T.copy()
    new_keys, bits = xjax.vmap(lambda k: lax.rng_bit_generator(k, (2, 5)),
                               in_axes=in_axes)(keys)
    front = keys if in_axes == 0 else keys.T
    want_key, want_bits = lax.rng_bit_generator(front[0], (3, 2, 5))
    np.testing.assert_array_equal(bits, want_bits)
    np.testing.assert_array_equal(new_keys[0], want_key)
    np.testing.assert_array_equal(new_keys[1:], front[1:])
    jitted = xjax.jit(xjax.vmap(lambda k: lax.rng_bit_generator(k, (2, 5)),
                                in_axes=in_axes))(keys)
    np.testing.assert_array_equal(jitted[1], bits)
    np.testing.assert_array_equal(jitted[0], new_keys)


def test_vmap_unbatched_key():
    key = _key(1)
    new_key, bits = xjax.vmap(lambda _: lax.rng_bit_generator(key, (3,)))(np.zeros(2))
    want = lax.rng_bit_generator(key, (3,))
    # an unmapped key is not batched: each example gets the same bits (vmap broadcasts)
    np.testing.assert_array_equal(bits, np.broadcast_to(want[1], (2, 3)))
    np.testing.assert_array_equal(new_key, np.broadcast_to(want[0], (2, 4)))


def test_not_differentiated():
    # integer outputs: jvp gives symbolic-zero tangents (float0 in JAX)
    key = _key(2)
    f = lambda x: x * lax.rng_bit_generator(key, (3,))[1].astype(np.float32)  # noqa: E731
    _, t = xjax.jvp(f, (np.float32(2.0),), (np.float32(1.0),))
    np.testing.assert_array_equal(t, np.asarray(lax.rng_bit_generator(key, (3,))[1],
                                                np.float32))


# -- errors --

def test_errors():
    key = np.zeros(4, np.uint32)
    for dtype in (np.int32, np.float32, np.bool_):
        with pytest.raises(TypeError, match="unsupported dtype"):
            lax.rng_bit_generator(key, (3,), dtype)
    for bad in (np.zeros(4, np.float32), np.zeros(3, np.uint32), np.zeros((2, 2), np.uint32),
                np.zeros(2, np.uint32)):
        with pytest.raises(TypeError, match="key"):
            lax.rng_bit_generator(bad, (3,))
        with pytest.raises(TypeError, match="key"):
            xjax.jit(lambda k: lax.rng_bit_generator(k, (3,)))(bad)
    with pytest.raises(TypeError, match="Shapes must be"):
        lax.rng_bit_generator(key, (2.5,))
    with pytest.raises(ValueError, match="negative"):
        lax.rng_bit_generator(key, (-1,))
    with pytest.raises(NotImplementedError, match="out_sharding"):
        lax.rng_bit_generator(key, (3,), out_sharding="x")
    with pytest.warns(UserWarning, match="truncated"):  # uint64 without x64: uint32
        _, bits = lax.rng_bit_generator(key, (3,), np.uint64)
    assert bits.dtype == np.uint32


# -- rng_uniform --

@pytest.mark.parametrize("dtype", [np.float32, np.float16, jnp.bfloat16, np.int32,
                                   np.uint32])
def test_rng_uniform_range_and_dtype(dtype):
    lo, hi = np.asarray(2, dtype), np.asarray(9, dtype)
    for fun in (lax.rng_uniform, xjax.jit(lax.rng_uniform, static_argnums=2)):
        x = np.asarray(fun(lo, hi, (500,)))
        assert x.dtype == np.dtype(dtype) and x.shape == (500,)
        wide = x.astype(np.float64)
        assert (wide >= 2).all() and (wide <= 9).all()  # [a, b) up to rounding to dtype
        assert len(np.unique(x)) > 5


def test_rng_uniform_statistics_and_state():
    a = np.asarray(lax.rng_uniform(0.0, 1.0, (20000,)))
    b = np.asarray(lax.rng_uniform(0.0, 1.0, (20000,)))
    assert not np.array_equal(a, b)  # the hidden state advances between calls
    assert ((a >= 0) & (a < 1)).all()
    assert abs(a.mean() - 0.5) < 0.02 and abs(a.var() - 1 / 12) < 0.01
    f = xjax.jit(lambda: lax.rng_uniform(-1.0, 1.0, (2, 3)))
    c, d = np.asarray(f()), np.asarray(f())
    assert c.shape == (2, 3) and not np.array_equal(c, d)
    assert ((c >= -1) & (c < 1)).all()


def test_rng_uniform_weak_type_and_jaxpr():
    assert lax.rng_uniform(0.0, 1.0, (2,)).weak_type
    assert not lax.rng_uniform(np.float32(0), np.float32(1), (2,)).weak_type
    assert lax.rng_uniform(0, 5, (2,)).dtype == np.int32
    text = str(xjax.make_jaxpr(lambda: lax.rng_uniform(0.0, 1.0, (3,)))())
    assert "rng_uniform[shape=(3,)]" in text


def test_rng_uniform_vmap():
    lo = np.array([0.0, 10.0, 20.0], np.float32)
    for fun in (xjax.vmap(lambda a: lax.rng_uniform(a, a + 1, (4,))),
                xjax.jit(xjax.vmap(lambda a: lax.rng_uniform(a, a + 1, (4,))))):
        x = np.asarray(fun(lo))
        assert x.shape == (3, 4)
        assert ((x >= lo[:, None]) & (x < lo[:, None] + 1)).all()


def test_rng_uniform_errors():
    with pytest.raises(ValueError, match="identical dtypes"):
        lax.rng_uniform(0.0, 1, (3,))
    with pytest.raises(ValueError, match="must be scalars"):
        lax.rng_uniform(np.zeros(2, np.float32), np.float32(1), (3,))
    for dtype in (np.bool_, np.int8, np.uint16, np.complex64):
        # XLA's compiler aborts on these; xjax refuses them before compiling
        with pytest.raises(TypeError, match="rng_uniform does not support"):
            lax.rng_uniform(np.zeros((), dtype), np.ones((), dtype), (3,))
        with pytest.raises(TypeError, match="rng_uniform does not support"):
            xjax.jit(lambda: lax.rng_uniform(np.zeros((), dtype), np.ones((), dtype), (3,)))()
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'rng_uniform'"):
        xjax.grad(lambda a: lax.rng_uniform(a, 1.0, (3,)).sum())(0.0)


# -- JAX differential --

@pytest.mark.parametrize("algorithm", [0, 1, 2])
def test_matches_jax(algorithm):
    jax = pytest.importorskip("jax")
    for dtype in BIT_DTYPES:
        for i, shape in enumerate(SHAPES):
            key = _key(100 + i)
            want = jax.jit(lambda k: jax.lax.rng_bit_generator(
                k, shape, dtype, jax.lax.RandomAlgorithm(algorithm)))(key)
            got = lax.rng_bit_generator(key, shape, dtype, lax.RandomAlgorithm(algorithm))
            for w, g in zip(want, got, strict=True):
                assert np.asarray(w).dtype == g.dtype
                np.testing.assert_array_equal(np.asarray(w), np.asarray(g),
                                              err_msg=f"{dtype} {shape}")


def test_vmap_matches_jax():
    jax = pytest.importorskip("jax")
    keys = np.arange(12, dtype=np.uint32).reshape(4, 3)
    f = lambda k: lax.rng_bit_generator(k, (3,))  # noqa: E731
    g = lambda k: jax.lax.rng_bit_generator(k, (3,))  # noqa: E731
    for w, o in zip(jax.vmap(g, in_axes=1)(keys), xjax.vmap(f, in_axes=1)(keys), strict=True):
        np.testing.assert_array_equal(np.asarray(w), np.asarray(o))


def test_uint64_matches_jax():
    jax = pytest.importorskip("jax")
    key64 = _key(7).view(np.uint64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jax.config.update("jax_enable_x64", True)
        try:
            want = jax.jit(lambda k: jax.lax.rng_bit_generator(k, (3, 3), np.uint64))(key64)
            want = [np.asarray(w) for w in want]
        finally:
            jax.config.update("jax_enable_x64", False)
    with xjax.config.override(jax_enable_x64=True):
        got = lax.rng_bit_generator(key64, (3, 3), np.uint64)
    for w, g in zip(want, got, strict=True):
        np.testing.assert_array_equal(w, np.asarray(g))
