"""xjax.numpy.fft against numpy.fft: every function with default and explicit lengths, axes
and norms; real, integer and complex inputs; jit; derivatives; JAX's errors."""

import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax.test_util import check_grads

rng = np.random.default_rng(0)
X = rng.standard_normal((4, 6, 5)).astype(np.float32)
XC = (X + 1j * rng.standard_normal(X.shape)).astype(np.complex64)

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
N_D = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
NORMS = [None, "backward", "ortho", "forward"]


def _close(got, want, tol=1e-4):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * max(1.0, np.abs(want).max()))


def _input(name):
    return X if name in ("rfft", "ihfft", "rfft2", "rfftn") else XC


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("kwargs", [{}, {"n": 8}, {"n": 3, "axis": 0}, {"axis": 1}])
@pytest.mark.parametrize("name", ONE_D)
def test_one_dimensional(name, kwargs, norm):
    x = _input(name)
    got = getattr(jnp.fft, name)(x, norm=norm, **kwargs)
    want = getattr(np.fft, name)(x, norm=norm, **kwargs)
    _close(got, want)
    assert got.dtype == (np.float32 if name in ("irfft", "hfft") else np.complex64)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("kwargs", [{}, {"axes": (0, 2)}, {"s": (3, 8)},
                                    {"s": (5, 4), "axes": (2, 0)}])
@pytest.mark.parametrize("name", N_D)
def test_multi_dimensional(name, kwargs, norm):
    x = _input(name)
    if name.endswith("n") and "axes" not in kwargs and "s" in kwargs:
        kwargs = dict(kwargs, axes=(-2, -1))  # NumPy 2 wants axes with s
    got = getattr(jnp.fft, name)(x, norm=norm, **kwargs)
    want = getattr(np.fft, name)(x, norm=norm, **kwargs)
    _close(got, want)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_more_than_three_axes_are_split(name):
    x = rng.standard_normal((2, 3, 2, 3, 4)).astype(np.float32)
    _close(getattr(jnp.fft, name)(x), getattr(np.fft, name)(x), 1e-3)


def test_integer_inputs_become_complex64():
    x = np.arange(6, dtype=np.int32)
    assert jnp.fft.fft(x).dtype == np.complex64
    _close(jnp.fft.fft(x), np.fft.fft(x))
    _close(jnp.fft.rfft(x), np.fft.rfft(x))


@pytest.mark.parametrize("name", ONE_D + N_D)
def test_jit_matches_eager(name):
    x = _input(name)
    fun = getattr(jnp.fft, name)
    _close(xjax.jit(fun)(x), fun(x))


def test_frequencies_and_shifts():
    for n in (1, 4, 5):
        _close(jnp.fft.fftfreq(n, 0.5), np.fft.fftfreq(n, 0.5))
        _close(jnp.fft.rfftfreq(n, 0.5), np.fft.rfftfreq(n, 0.5))
    assert jnp.fft.fftfreq(4).dtype == np.float32
    x = np.arange(30).reshape(5, 6)
    for axes in (None, 0, (1,), (0, 1)):
        np.testing.assert_array_equal(jnp.fft.fftshift(x, axes), np.fft.fftshift(x, axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(x, axes), np.fft.ifftshift(x, axes))


def test_errors():
    with pytest.raises(ValueError, match="does not support multiple axes"):
        jnp.fft.fft(XC, axis=(0, 1))
    with pytest.raises(ValueError, match="only supports 2 axes"):
        jnp.fft.fft2(XC, axes=(0, 1, 2))
    with pytest.raises(ValueError, match="repeated axes"):
        jnp.fft.fftn(XC, axes=(0, 0))
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        jnp.fft.fftn(XC, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError, match="Invalid norm value"):
        jnp.fft.fft(XC, norm="bad")
    with pytest.raises(ValueError, match="only takes an int"):
        jnp.fft.fftfreq([4])


@pytest.mark.parametrize("name", ["rfft", "irfft", "fft2", "hfft"])
def test_grads(name):
    x = np.asarray(_input(name)[0, :3, :4])
    if np.iscomplexobj(x):  # real-to-real composition: check_grads' pairing is exact there
        fun = lambda re, im: jnp.real(getattr(jnp.fft, name)(  # noqa: E731
            jnp.asarray(re) + 1j * jnp.asarray(im)))
        check_grads(fun, (x.real.copy(), x.imag.copy()), order=1, atol=1e-2, rtol=1e-2)
    else:
        fun = lambda x: jnp.abs(getattr(jnp.fft, name)(x)) ** 2  # noqa: E731
        check_grads(fun, (x,), order=1, atol=1e-2, rtol=1e-2)
