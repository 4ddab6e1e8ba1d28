"""The seeds' two impurity gotchas, detected (beyond JAX): a retrace that finds a changed
global or closure value, and a loop body that advances a captured Python iterator."""

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.errors import ImpureFunctionWarning

g = 0.0
big_table = np.arange(4.0)


def impure_uses_globals(x):
    return x + g


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", ImpureFunctionWarning)
        yield


@pytest.fixture
def purity_off():
    xjax.config.update("xjax_purity_warnings", False)
    try:
        yield
    finally:
        xjax.config.update("xjax_purity_warnings", True)


def test_seed_global_changed_then_retraced_warns_with_names_and_values():
    global g
    g = 0.0
    f = xjax.jit(impure_uses_globals)
    assert float(f(4.0)) == 4.0
    g = 10.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ImpureFunctionWarning)
        assert float(f(5.0)) == 5.0  # the cached executable: stale, as in JAX, and silent
    with pytest.warns(ImpureFunctionWarning) as record:
        out = xjax.jit(impure_uses_globals)(jnp.array([4.0]))
    np.testing.assert_array_equal(out, [14.0])
    message = str(record[0].message)
    assert "'impure_uses_globals'" in message and "'g' was 0.0, now 10.0" in message
    assert "xjax_purity_warnings" in message
    assert record[0].filename == __file__  # points at the user's call


def test_retrace_with_unchanged_globals_is_silent(no_warnings):
    global g
    g = 3.0
    f = xjax.jit(lambda x: x * g + big_table.sum())
    f(1.0)
    np.testing.assert_allclose(f(jnp.ones(3)), 9.0)


def test_changed_numpy_global_in_place_warns():
    def uses_table(x):
        return x + big_table

    f = xjax.jit(uses_table)
    f(jnp.zeros(4))
    big_table[0] = 100.0
    try:
        with pytest.warns(ImpureFunctionWarning, match="'big_table' was array"):
            f(jnp.zeros(4, jnp.int32))
    finally:
        big_table[0] = 0.0


def test_changed_closure_value_warns():
    scale = 2.0

    def scaled(x):
        return x * scale

    f = xjax.jit(scaled)
    assert float(f(1.0)) == 2.0
    scale = 5.0
    with pytest.warns(ImpureFunctionWarning, match="'scale' was 2.0, now 5.0"):
        np.testing.assert_allclose(f(jnp.ones(2)), [5.0, 5.0])


def test_counter_the_function_increments_itself_is_not_reported(no_warnings):
    traces = 0

    def counted(x):
        nonlocal traces
        traces += 1
        return x + 1

    f = xjax.jit(counted)
    f(1.0)
    f(jnp.ones(2))
    f(jnp.ones(3, jnp.int32))
    assert traces == 3


def test_no_warning_once_the_cache_is_cleared(no_warnings):
    offset = 1.0

    def shifted(x):
        return x + offset

    f = xjax.jit(shifted)
    f(1.0)
    offset = 2.0
    f.clear_cache()  # no executable holds the old value any more
    assert float(f(jnp.float32(1.0))) == 3.0


def test_flag_silences_the_retrace_warning(purity_off, no_warnings):
    level = 1

    def leveled(x):
        return x + level

    f = xjax.jit(leveled)
    f(1.0)
    level = 7
    assert float(f(jnp.float32(0.0))) == 7.0


def test_fori_loop_advancing_a_captured_iterator_warns():
    iterator = iter(range(10))
    with pytest.warns(ImpureFunctionWarning, match="lax.fori_loop: .*'iterator'") as record:
        out = lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0)
    assert int(out) == 0  # what JAX gives too: next() ran once, at trace time
    assert record[0].filename == __file__


def test_scan_and_while_loop_advancing_captured_iterators_warn():
    values = iter([1.0, 2.0, 3.0])
    with pytest.warns(ImpureFunctionWarning, match="lax.scan"):
        lax.scan(lambda c, _: (c + next(values), None), 0.0, None, length=3)
    steps = iter(range(100))
    with pytest.warns(ImpureFunctionWarning, match="lax.while_loop"):
        lax.while_loop(lambda c: c < 10, lambda c: c + 1 + next(steps), 0)


def test_generator_without_length_is_reported_when_the_body_calls_next():
    def numbers():
        yield from range(10)

    source = numbers()
    with pytest.warns(ImpureFunctionWarning, match="'source'"):
        lax.fori_loop(0, 3, lambda i, x: x + next(source), 0)


def test_loop_over_an_array_is_silent(no_warnings):
    unused_iterator = iter(range(10))
    array = jnp.arange(10)

    def body(i, x):
        assert unused_iterator is not None  # captured, never advanced
        return x + array[i]

    assert int(lax.fori_loop(0, 10, body, 0)) == 45


def test_disable_jit_runs_the_body_per_iteration_and_is_silent(no_warnings):
    iterator = iter(range(10))
    with xjax.disable_jit():
        out = lax.fori_loop(0, 10, lambda i, x: x + next(iterator), 0)
    assert int(out) == 45


def test_environment_variable_silences_both_warnings():
    program = (
        "import warnings; warnings.simplefilter('error')\n"
        "import xjax, xjax.numpy as jnp\nfrom xjax import lax\n"
        "g = 0.\n"
        "def f(x):\n    return x + g\n"
        "xjax.jit(f)(1.); g = 1.; xjax.jit(f)(jnp.ones(2))\n"
        "it = iter(range(5)); lax.fori_loop(0, 5, lambda i, x: x + next(it), 0)\n"
        "print('quiet')\n")
    env = dict(os.environ, XJAX_PURITY_WARNINGS="0")
    done = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "quiet"
