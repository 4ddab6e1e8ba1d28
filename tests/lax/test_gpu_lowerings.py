"""The forms the lowering gives the GPU where XLA's GPU backend lacks the plain op (seen on an
H200 with jax-cuda13-pjrt 0.11.2, benchmarks/gpu_vs_jax.py): an integer dot with a float
result crashed its compiler (JAX's too) and cuBLAS has no float16 triangular solve (JAX
raises). Here the modules lowered for "gpu" are compiled and run by the CPU plugin and
checked against NumPy; the CPU keeps the plain op."""

import numpy as np
import pytest

import xjax
from xjax import lax
from xjax._src.higher_order.jit_call import compile_text
from xjax._src.lowering.lower_jaxpr import lower_module


def _run_lowered(fun, args, platform):
    """(module text, results) of ``fun`` lowered for ``platform`` and run on the CPU."""
    lowered = lower_module(xjax.make_jaxpr(fun)(*args), "f", platform=platform)
    assert not lowered.const_args
    outs = compile_text(lowered.text).execute(list(args))
    return lowered.text, [np.asarray(o.to_numpy()) for o in outs]


@pytest.mark.parametrize("dtype,result", [
    (np.int8, np.float32), (np.int8, np.float16), (np.int8, np.complex64),
    (np.int16, np.float32), (np.int32, np.float32), (np.uint8, np.float32),
    (np.bool_, np.float32)])
def test_integer_dot_with_a_float_result_converts_first_on_the_gpu(dtype, result):
    rng = np.random.default_rng(0)
    low = -3 if np.issubdtype(dtype, np.signedinteger) else 0
    x = rng.integers(low, 4, (3, 4)).astype(dtype)
    y = rng.integers(low, 4, (4, 5)).astype(dtype)

    def f(a, b):
        return lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=result)

    text, (got,) = _run_lowered(f, (x, y), "gpu")
    assert "stablehlo.convert" in text
    assert got.dtype == result
    np.testing.assert_array_equal(got, (x.astype(np.int64) @ y.astype(np.int64)).astype(result))
    cpu_text, _ = _run_lowered(f, (x, y), "cpu")
    assert "stablehlo.convert" not in cpu_text


def test_integer_dot_with_an_integer_result_keeps_its_operands_on_the_gpu():
    x = np.ones((3, 4), np.int8)
    text, (got,) = _run_lowered(
        lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                     preferred_element_type=np.int32), (x, x.T), "gpu")
    assert "stablehlo.convert" not in text
    np.testing.assert_array_equal(got, np.full((3, 3), 4, np.int32))


@pytest.mark.parametrize("left_side,lower,transpose_a", [(True, True, False),
                                                        (False, False, True)])
def test_float16_triangular_solve_runs_in_float32_on_the_gpu(left_side, lower, transpose_a):
    rng = np.random.default_rng(1)
    a = (np.tril if lower else np.triu)(rng.uniform(-1, 1, (4, 4))) + 4 * np.eye(4)
    b = rng.uniform(-1, 1, (4, 3) if left_side else (3, 4))
    a16, b16 = a.astype(np.float16), b.astype(np.float16)

    def f(m, v):
        return lax.linalg.triangular_solve(m, v, left_side=left_side, lower=lower,
                                           transpose_a=transpose_a)

    text, (got,) = _run_lowered(f, (a16, b16), "gpu")
    assert "tensor<4x4xf32>" in text
    op = a16.astype(np.float64).T if transpose_a else a16.astype(np.float64)
    want = (np.linalg.solve(op, b16.astype(np.float64)) if left_side
            else np.linalg.solve(op.T, b16.astype(np.float64).T).T)
    assert got.dtype == np.float16
    # one rounding to float16 at the end: within half an ulp of the float64 solution
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2 ** -11, atol=1e-4)
    cpu_text, _ = _run_lowered(f, (a16, b16), "cpu")
    assert "tensor<4x4xf32>" not in cpu_text
