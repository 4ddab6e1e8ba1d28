"""The configuration context managers of ``jax.*`` (debug_infs, log_compiles, transfer
guards, no_tracing, ...) and the single-device ``make_array_from_*`` functions."""

import gc
import os
import logging
import subprocess
import sys

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core.config import config
from xjax.errors import JaxRuntimeError

# name of the State -> (a value it accepts besides its default, its default)
STATES = {
    "debug_nans": (True, False), "debug_infs": (True, False),
    "log_compiles": (True, False), "explain_cache_misses": (True, False),
    "check_tracer_leaks": (True, False), "enable_checks": (True, False),
    "numpy_dtype_promotion": ("strict", "standard"),
    "transfer_guard_host_to_device": ("log", None),
    "transfer_guard_device_to_host": ("log", None),
    "transfer_guard_device_to_device": ("log", None),
    "allow_f16_reductions": (False, True), "thread_guard": (True, False),
    "jax2tf_associative_scan_reductions": (True, False),
    "no_tracing": (True, False), "no_execution": (True, False),
    "debug_key_reuse": (None, False), "default_prng_impl": (None, "threefry2x32"),
    "enable_custom_prng": (None, False), "legacy_prng_key": (None, "allow"),
    "softmax_custom_jvp": (None, False), "array_garbage_collection_guard": ("allow", None),
}
# JAX accepts these values; xjax does not implement their effect and says so.
UNSUPPORTED = [("debug_key_reuse", True), ("default_prng_impl", "rbg"),
               ("enable_custom_prng", True), ("legacy_prng_key", "error"),
               ("softmax_custom_jvp", True)]


def _flag(name):
    return "jax2tf_associative_scan_reductions" if name.startswith("jax2tf") else f"jax_{name}"


@pytest.mark.parametrize("name", sorted(STATES))
def test_state_sets_the_flag_inside_the_block_only(name):
    value, default = STATES[name]
    state = getattr(xjax, name)
    flag = _flag(name)
    assert state.value == default == getattr(xjax.config, flag)
    assert state.__name__ == name
    if value is None:
        return
    with state(value):
        assert state.value == value == getattr(xjax.config, flag)
    assert getattr(xjax.config, flag) == default
    config.update(flag, value)
    try:
        assert state.value == value
    finally:
        config.update(flag, default)
    assert state.value == default


@pytest.mark.parametrize("name", sorted(STATES))
def test_state_defaults_and_names_match_jax(name):
    jax = pytest.importorskip("jax")
    ours, theirs = getattr(xjax, name), getattr(jax, name)
    assert ours.__name__ == theirs.__name__
    assert ours.name == theirs.name
    assert ours.value == theirs.value


def test_bool_states_default_to_true_and_work_as_decorators():
    with xjax.debug_infs():
        assert xjax.config.jax_debug_infs is True

    @xjax.log_compiles(True)
    def logging_on():
        return xjax.config.jax_log_compiles

    assert logging_on() is True and xjax.config.jax_log_compiles is False
    with pytest.raises(TypeError, match="bool\\(\\) not supported"):
        bool(xjax.debug_infs)


def test_checking_leaks_is_check_tracer_leaks_true():
    with xjax.checking_leaks():
        assert xjax.config.jax_check_tracer_leaks is True
    assert xjax.config.jax_check_tracer_leaks is False


@pytest.mark.parametrize("name,value", [("numpy_dtype_promotion", "loose"),
                                        ("default_prng_impl", "mt19937"),
                                        ("transfer_guard_host_to_device", "sometimes"),
                                        ("legacy_prng_key", "maybe"),
                                        ("array_garbage_collection_guard", "crash")])
def test_invalid_values_raise_as_in_jax(name, value):
    jax = pytest.importorskip("jax")
    errors = []
    for lib in (xjax, jax):
        with pytest.raises((ValueError, TypeError)) as info:
            lib.config.update(_flag(name), value)
        errors.append((type(info.value), str(info.value).replace("jax._src.config.", "")))
    assert errors[0] == errors[1]


