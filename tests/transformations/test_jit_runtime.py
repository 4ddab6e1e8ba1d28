"""What a jitted call hands XLA: closed-over constants (arguments or folded literals) and
asynchronous dispatch (results come back before the computation ends)."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.lowering.lower_jaxpr import MAX_EMBEDDED_CONSTANT_BYTES


def _main_signature(text):
    return next(line for line in text.splitlines() if "func.func public @main" in line)


# -- closure constants --

def test_large_closed_over_constant_is_an_argument_not_a_literal():
    big = np.arange(1000, dtype=np.float32)  # 4000 bytes
    assert big.nbytes > MAX_EMBEDDED_CONSTANT_BYTES
    f = xjax.jit(lambda a: a * big)
    text = f.lower(jnp.ones(1000)).as_text()
    assert _main_signature(text).count("tensor<1000xf32>") == 3  # the const, x, the result
    assert "tensor<1000xf32>} : () -> tensor<1000xf32>" not in text  # no constant op
    assert big.tobytes().hex().upper()[:64] not in text
    np.testing.assert_array_equal(f(jnp.ones(1000)), big)


def test_small_closed_over_constant_is_folded_into_the_module():
    small = np.array([1.5, 2.5, 3.5], np.float32)
    f = xjax.jit(lambda a: a * small)
    text = f.lower(jnp.ones(3)).as_text()
    assert _main_signature(text).count("tensor<3xf32>") == 2  # x and the result only
    assert small.tobytes().hex().upper() in text  # a dense<"0x..."> literal
    np.testing.assert_array_equal(f(jnp.ones(3)), small)


def test_large_constant_array_from_xjax_is_passed_and_correct():
    table = jnp.arange(2048.0) * 2  # a closed-over xjax.Array
    f = xjax.jit(lambda i: table[i])
    assert _main_signature(f.lower(3).as_text()).count("tensor<2048xf32>") == 1
    assert float(f(3)) == 6.0
    assert float(f(1000)) == 2000.0


# -- asynchronous dispatch --

def _slow_program():
    """A jitted loop of matmuls by an identity matrix XLA cannot see through: about a
    second of work whose result is cheap to know (tanh applied `n` times)."""

    def body(_, x_w):
        x, w = x_w
        return jnp.tanh(x @ w), w

    @xjax.jit
    def run(x, w, n):
        return xjax.lax.fori_loop(0, n, body, (x, w))[0]

    return run


def _expected(x, n):
    for _ in range(n):
        x = np.tanh(x)
    return x


@pytest.fixture(scope="module")
def slow():
    run = _slow_program()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 512)).astype(np.float32)
    w = xjax.device_put(np.eye(512, dtype=np.float32))
    x_dev = xjax.device_put(x)
    run(x_dev, w, 1).block_until_ready()  # compile outside the measured calls
    return run, x, x_dev, w


N_STEPS = 150  # ~40 GFLOP: far longer than returning from the call takes


@pytest.mark.parametrize("wait", [np.asarray, lambda y: y.block_until_ready(),
                                  lambda y: float(y[0, 0]), repr],
                         ids=["asarray", "block_until_ready", "float", "repr"])
def test_jitted_call_returns_before_the_computation_ends(slow, wait):
    run, x, x_dev, w = slow
    y = run(x_dev, w, N_STEPS)
    # Had the call waited for XLA, the result would be ready here.
    assert not y.is_ready()
    wait(y)  # every host read waits for the value
    assert y.is_ready()
    np.testing.assert_allclose(np.asarray(y), _expected(x, N_STEPS), rtol=2e-5, atol=1e-6)


def test_printing_waits_for_the_value(slow, capsys):
    run, x, x_dev, w = slow
    y = run(x_dev, w, N_STEPS)
    assert not y.is_ready()
    print(y)
    printed = capsys.readouterr().out
    assert y.is_ready()
    assert printed == str(np.asarray(y)) + "\n"  # what was printed is the final value
    np.testing.assert_allclose(np.asarray(y), _expected(x, N_STEPS), rtol=2e-5, atol=1e-6)


def test_eager_host_values_are_always_ready():
    assert jnp.arange(3.0).is_ready()


# -- dispatch: the positional-Arrays fast path finds the same entries as the general path --

def test_fast_path_shares_entries_with_the_general_path():
    traces = []

    def f(x, y):
        traces.append(1)
        return x * y

    g = xjax.jit(f)
    a, b = jnp.ones(3), jnp.full(3, 2.0)
    np.testing.assert_array_equal(g(a, b), [2, 2, 2])
    np.testing.assert_array_equal(g(a, y=b), [2, 2, 2])  # general path: another in_tree
    np.testing.assert_array_equal(g(a, b), [2, 2, 2])  # fast path: a hit
    np.testing.assert_array_equal(g(np.ones(3, np.float32), b), [2, 2, 2])  # general: a hit
    assert len(traces) == 2


@pytest.mark.parametrize("other", [
    jnp.ones(4),                          # another shape
    jnp.ones(3, jnp.int32),               # another dtype
    xjax.Array(np.float32(1.0), True),    # a weakly typed scalar
])
def test_fast_path_retraces_on_a_new_signature(other):
    traces = []

    def f(x):
        traces.append(x)
        return x + 1

    g = xjax.jit(f)
    g(jnp.ones(3))
    out = g(other)
    assert len(traces) == 2
    assert out.dtype == other.dtype and out.shape == other.shape
    assert out.weak_type == other.weak_type


def test_fast_path_follows_x64():
    g = xjax.jit(lambda x: x + 1)
    x = xjax.Array(np.arange(3, dtype=np.int32))
    assert g(x).dtype == np.int32
    with xjax.config.override(jax_enable_x64=True):
        assert g(x + 0).dtype == np.int32
        assert g(xjax.Array(np.arange(3, dtype=np.int64))).dtype == np.int64


def test_clear_caches_reaches_existing_jit_wrappers():
    traces = []

    def f(x):
        traces.append(1)
        return x + 1

    g = xjax.jit(f)
    g(jnp.ones(2))
    g(jnp.ones(2))
    xjax.clear_caches()
    g(jnp.ones(2))
    assert len(traces) == 2
