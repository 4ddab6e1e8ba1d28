"""Tests of Executable.call_arrays, the C path of every jitted call on device Arrays, and of
its fallback to the general path (NumPy values, host-resident Arrays, donation, many
arguments)."""

import gc
import sys
import weakref

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.core.array import Array
from xjax._src.runtime import _pjrt


def _device_array(value):
    x = jnp.asarray(value)
    x._device_buffer()  # on the device, as a computed result is
    return x


def _compiled(fun, *args):
    """The CompiledFunction jit made for ``fun`` at ``args``, and its flat arguments."""
    jitted = xjax.jit(fun)
    jitted(*args)
    entry, flat, _ = jitted._entry(args, {})
    return entry.compiled, flat


def test_jitted_call_on_device_arrays_gives_arrays_with_the_output_avals():
    x = _device_array(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = _device_array(np.float32(2.5))
    compiled, flat = _compiled(lambda a, b: (a * b, (a + 1).sum(0).astype(jnp.int32)), x, y)
    outs = compiled.executable.call_arrays(compiled.const_args, tuple(flat), compiled.in_avals,
                                           compiled.out_avals)
    assert [type(o) for o in outs] == [Array, Array]
    assert [o.aval for o in outs] == list(compiled.out_avals)
    assert all(o._npy is None for o in outs)  # device results, read back on demand
    np.testing.assert_array_equal(np.asarray(outs[0]), np.asarray(x) * np.float32(2.5))
    np.testing.assert_array_equal(np.asarray(outs[1]),
                                  (np.asarray(x) + 1).sum(0).astype(np.int32))


@pytest.mark.parametrize("kind", ["numpy", "host_array", "python_scalar"])
def test_arguments_that_are_not_device_arrays_take_the_general_path(kind):
    value = np.arange(5, dtype=np.float32)
    device = _device_array(value)
    compiled, _ = _compiled(lambda a: a * 3, device)
    arg = {"numpy": value, "host_array": Array(value),
           "python_scalar": None}[kind]
    if kind == "python_scalar":
        compiled, _ = _compiled(lambda a: a * 3, jnp.float32(2))
        arg, value = 2.0, np.float32(2)
    assert compiled.executable.call_arrays(compiled.const_args, (arg,), compiled.in_avals,
                                           compiled.out_avals) is None
    (out,) = compiled(arg)
    np.testing.assert_array_equal(np.asarray(out), value * 3)


def test_closed_over_constants_are_passed_first():
    table = np.linspace(-1, 1, 4096, dtype=np.float32)  # large: passed as an argument
    x = _device_array(np.full(4096, 2, np.float32))
    compiled, flat = _compiled(lambda a: a * table + 1, x)
    assert compiled.const_args, "the constant should be an argument of the program"
    (out,) = compiled(*flat)
    np.testing.assert_array_equal(np.asarray(out), np.full(4096, 2, np.float32) * table + 1)


def test_more_arguments_than_the_stack_holds_fall_back():
    args = [_device_array(np.float32(i)) for i in range(40)]
    compiled, flat = _compiled(lambda *xs: sum(xs[1:], xs[0]), *args)
    assert compiled.executable.call_arrays(compiled.const_args, tuple(flat), compiled.in_avals,
                                           compiled.out_avals) is None
    (out,) = compiled(*flat)
    assert float(out) == sum(range(40))


def test_wrong_argument_count_falls_back_to_the_general_error():
    x = _device_array(np.ones(3, np.float32))
    compiled, _ = _compiled(lambda a: a + 1, x)
    assert compiled.executable.call_arrays(compiled.const_args, (x, x), compiled.in_avals,
                                           compiled.out_avals) is None
    with pytest.raises(ValueError):
        compiled(x, x)


def test_donated_arguments_take_the_donating_path():
    x = _device_array(np.arange(4, dtype=np.float32))
    f = xjax.jit(lambda a: a + 1, donate_argnums=0)
    out = f(x)
    np.testing.assert_array_equal(np.asarray(out), np.arange(4, dtype=np.float32) + 1)
    assert x.is_deleted()


def test_results_and_arguments_are_freed():
    x = _device_array(np.arange(4, dtype=np.float32))
    f = xjax.jit(lambda a: (a + 1, a * 2))
    f(x)
    buffer = x._buffer
    before = sys.getrefcount(buffer)
    out_buffers = []
    for _ in range(1000):
        outs = f(x)
        out_buffers.append(weakref.ref(outs[0]._buffer))
    del outs
    gc.collect()
    assert sys.getrefcount(buffer) == before
    assert all(ref() is None for ref in out_buffers)


def test_set_array_class_needs_the_three_slots():
    class NoSlots:
        pass

    class SomeSlots:
        __slots__ = ("_aval", "_npy")

    for cls in (NoSlots, SomeSlots):
        with pytest.raises(TypeError, match="has no object slot"):
            _pjrt.set_array_class(cls)
    with pytest.raises(TypeError, match="takes a class"):
        _pjrt.set_array_class(object())
    _pjrt.set_array_class(Array)  # (unchanged: a failed call keeps the registered class)


def test_call_arrays_checks_its_argument_types():
    x = _device_array(np.ones(2, np.float32))
    compiled, _ = _compiled(lambda a: a + 1, x)
    with pytest.raises(TypeError, match="call_arrays"):
        compiled.executable.call_arrays(compiled.const_args, [x], compiled.in_avals,
                                        compiled.out_avals)


@pytest.mark.parametrize("kind", ["device_array", "numpy"])
def test_each_call_is_recorded_once(kind):
    from xjax._src.higher_order import jit_call
    x = _device_array(np.arange(3, dtype=np.float32))
    compiled, _ = _compiled(lambda a: a - 1, x)
    arg = x if kind == "device_array" else np.arange(3, dtype=np.float32)
    records = []
    jit_call.set_execution_recorder(lambda c, start, end: records.append(c))
    try:
        (out,) = compiled(arg)
    finally:
        jit_call.set_execution_recorder(None)
    assert records == [compiled]
    np.testing.assert_array_equal(np.asarray(out), np.arange(3, dtype=np.float32) - 1)