@pytest.mark.parametrize("name,value", UNSUPPORTED)
def test_unimplemented_values_raise_not_implemented(name, value):
    with pytest.raises(NotImplementedError, match="not supported by xjax"):
        xjax.config.update(_flag(name), value)
    with pytest.raises(NotImplementedError, match="not supported by xjax"):
        getattr(xjax, name)(value)
    assert getattr(xjax, name).value == STATES[name][1]


def test_unknown_flag_is_an_attribute_error():
    with pytest.raises(AttributeError, match="Unrecognized config option"):
        xjax.config.update("jax_debug_everything", True)


# -- debug_nans / debug_infs --


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


def _cases(lib, lnp):
    return {
        "eager log": lambda: lnp.log(lnp.array([0.0, -1.0])),
        "eager div": lambda: lnp.array([1.0]) / 0.0,
        "jit log": lambda: lib.jit(lambda x: lnp.log(x) * 2)(lnp.array([0.0, -1.0])),
        "int div": lambda: lnp.array([1, 2]) // lnp.array([0, 1]),
        "grad sqrt": lambda: lib.grad(lambda x: lnp.sqrt(x))(0.0),
        "grad jit sqrt": lambda: lib.grad(lib.jit(lambda x: lnp.sqrt(x)))(0.0),
        "jit nan literal": lambda: lib.jit(lambda x: x * lnp.nan)(1.0),
    }


@pytest.mark.parametrize("flag", ["debug_nans", "debug_infs"])
def test_debug_nans_and_infs_match_jax(flag, capsys):
    jax = pytest.importorskip("jax")
    import jax.numpy as jjnp
    ours, theirs = _cases(xjax, jnp), _cases(jax, jjnp)
    for case in ours:
        with getattr(xjax, flag)(True):
            mine = _error(ours[case])
            mine_out = capsys.readouterr().out
        with getattr(jax, flag)(True):
            ref = _error(theirs[case])
            ref_out = capsys.readouterr().out
        assert mine == ref, case
        if case.startswith("jit"):  # JAX's eager jnp functions are jitted; ours are not
            notice = ("Invalid nan value encountered in the output of a jax.jit function. "
                      "Calling the de-optimized version.\n")
            assert mine_out.startswith(notice) == ref_out.startswith(notice), case


def test_debug_nans_names_the_primitive_and_reruns_jit_op_by_op(capsys):
    with xjax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in "
                                                     "sqrt"):
            xjax.jit(lambda x: jnp.sqrt(x) + 1.0)(jnp.array([-1.0, 4.0]))
        assert "Calling the de-optimized version" in capsys.readouterr().out
        with pytest.raises(FloatingPointError, match="encountered in dot_general"):
            jnp.dot(jnp.array([np.inf, 1.0]), jnp.array([0.0, 1.0]))  # inf * 0
        assert jnp.log(jnp.array([0.0])).tolist() == [-np.inf]  # infs are not watched
    assert np.isnan(jnp.sqrt(jnp.array(-1.0)))  # off again


def test_debug_infs_watches_inside_transformations():
    with xjax.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in log"):
            xjax.vmap(jnp.log)(jnp.array([1.0, 0.0]))
        assert float(xjax.grad(jnp.exp)(1.0)) == pytest.approx(np.e)


# -- log_compiles / explain_cache_misses --


def test_log_compiles_logs_tracing_and_compilation(caplog):
    def my_logged_fun(a, b):
        return a * b

    with caplog.at_level(logging.WARNING), xjax.log_compiles(True):
        xjax.jit(my_logged_fun)(jnp.ones(3), 2.0)
    messages = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Finished tracing + transforming my_logged_fun for jit in ")
               for m in messages)
    assert ("Compiling jit(my_logged_fun) with global shapes and types "
            "(ShapedArray(float32[3]), ShapedArray(float32[], weak_type=True)). Argument "
            "mapping: ('UnspecifiedValue', 'UnspecifiedValue').") in messages
    assert any(m.startswith("Finished XLA compilation of jit(my_logged_fun) in ")
               for m in messages)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        xjax.jit(my_logged_fun)(jnp.ones(4), 2.0)  # compiles, silently
    assert not caplog.records


