"""xjax.random reproduces JAX 0.10.2's random numbers for the same keys: every vector of
tests/data/random-known-answers.json, in both Threefry modes, eagerly, under jit and per key
under vmap. Bit for bit for keys, split, fold_in, bits, randint, bernoulli, permutation and
uniform; within 2 ulp for normal."""

import json
import pathlib

import numpy as np
import pytest

import xjax
from xjax import random

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "random-known-answers.json"
CASES = json.loads(DATA.read_text())["cases"]
SEEDS = sorted({c["seed"] for c in CASES})

# call name -> function of a legacy key
CALLS = {
    "PRNGKey": lambda k: k,
    "split2": lambda k: random.split(k),
    "split3": lambda k: random.split(k, 3),
    "fold_in_7": lambda k: random.fold_in(k, 7),
    "bits_u32_(5,)": lambda k: random.bits(k, (5,)),
    "uniform_(7,)": lambda k: random.uniform(k, (7,)),
    "uniform_(2,3)_min-2_max3": lambda k: random.uniform(k, (2, 3), minval=-2, maxval=3),
    "normal_(10,)": lambda k: random.normal(k, (10,)),
    "normal_(3,4)": lambda k: random.normal(k, (3, 4)),
    "randint_(6,)_0_10": lambda k: random.randint(k, (6,), 0, 10),
    "bernoulli_(8,)_p0.3": lambda k: random.bernoulli(k, 0.3, (8,)),
    "permutation_10": lambda k: random.permutation(k, 10),
}


def _expected(result):
    dtype = np.dtype(result["dtype"])
    if "hex" in result:
        bits = np.array([int(h, 16) for h in result["hex"]], np.uint32)
        values = bits.view(dtype)
    else:
        values = np.array(result["values"], dtype)
    return values.reshape(result["shape"])


def _ulp_distance(a, b):
    """Distance in units in the last place between float32 arrays (ordered as integers)."""
    def ordered(x):
        i = np.asarray(x, np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(ordered(a) - ordered(b))


def _check(case, got):
    want = _expected(case["result"])
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    if case["call"].startswith("normal"):
        assert _ulp_distance(got, want).max() <= 2, (got, want)
    else:
        np.testing.assert_array_equal(got.view(np.uint32) if got.dtype == np.float32 else got,
                                      want.view(np.uint32) if want.dtype == np.float32
                                      else want)


def _ids(case):
    mode = "partitionable" if case["partitionable"] else "legacy"
    return f"{mode}-seed{case['seed']}-{case['call']}"


@pytest.fixture
def mode():
    old = xjax.config.jax_threefry_partitionable
    yield lambda flag: xjax.config.update("jax_threefry_partitionable", flag)
    xjax.config.update("jax_threefry_partitionable", old)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_eager(case, mode):
    mode(case["partitionable"])
    _check(case, CALLS[case["call"]](random.PRNGKey(case["seed"])))


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_jit(case, mode):
    mode(case["partitionable"])
    call = CALLS[case["call"]]
    _check(case, xjax.jit(lambda k: call(k))(random.PRNGKey(case["seed"])))


def test_jit_cache_follows_the_threefry_mode(mode):
    f = xjax.jit(lambda k: random.split(k))
    mode(True)
    partitionable = np.asarray(f(random.PRNGKey(0)))
    mode(False)
    np.testing.assert_array_equal(np.asarray(f(random.PRNGKey(0))),
                                  np.asarray(random.split(random.PRNGKey(0))))
    assert not np.array_equal(partitionable, np.asarray(f(random.PRNGKey(0))))


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_typed_key(case, mode):
    """A typed key gives the same numbers as the legacy key of the same seed."""
    mode(case["partitionable"])
    out = CALLS[case["call"]](random.key(case["seed"]))
    if isinstance(out, random.PRNGKeyArray):
        out = random.key_data(out)
    _check(case, out)


@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_vmap_over_keys(call, partitionable, mode):
    """vmap over a batch of keys gives, per key, what each key gives alone."""
    mode(partitionable)
    cases = {c["seed"]: c for c in CASES
             if c["call"] == call and c["partitionable"] == partitionable}
    keys = xjax.numpy.stack([random.PRNGKey(s) for s in SEEDS])
    batched = xjax.vmap(CALLS[call])(keys)
    for i, seed in enumerate(SEEDS):
        _check(cases[seed], np.asarray(batched)[i])


def test_seed000_values_in_legacy_mode(mode):
    """The seed's `random.normal(random.PRNGKey(0), (10,))` with the legacy mode."""
    mode(False)
    x = random.normal(random.PRNGKey(0), (10,))
    assert str(x) == ("[-0.3721109   0.26423115 -0.18252768 -0.7368197  -0.44030377 "
                      "-0.1521442\n -0.67135346 -0.5908641   0.73168886  0.5673026 ]")
    np.testing.assert_array_equal(np.asarray(xjax.jit(random.normal, static_argnums=1)(
        random.PRNGKey(0), (10,))), np.asarray(x))


def test_partitionable_is_the_default():
    assert xjax.config.jax_threefry_partitionable is True
