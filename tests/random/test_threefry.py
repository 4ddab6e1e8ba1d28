"""The threefry2x32 primitive: Random123's known answers, NumPy impl vs XLA vs JAX, batching,
and its place among the transformations (no derivative, integer outputs)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

# Random123's known-answer tests for Threefry-2x32 with 20 rounds (kat_vectors):
# (counter words, key words) -> output words
KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
]
U32 = np.uint32


@pytest.mark.parametrize("eager_via_xla", [False, True])
@pytest.mark.parametrize("counter,key,expected", KAT)
def test_random123_known_answers(counter, key, expected, eager_via_xla):
    with xjax.config.override(xjax_eager_via_xla=eager_via_xla):
        out = lax.threefry2x32(U32(key[0]), U32(key[1]), U32(counter[0]), U32(counter[1]))
    assert [int(w) for w in out] == list(expected)
    assert all(o.dtype == np.uint32 and o.shape == () for o in out)


def test_known_answers_under_jit():
    counters = np.array([c for c, _, _ in KAT], U32).T
    keys = np.array([k for _, k, _ in KAT], U32).T
    out = xjax.jit(lax.threefry2x32)(keys[0], keys[1], counters[0], counters[1])
    np.testing.assert_array_equal(np.stack([np.asarray(o) for o in out]),
                                  np.array([e for _, _, e in KAT], U32).T)


def test_matches_jax():
    jax = pytest.importorskip("jax")
    from jax._src.random.threefry2x32 import threefry2x32_p as jax_threefry
    rng = np.random.default_rng(0)
    args = [rng.integers(0, 2 ** 32, (64,), dtype=U32) for _ in range(4)]
    want = jax_threefry.bind(*[jax.numpy.asarray(a) for a in args])
    got = lax.threefry2x32(*args)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_broadcasting_operands():
    rng = np.random.default_rng(1)
    k0, k1 = U32(7), U32(11)
    x0 = rng.integers(0, 2 ** 32, (3, 1), dtype=U32)
    x1 = rng.integers(0, 2 ** 32, (1, 5), dtype=U32)
    out = lax.threefry2x32(k0, k1, x0, x1)
    full = [np.broadcast_to(a, (3, 5)).copy() for a in (x0, x1)]
    ref = lax.threefry2x32(np.full((3, 5), 7, U32), np.full((3, 5), 11, U32), *full)
    for o, r in zip(out, ref, strict=True):
        assert o.shape == (3, 5)
        np.testing.assert_array_equal(np.asarray(o), np.asarray(r))
    jitted = xjax.jit(lax.threefry2x32)(k0, k1, x0, x1)
    for o, j in zip(out, jitted, strict=True):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(j))


def test_dtype_and_shape_errors():
    z = np.zeros(3, U32)
    with pytest.raises(TypeError, match="must have uint32 type"):
        lax.threefry2x32(z, z, z, np.zeros(3, np.int32))
    with pytest.raises(TypeError, match="incompatible shapes"):
        lax.threefry2x32(z, z, z, np.zeros(4, U32))


def test_jaxpr():
    z = np.zeros(3, U32)
    text = str(xjax.make_jaxpr(lax.threefry2x32)(U32(0), U32(0), z, z))
    assert "e:u32[3] f:u32[3] = threefry2x32 a b c d" in text


@pytest.mark.parametrize("in_axes", [(None, None, 0, 0), (0, 0, 0, 0), (None, 0, 1, None)])
def test_vmap_agrees_with_a_loop(in_axes):
    rng = np.random.default_rng(2)
    size = 4
    shapes = {None: (6,), 0: (size, 6), 1: (6, size)}
    args = [rng.integers(0, 2 ** 32, shapes[a], dtype=U32) for a in in_axes]
    out = xjax.vmap(lax.threefry2x32, in_axes=in_axes)(*args)
    for i in range(size):
        sliced = [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]
        ref = lax.threefry2x32(*sliced)
        for o, r in zip(out, ref, strict=True):
            np.testing.assert_array_equal(np.asarray(o)[i], np.asarray(r))


def test_no_derivative():
    """Integer outputs: grad through a function that uses the hash is zero elsewhere."""
    def f(x):
        bits, _ = lax.threefry2x32(U32(0), U32(0), jnp.zeros(3, U32), jnp.zeros(3, U32))
        return jnp.sum(x * bits.astype(jnp.float32))

    g = xjax.grad(f)(jnp.ones(3))
    first = np.asarray(lax.threefry2x32(U32(0), U32(0), np.zeros(3, U32),
                                        np.zeros(3, U32))[0], np.float32)
    np.testing.assert_array_equal(np.asarray(g), first)