def test_explain_cache_misses_says_what_changed(caplog):
    def my_missing_fun(a, b):
        return a * b

    f = xjax.jit(my_missing_fun)
    with caplog.at_level(logging.WARNING), xjax.explain_cache_misses(True):
        f(jnp.ones(3), 2.0)
        f(jnp.ones(3), 2.0)  # a hit: nothing logged
        f(jnp.ones(4), 2.0)
        f(jnp.ones(3), b=2.0)
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 3
    assert messages[0].startswith("TRACING CACHE MISS at ")
    assert "never seen function:\n    my_missing_fun at " in messages[0]
    assert "different input types:\n    * at flat input 0, now f32[4] and before f32[3]" \
        in messages[1]
    assert "different input pytree" in messages[2]


# -- no_tracing / no_execution / check_tracer_leaks / enable_checks --


def test_no_tracing_refuses_new_traces_only():
    def g(x):
        return x + 1

    f = xjax.jit(g)
    f(jnp.ones(3))
    with xjax.no_tracing(True):
        assert f(jnp.ones(3)).tolist() == [2.0] * 3  # cached
        with pytest.raises(RuntimeError, match="re-tracing function g at .* for `jit`, but "
                                               "'no_tracing' is set"):
            f(jnp.ones(4))
        with pytest.raises(RuntimeError, match="'no_tracing' is set"):
            xjax.make_jaxpr(g)(1.0)
        assert jnp.sin(jnp.zeros(2)).tolist() == [0.0, 0.0]  # eager ops do not trace


def test_no_execution_refuses_eager_and_compiled_runs():
    f = xjax.jit(lambda x: x + 1)
    x = jnp.ones(3)
    f(x)
    with xjax.no_execution(True):
        with pytest.raises(RuntimeError, match="JAX tried to execute function sin, but the "
                                               "no_execution config option is set"):
            jnp.sin(x)
        with pytest.raises(RuntimeError, match=r"execute function jit\(<lambda>\)"):
            f(x)
        assert "add" in str(xjax.make_jaxpr(f)(x))  # tracing is fine
        assert xjax.eval_shape(jnp.sin, x).shape == (3,)
    assert f(x).tolist() == [2.0] * 3


def test_no_execution_message_matches_jax():
    jax = pytest.importorskip("jax")
    f, g = xjax.jit(lambda x: x * 2), jax.jit(lambda x: x * 2)
    x, y = jnp.ones(2), jax.numpy.ones(2)
    f(x)
    g(y)
    with xjax.no_execution(True), jax.no_execution(True):
        assert _error(lambda: f(x)) == _error(lambda: g(y))


def test_check_tracer_leaks_finds_a_leaked_tracer():
    leaked = []

    def leaky(a):
        leaked.append(a)
        return a * 2

    with xjax.checking_leaks():
        assert xjax.jit(lambda a: a * 2)(jnp.ones(2)).tolist() == [2.0, 2.0]
        with pytest.raises(Exception, match="Leaked trace StagingTrace. Leaked tracer"):
            xjax.jit(leaky)(jnp.ones(2))
        leaked.clear()
        with pytest.raises(Exception, match="Leaked trace"):
            xjax.make_jaxpr(leaky)(1.0)
    leaked.clear()
    xjax.jit(leaky)(jnp.ones(3))  # unchecked when the flag is off
    assert len(leaked) == 1


def test_enable_checks_turns_on_jaxpr_type_checks():
    previous = config.xjax_check_jaxprs
    config.update("xjax_check_jaxprs", False)
    try:
        with xjax.enable_checks(True):
            assert config.xjax_check_jaxprs is True
        assert config.xjax_check_jaxprs is False
    finally:
        config.update("xjax_check_jaxprs", previous)


def test_allow_f16_reductions_false_refuses_half_precision_reduce_sum():
    x16, xb16 = jnp.ones(3, jnp.float16), jnp.ones((2, 2), jnp.bfloat16)
    with xjax.allow_f16_reductions(False):
        with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[3\] is not allowed "
                                             "when jax_allow_f16_reductions=False."):
            xjax.lax.reduce_sum(x16, (0,))
        with pytest.raises(ValueError, match=r"bf16\[2,2\]"):
            xjax.jit(lambda a: xjax.lax.reduce_sum(a, (0,)))(xb16)
        ones = jnp.ones((1, 3), jnp.float16)
        assert xjax.lax.reduce_sum(ones, (0,)).shape == (3,)  # size-1 axes only
        assert xjax.lax.reduce_sum(jnp.ones(3, jnp.float32), (0,)) == 3.0
    assert xjax.lax.reduce_sum(x16, (0,)) == 3.0


