"""The runtime's XLA FFI custom calls: host callbacks into Python and LAPACK getrf, compiled
from hand-written StableHLO (no jaxprs)."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

from xjax._src.runtime import XlaRuntimeError, get_client
from xjax._src.runtime import ffi

pytestmark = pytest.mark.skipif(ffi.HOST_CALLBACK_TARGET not in ffi.ffi_targets("cpu"),
                                reason="the CPU plugin has no FFI extension")


def _callback_module(callback_id, side_effect=False):
    return f'''
module @m {{
  func.func public @main(%a: tensor<3xf32>, %b: tensor<i32>) -> (tensor<3xf32>, tensor<2xi32>) {{
    %0:2 = "stablehlo.custom_call"(%a, %b) {{call_target_name = "xjax_host_callback",
        api_version = 4 : i32, has_side_effect = {str(side_effect).lower()},
        backend_config = {{callback_id = {callback_id} : i64}}}}
        : (tensor<3xf32>, tensor<i32>) -> (tensor<3xf32>, tensor<2xi32>)
    %1 = "stablehlo.add"(%0#0, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "func.return"(%1, %0#1) : (tensor<3xf32>, tensor<2xi32>) -> ()
  }}
}}'''


def test_host_callback_computes_results_and_sees_operands():
    seen = []

    def fn(a, b):
        seen.append((a.copy(), int(b), threading.current_thread().name))
        return np.cos(a), np.array([int(b), int(b) * 2])

    exe = get_client().compile(_callback_module(ffi.register_host_callback(fn)))
    x = np.array([0.5, 1.0, 2.0], np.float32)
    out, ints = [o.to_numpy() for o in exe.execute([x, np.int32(7)])]
    np.testing.assert_allclose(out, np.cos(x) + x, rtol=1e-6)
    np.testing.assert_array_equal(ints, [7, 14])
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0][0], x)
    assert seen[0][1] == 7


def test_host_callback_operands_are_copies():
    kept = []

    def fn(a, b):
        kept.append(a)
        return a * 0, np.zeros(2, np.int32)

    exe = get_client().compile(_callback_module(ffi.register_host_callback(fn), True))
    for value in (1.0, 2.0):
        exe.execute([np.full(3, value, np.float32), np.int32(0)])[0].to_numpy()
    np.testing.assert_array_equal(kept[0], [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(kept[1], [2.0, 2.0, 2.0])


def test_host_callback_exception_becomes_xla_error():
    def fn(a, b):
        raise ValueError("callback went wrong")

    exe = get_client().compile(_callback_module(ffi.register_host_callback(fn)))
    with pytest.raises(XlaRuntimeError, match="callback went wrong"):
        exe.execute([np.zeros(3, np.float32), np.int32(0)])[0].to_numpy()
    # the process and the executable are still usable
    ok = get_client().compile(_callback_module(ffi.register_host_callback(
        lambda a, b: (a, np.zeros(2, np.int32)))))
    np.testing.assert_array_equal(
        ok.execute([np.ones(3, np.float32), np.int32(0)])[0].to_numpy(), [2.0, 2.0, 2.0])


def test_host_callback_wrong_shape_is_an_error():
    exe = get_client().compile(_callback_module(ffi.register_host_callback(
        lambda a, b: (a[:2], np.zeros(2, np.int32)))))
    with pytest.raises(XlaRuntimeError, match="Incorrect output shape"):
        exe.execute([np.zeros(3, np.float32), np.int32(0)])[0].to_numpy()


def test_equal_functions_share_an_id():
    def fn(a, b):
        return a, b

    assert ffi.register_host_callback(fn) == ffi.register_host_callback(fn)
    assert ffi.register_host_callback(fn) != ffi.register_host_callback(lambda a, b: (a, b))


def _getrf_module(shape, elem):
    r = len(shape)
    m, n = shape[-2:]
    batch = shape[:-2]
    lay = [r - 2, r - 1, *range(r - 3, -1, -1)]
    layout = f"dense<[{', '.join(map(str, lay))}]> : tensor<{r}xindex>"
    small = f"dense<[{', '.join(map(str, range(len(batch), -1, -1)))}]> : " \
            f"tensor<{len(batch) + 1}xindex>"
    t = f"tensor<{'x'.join(map(str, shape))}x{elem}>"
    tp = f"tensor<{'x'.join(map(str, batch + (min(m, n),)))}xi32>"
    tq = f"tensor<{'x'.join(map(str, batch + (m,)))}xi32>"
    return f'''
module @m {{
  func.func public @main(%a: {t}) -> ({t}, {tp}, {tq}) {{
    %0:3 = "stablehlo.custom_call"(%a) {{call_target_name = "xjax_lapack_getrf",
        api_version = 4 : i32, backend_config = {{}}, operand_layouts = [{layout}],
        result_layouts = [{layout}, {small}, {small}]}} : ({t}) -> ({t}, {tp}, {tq})
    "func.return"(%0#0, %0#1, %0#2) : ({t}, {tp}, {tq}) -> ()
  }}
}}'''


@pytest.mark.skipif(ffi.LU_TARGET not in ffi.ffi_targets("cpu"),
                    reason="NumPy's bundled OpenBLAS was not found")
@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 6), (2, 2, 7, 7)])
@pytest.mark.parametrize("dtype,elem", [(np.float32, "f32"), (np.float64, "f64"),
                                        (np.complex64, "complex<f32>")])
def test_lapack_getrf_factors(shape, dtype, elem):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype(dtype)
    if np.iscomplexobj(a):
        a = a + 1j * rng.standard_normal(shape).astype(dtype)
    exe = get_client().compile(_getrf_module(shape, elem))
    lu, pivots, perm = [o.to_numpy() for o in exe.execute([a])]
    m, n = shape[-2:]
    k = min(m, n)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for idx in np.ndindex(shape[:-2]):
        lower = np.tril(lu[idx], -1)[:, :k] + np.eye(m, k)
        upper = np.triu(lu[idx])[:k]
        np.testing.assert_allclose(lower @ upper, a[idx][perm[idx]], atol=tol * 10)
        if not np.iscomplexobj(a):  # partial pivoting (complex: by |Re| + |Im|)
            assert np.all(np.abs(lower) <= 1 + 1e-6)
        # the permutation is the pivots' row swaps applied in order
        expect = list(range(m))
        for i, j in enumerate(pivots[idx]):
            expect[i], expect[j] = expect[j], expect[i]
        np.testing.assert_array_equal(perm[idx], expect)


@pytest.fixture(params=[0, 100, 10**6], ids=["sleep", "poll-then-sleep", "poll"])
def spin_wait(request):
    """Each way of waiting for a result: sleeping at once, polling past a short spin
    (the callback below outlasts it), and polling throughout."""
    from xjax._src.runtime import _pjrt
    old = _pjrt.set_spin_wait(request.param)
    yield request.param
    _pjrt.set_spin_wait(old)


def test_waiting_for_results_gives_values_and_errors(spin_wait):
    import time

    def slow(a, b):
        time.sleep(0.005)  # longer than a short spin: the wait then sleeps
        return a * 2, np.array([int(b), 1], np.int32)

    exe = get_client().compile(_callback_module(ffi.register_host_callback(slow)))
    x = np.array([1.0, 2.0, 3.0], np.float32)
    out, ints = exe.execute([x, np.int32(4)])
    np.testing.assert_array_equal(out.block_until_ready().to_numpy(), x * 3)
    np.testing.assert_array_equal(ints.to_numpy(), [4, 1])

    def failing(a, b):
        time.sleep(0.005)
        raise ValueError("late failure")

    bad = get_client().compile(_callback_module(ffi.register_host_callback(failing)))
    with pytest.raises(XlaRuntimeError, match="late failure"):
        bad.execute([x, np.int32(0)])[0].block_until_ready()


@pytest.mark.parametrize("value", ["abc", "-5", "1.5"])
def test_a_bad_spin_wait_setting_is_named(value):
    env = dict(os.environ, XJAX_SPIN_WAIT_US=value)
    done = subprocess.run([sys.executable, "-c", "import xjax.numpy as jnp; jnp.ones(2)"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert (f"ValueError: XJAX_SPIN_WAIT_US must be a whole number of microseconds >= 0 "
            f"(0: sleep at once), got {value!r}") in done.stderr
