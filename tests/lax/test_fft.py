"""lax.fft: every transform type against NumPy, eagerly (NumPy and, for large inputs, XLA
kernels) and under jit; its transposes against JAX and by the bilinear dot-product identity
(JAX's pairing of complex cotangents); vmap against a loop; JAX's errors and jaxpr text."""

import importlib

import numpy as np
import pytest

import xjax
from xjax import lax

lax_fft = importlib.import_module("xjax._src.lax.fft")  # the module (lax.fft is the function)

rng = np.random.default_rng(0)


def _complex(shape, dtype=np.complex64):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _numpy(x, fft_type, lengths):
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    return {"fft": lambda: np.fft.fftn(x, axes=axes), "ifft": lambda: np.fft.ifftn(x, axes=axes),
            "rfft": lambda: np.fft.rfftn(x, axes=axes),
            "irfft": lambda: np.fft.irfftn(x, s=lengths, axes=axes)}[fft_type]()


CASES = [("fft", (3, 8), (8,)), ("ifft", (2, 5), (5,)), ("fft", (2, 4, 6), (4, 6)),
         ("ifft", (2, 3, 4, 5), (3, 4, 5)), ("rfft", (3, 8), (8,)), ("rfft", (7,), (7,)),
         ("rfft", (2, 4, 6), (4, 6)), ("irfft", (3, 5), (8,)), ("irfft", (4,), (7,)),
         ("irfft", (2, 3, 4, 4), (3, 4, 6))]


def _input(fft_type, shape):
    return rng.standard_normal(shape).astype(np.float32) if fft_type == "rfft" else \
        _complex(shape)


@pytest.mark.parametrize("fft_type,shape,lengths", CASES)
@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_matches_numpy(fft_type, shape, lengths, jit):
    x = _input(fft_type, shape)
    fun = lambda x: lax.fft(x, fft_type, lengths)  # noqa: E731
    got = (xjax.jit(fun) if jit else fun)(x)
    want = _numpy(x, fft_type, lengths)
    assert got.dtype == (np.float32 if fft_type == "irfft" else np.complex64)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("fft_type", ["fft", "ifft", "rfft", "irfft"])
def test_large_eager_transforms_run_on_xla_and_agree_with_numpy(fft_type):
    n = lax_fft._EAGER_XLA_MIN_SIZE * 2
    x = _input(fft_type, (n // 2 + 1,) if fft_type == "irfft" else (n,))
    lengths = (n,)
    got = np.asarray(lax.fft(x, fft_type, lengths))
    want = _numpy(x, fft_type, lengths)
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, atol=1e-4 * scale, rtol=0)


def test_real_and_integer_inputs_are_converted():
    x = np.arange(4, dtype=np.int32)
    np.testing.assert_allclose(np.asarray(lax.fft(x, "fft", (4,))), np.fft.fft(x), atol=1e-5)
    assert lax.fft(x, "rfft", (4,)).dtype == np.complex64
    assert lax.fft(np.ones(3, np.float32), lax.FftType.FFT, ()).dtype == np.complex64


def test_errors():
    with pytest.raises(ValueError, match="minor dimensions must be equal to fft_lengths"):
        lax.fft(_complex((3, 4)), "fft", (5,))
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        lax.fft(_complex((3, 4)), "rfft", (4,))
    with pytest.raises(ValueError, match="at least as many input dimensions"):
        lax.fft(_complex((3, 4)), "fft", (3, 4, 4, 4))
    with pytest.raises(ValueError, match="RFFT input must be float32 or float64"):
        lax.fft(np.ones(4, np.float16), "rfft", (4,))
    with pytest.raises(ValueError, match="Unknown FFT type"):
        lax.fft(_complex(4), "dct", (4,))


def test_jaxpr_prints_fft_type_as_a_number():
    text = str(xjax.make_jaxpr(lambda x: lax.fft(x, "rfft", (8,)))(np.ones(8, np.float32)))
    assert "fft[fft_lengths=(8,) fft_type=2]" in text


def _bilinear(a, b):
    """JAX's pairing of a value with a cotangent: Re(sum(a * b)), no conjugation."""
    return float(np.sum(np.asarray(a, np.complex128) * np.asarray(b, np.complex128)).real)


@pytest.mark.parametrize("fft_type,shape,lengths", CASES)
def test_transpose_satisfies_the_bilinear_identity(fft_type, shape, lengths):
    x = _input(fft_type, shape)
    fun = lambda x: lax.fft(x, fft_type, lengths)  # noqa: E731
    y, f_vjp = xjax.vjp(fun, x)
    t = _input(fft_type, shape)
    _, jt = xjax.jvp(fun, (x,), (t,))
    ct = _complex(y.shape) if np.iscomplexobj(np.asarray(y)) else \
        rng.standard_normal(y.shape).astype(np.float32)
    (ct_x,) = f_vjp(ct)
    lhs, rhs = _bilinear(ct, jt), _bilinear(ct_x, t)
    assert abs(lhs - rhs) <= 1e-3 * max(1.0, abs(lhs))


@pytest.mark.parametrize("fft_type,shape,lengths", CASES)
def test_vjp_matches_jax(fft_type, shape, lengths):
    jax = pytest.importorskip("jax")
    x = _input(fft_type, shape)
    _, f_vjp = xjax.vjp(lambda x: lax.fft(x, fft_type, lengths), x)
    y, j_vjp = jax.vjp(lambda x: jax.lax.fft(x, fft_type, lengths), x)
    ct = _complex(y.shape) if np.iscomplexobj(np.asarray(y)) else \
        rng.standard_normal(y.shape).astype(np.float32)
    np.testing.assert_allclose(np.asarray(f_vjp(ct)[0]), np.asarray(j_vjp(ct)[0]), rtol=1e-4,
                               atol=1e-4)


@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_vmap_matches_a_loop(in_axis):
    x = _complex((3, 4, 8))
    fun = lambda x: lax.fft(x, "fft", (8,))  # noqa: E731
    moved = np.moveaxis(x, 0, in_axis)
    got = xjax.vmap(fun, in_axes=in_axis)(moved)
    want = np.stack([np.asarray(fun(x[i])) for i in range(3)])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