def test_allow_f16_reductions_message_matches_jax():
    jax = pytest.importorskip("jax")
    x, y = jnp.ones(3, jnp.float16), jax.numpy.ones(3, jax.numpy.float16)
    with xjax.allow_f16_reductions(False), jax.allow_f16_reductions(False):
        assert _error(lambda: xjax.lax.reduce_sum(x, (0,))) == \
            _error(lambda: jax.lax.reduce_sum(y, (0,)))


def test_flags_without_effect_on_one_process_are_accepted():
    with xjax.thread_guard(True), xjax.jax2tf_associative_scan_reductions(True):
        assert jnp.cumsum(jnp.arange(4)).tolist() == [0, 1, 3, 6]


# -- array_garbage_collection_guard --

GC_MESSAGE = ("`jax.Array` was deleted by the Python garbage collector instead of reference "
              "counting. Break the reference cycle that delays the deletion of this "
              "`jax.Array` to avoid hogging memory.")


def _array_in_a_cycle(n):
    cycle = [jnp.ones(n)]
    cycle.append(cycle)


def test_array_garbage_collection_guard_logs_arrays_freed_by_the_collector(caplog):
    gc.collect()
    gc.disable()
    try:
        with caplog.at_level(logging.ERROR), xjax.array_garbage_collection_guard("log"):
            x = jnp.ones(2)
            del x  # reference counting: fine
            _array_in_a_cycle(3)
            gc.collect()
        messages = [r.getMessage() for r in caplog.records]
        assert messages == [f"{GC_MESSAGE} Array: ShapedArray(float32[3])"]
        caplog.clear()
        _array_in_a_cycle(4)  # the guard is off again
        gc.collect()
        assert not caplog.records
        assert "__del__" not in vars(xjax.Array)
    finally:
        gc.enable()


