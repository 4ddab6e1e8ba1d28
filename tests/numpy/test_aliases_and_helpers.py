"""The jnp names not exercised elsewhere: Array-API aliases (checked against the NumPy
functions they stand for), dsplit, triu_indices_from, isdtype, iterable, print options."""

import numpy as np
import pytest

import xjax.numpy as jnp

X = np.array([-0.7, 0.2, 0.9], np.float32)
I = np.array([1, 6, 12], np.int32)

ALIASES = [("acos", np.arccos, X), ("asin", np.arcsin, X), ("atan", np.arctan, X),
           ("acosh", np.arccosh, X + 2), ("asinh", np.arcsinh, X), ("atanh", np.arctanh, X),
           ("bitwise_invert", np.invert, I)]


@pytest.mark.parametrize("name,ref,x", ALIASES, ids=[a[0] for a in ALIASES])
def test_unary_aliases(name, ref, x):
    got = getattr(jnp, name)(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(got), ref(x), rtol=1e-6)
    assert got.dtype == ref(x).dtype


def test_binary_aliases():
    np.testing.assert_allclose(jnp.atan2(jnp.asarray(X), 0.5), np.arctan2(X, np.float32(0.5)),
                               rtol=1e-6)
    np.testing.assert_array_equal(jnp.bitwise_left_shift(jnp.asarray(I), 2), I << 2)
    np.testing.assert_array_equal(jnp.bitwise_right_shift(jnp.asarray(I), 1), I >> 1)
    np.testing.assert_allclose(jnp.pow(jnp.asarray(X), 2), X ** 2, rtol=1e-6)
    np.testing.assert_array_equal(jnp.concat([jnp.asarray(I), jnp.asarray(I)]),
                                  np.concatenate([I, I]))


def test_dsplit_and_triu_indices_from():
    a = np.arange(16.0).reshape(2, 2, 4)
    for got, want in zip(jnp.dsplit(jnp.asarray(a), 2), np.dsplit(a, 2), strict=True):
        np.testing.assert_array_equal(got, want)
    m = np.ones((3, 4))
    for k in (-1, 0, 2):
        for got, want in zip(jnp.triu_indices_from(jnp.asarray(m), k),
                             np.triu_indices_from(m, k), strict=True):
            np.testing.assert_array_equal(got, want)


def test_isdtype_and_iterable():
    assert jnp.isdtype(jnp.int32, "integral") and not jnp.isdtype(jnp.float32, "integral")
    assert jnp.isdtype(jnp.float16, "real floating")
    assert jnp.isdtype(jnp.complex64, ("complex floating", jnp.int8))
    assert jnp.iterable(jnp.ones(3)) and not jnp.iterable(3.0)


def test_print_options_apply_to_array_text():
    before = jnp.get_printoptions()
    with jnp.printoptions(precision=2):
        assert jnp.get_printoptions()["precision"] == 2
        assert "3.14" in str(jnp.array([3.14159])) and "3.1416" not in str(jnp.array([3.14159]))
    assert jnp.get_printoptions() == before
    jnp.set_printoptions(precision=3)
    try:
        assert "3.142" in str(jnp.array([3.14159]))
    finally:
        jnp.set_printoptions(**before)