def test_array_garbage_collection_guard_fatal_aborts():
    code = ("import gc, xjax, xjax.numpy as jnp\n"
            "xjax.config.update('jax_array_garbage_collection_guard', 'fatal')\n"
            "c = [jnp.ones(2)]; c.append(c); del c\n"
            "gc.collect()\n"
            "print('survived')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode != 0
    assert "survived" not in proc.stdout
    assert GC_MESSAGE in proc.stderr


# -- transfer guards --


def test_transfer_guard_disallow_refuses_implicit_host_to_device():
    f = xjax.jit(lambda a: a + 1)
    x = jnp.ones(3)
    with xjax.transfer_guard("disallow"):
        with pytest.raises(JaxRuntimeError, match=r"INVALID_ARGUMENT: Disallowed "
                                                  r"host-to-device transfer: aval=ShapedArray"
                                                  r"\(float32\[3\]\)"):
            f(np.ones(3, np.float32))
        with pytest.raises(JaxRuntimeError, match="weak_type=True"):
            f(1.0)
        with pytest.raises(JaxRuntimeError, match="Disallowed host-to-device"):
            x + np.ones(3, np.float32)
        assert f(x).tolist() == [2.0] * 3  # arrays already on the device
        assert xjax.device_put(np.ones(2)).shape == (2,)  # explicit: allowed
        assert np.asarray(x).tolist() == [1.0] * 3  # a CPU array's memory is the host's
    assert f(np.ones(3, np.float32)).tolist() == [2.0] * 3


def test_transfer_guard_disallow_explicit_refuses_device_put():
    x = jnp.ones(2)
    with xjax.transfer_guard("disallow_explicit"):
        with pytest.raises(JaxRuntimeError, match="Disallowed host-to-device"):
            xjax.device_put(np.ones(2))
        with pytest.raises(JaxRuntimeError, match="Disallowed host-to-device"):
            jnp.ones(2)  # its fill value is a host scalar, as in JAX
        assert xjax.device_put(x) is x


def test_transfer_guard_log_logs_and_allows(caplog):
    with caplog.at_level(logging.WARNING), xjax.transfer_guard_host_to_device("log"):
        assert xjax.jit(lambda a: a * 2)(np.ones(2, np.float32)).tolist() == [2.0, 2.0]
        xjax.device_put(np.ones(2))  # explicit: not logged at "log"
    assert [r.getMessage() for r in caplog.records] == [
        "host-to-device transfer: aval=ShapedArray(float32[2]), dst_sharding="
        "SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)"]


def test_transfer_guard_sets_every_direction():
    with xjax.transfer_guard("log_explicit"):
        assert (config.jax_transfer_guard_host_to_device
                == config.jax_transfer_guard_device_to_host
                == config.jax_transfer_guard_device_to_device == "log_explicit")
    assert config.jax_transfer_guard_host_to_device is None
    xjax.config.update("jax_transfer_guard", "disallow")
    try:
        assert config.jax_transfer_guard_device_to_host == "disallow"
    finally:
        xjax.config.update("jax_transfer_guard", None)
    assert config.jax_transfer_guard_device_to_device is None


class _FakeDevice:
    platform, id = "cuda", 0

    def __repr__(self):
        return "CudaDevice(id=0)"


class _FakeGpuBuffer:
    """Stands for a buffer in GPU memory (no GPU needed): reading it is a device-to-host
    transfer."""

    device = _FakeDevice()

    def to_numpy(self):
        return np.arange(3, dtype=np.float32)

    def is_deleted(self):
        return False


def _gpu_array():
    return xjax.Array._from_buffer(_FakeGpuBuffer(),
                                   xjax._src.core.avals.ShapedArray((3,), np.dtype(np.float32)))


def test_device_to_host_guard_watches_non_cpu_arrays():
    with xjax.transfer_guard_device_to_host("disallow"):
        with pytest.raises(JaxRuntimeError, match="Disallowed device-to-host transfer: "
                                                  r"aval=ShapedArray\(float32\[3\]\)"):
            np.asarray(_gpu_array())
        assert xjax.device_get(_gpu_array()).tolist() == [0.0, 1.0, 2.0]  # explicit
    with xjax.transfer_guard_device_to_host("disallow_explicit"):
        with pytest.raises(JaxRuntimeError, match="Disallowed device-to-host"):
            xjax.device_get(_gpu_array())
    assert np.asarray(_gpu_array()).tolist() == [0.0, 1.0, 2.0]


def test_device_to_device_guard_watches_device_put_to_another_device():
    cpu = xjax.devices("cpu")[0]
    with xjax.transfer_guard_device_to_device("disallow_explicit"):
        with pytest.raises(JaxRuntimeError, match="Disallowed device-to-device transfer"):
            xjax.device_put(_gpu_array(), cpu)
        x = xjax.device_put(jnp.ones(2), cpu)  # on that device already
        assert xjax.device_put(x, cpu).tolist() == [1.0, 1.0]
    with xjax.transfer_guard_device_to_device("disallow"):  # explicit transfers pass
        assert xjax.device_put(_gpu_array(), cpu).tolist() == [0.0, 1.0, 2.0]


def test_transfer_guard_message_matches_jax():
    jax = pytest.importorskip("jax")
    f, g = xjax.jit(lambda a: a + 1), jax.jit(lambda a: a + 1)
    for arg in (np.ones(3, np.float32), 2.0, np.int32(3)):
        with xjax.transfer_guard("disallow"):
            mine = _error(lambda: f(arg))
        with jax.transfer_guard("disallow"):
            ref = _error(lambda: g(arg))
        assert mine == ref


# -- arrays from data, single device --


def test_make_array_from_callback_passes_the_whole_index():
    data = np.arange(6, dtype=np.float32).reshape(2, 3)
    seen = []

    def cb(index):
        seen.append(index)
        return data[index]

    out = xjax.make_array_from_callback((2, 3), xjax.devices()[0], cb)
    assert seen == [(slice(None), slice(None))]
    assert type(out) is xjax.Array and out.dtype == np.float32
    np.testing.assert_array_equal(out, data)
    with pytest.raises(ValueError, match="must match the dtype"):
        xjax.make_array_from_callback((2, 3), xjax.devices()[0], cb, dtype=np.int32)
    with pytest.raises(ValueError, match="doesn't match the single device array shape"):
        xjax.make_array_from_callback((3, 2), xjax.devices()[0], cb)
    with pytest.raises(TypeError, match="sharding should be an instance"):
        xjax.make_array_from_callback((2, 3), "cpu", cb)


def test_make_array_from_callback_matches_jax():
    jax = pytest.importorskip("jax")
    from jax.sharding import SingleDeviceSharding
    data = np.arange(4.0).reshape(2, 2)  # float64: canonicalized to float32
    mine = xjax.make_array_from_callback((2, 2), xjax.devices()[0], lambda i: data[i])
    ref = jax.make_array_from_callback((2, 2), SingleDeviceSharding(jax.devices()[0]),
                                       lambda i: data[i])
    assert mine.dtype == ref.dtype and mine.shape == ref.shape
    np.testing.assert_array_equal(mine, ref)


def test_make_array_from_single_device_arrays():
    x = jnp.arange(3)
    out = xjax.make_array_from_single_device_arrays((3,), xjax.devices()[0], [x])
    assert out.tolist() == [0, 1, 2] and out.dtype == jnp.int32
    with pytest.raises(TypeError, match="must be a list or tuple"):
        xjax.make_array_from_single_device_arrays((3,), xjax.devices()[0], x)
    with pytest.raises(ValueError, match="doesn't match"):
        xjax.make_array_from_single_device_arrays((4,), xjax.devices()[0], [x])
    with pytest.raises(ValueError, match="`dtype` must be provided"):
        xjax.make_array_from_single_device_arrays((3,), xjax.devices()[0], [])


def test_make_array_from_process_local_data():
    out = xjax.make_array_from_process_local_data(
        xjax.devices()[0], {"a": np.ones(2, np.float32), "b": np.zeros((2, 2), np.int32)})
    assert out["a"].tolist() == [1.0, 1.0] and out["b"].dtype == jnp.int32
    assert type(out["a"]) is xjax.Array
    with pytest.raises(ValueError, match="global_shape should be None or equal to "
                                         "local_data.shape"):
        xjax.make_array_from_process_local_data(xjax.devices()[0], np.ones(2), (4,))


def test_copy_to_host_async_returns_its_argument():
    tree = {"a": jnp.ones(2), "b": 3, "c": np.zeros(1)}
    assert xjax.copy_to_host_async(tree) is tree
    x = xjax.jit(lambda a: a * 2)(jnp.ones(2))
    assert xjax.copy_to_host_async(x) is x


def test_version_module():
    assert xjax.version.__version__ == xjax.__version__
    assert isinstance(xjax.version._version, str)


def test_parse_flags_with_absl_reads_jax_flags_before_the_separator(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["prog.py", "--jax_debug_infs", "--other=1",
                                      "--jax_default_matmul_precision=highest", "--",
                                      "--jax_log_compiles=true"])
    try:
        xjax.config.parse_flags_with_absl()
        assert config.jax_debug_infs is True
        assert config.jax_default_matmul_precision == "highest"
        assert config.jax_log_compiles is False  # after '--': the program's own arguments
    finally:
        config.update("jax_debug_infs", False)
        config.update("jax_default_matmul_precision", None)


def test_every_jax_flag_reads_its_environment_variable():
    # As JAX: JAX_ENABLE_X64=1 (any spelling of a truth value), enum and int flags too;
    # a value JAX rejects stops the import with a clear error.
    script = ("import xjax, xjax.numpy as jnp; c = xjax.config; print(jnp.zeros(1).dtype, "
              "c.jax_numpy_rank_promotion, c.jax_debug_nans, c.x64_enabled)")
    env = dict(os.environ, JAX_ENABLE_X64="yes", JAX_NUMPY_RANK_PROMOTION="raise",
               JAX_DEBUG_NANS="0")
    out = subprocess.run([sys.executable, "-c", script], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out == ["float64", "raise", "False", "True"]
    bad = subprocess.run([sys.executable, "-c", "import xjax"], capture_output=True, text=True,
                         env=dict(os.environ, JAX_NUMPY_RANK_PROMOTION="sometimes"))
    assert bad.returncode != 0 and "JAX_NUMPY_RANK_PROMOTION" in bad.stderr
