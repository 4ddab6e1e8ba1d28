"""xjax.scipy.fft (type-2 DCTs) and xjax.scipy.integrate against SciPy (float64 references
of the same float32/complex64 inputs), under jit/vmap, gradients against finite differences,
JAX's errors, and JAX 0.10.2 as a differential reference where installed."""

import numpy as np
import pytest
import scipy.fft as sfft
import scipy.integrate as sint

import xjax
import xjax.numpy as jnp
from xjax.scipy import fft as xfft
from xjax.scipy import integrate as xint


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _close(actual, expected, scale=1.0, tol=2e-5):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale)


# --------------------------------------------------------------------------------------------
# dct / idct


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
@pytest.mark.parametrize("func", ["dct", "idct"])
def test_dct_matches_scipy(func, norm, dtype):
    rng = np.random.default_rng(0)
    ours, ref = getattr(xfft, func), getattr(sfft, func)
    for shape, n, axis in [((1,), None, -1), ((2,), None, 0), ((3, 7), None, -1),
                           ((4, 8), None, 0), ((3, 7), 4, 1), ((3, 7), 10, -1),
                           ((5, 2, 6), 3, 0), ((2, 9, 3), 16, 1)]:
        x = _random(rng, shape, dtype)
        expected = ref(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
                       n=n, axis=axis, norm=norm)
        out = ours(x, n=n, axis=axis, norm=norm)
        assert out.dtype == dtype
        _close(out, expected, scale=np.abs(expected).max())


def test_dct_integer_input_is_float():
    x = np.arange(6)
    out = xfft.dct(x)
    assert out.dtype == np.float32
    _close(out, sfft.dct(x.astype(np.float64)), scale=20)
    assert xfft.idct(jnp.arange(4)).dtype == np.float32


@pytest.mark.parametrize("norm", [None, "ortho"])
def test_dct_inverse_roundtrip(norm):
    x = _random(np.random.default_rng(1), (4, 11), np.float32)
    _close(xfft.idct(xfft.dct(x, norm=norm), norm=norm), x, tol=1e-5)
    _close(xfft.idctn(xfft.dctn(x, norm=norm), norm=norm), x, tol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("func", ["dctn", "idctn"])
def test_dctn_matches_scipy(func, dtype):
    rng = np.random.default_rng(2)
    ours, ref = getattr(xfft, func), getattr(sfft, func)
    cases = [((4, 5), None, None), ((3, 4, 5), None, None), ((3, 4, 5), (6, 2), None),
             ((3, 4, 5), 7, None), ((3, 4, 5), None, (0, 2)), ((3, 4, 5), (2, 8), (2, 0)),
             ((3, 4, 5), None, 1), ((3, 4, 5), None, (-1, 0, 1)), ((2, 3, 4, 5), (3, 3, 3), None)]
    for shape, s, axes in cases:
        x = _random(rng, shape, dtype)
        for norm in (None, "ortho"):
            expected = ref(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64),
                           s=s, axes=axes, norm=norm)
            _close(ours(x, s=s, axes=axes, norm=norm), expected,
                   scale=np.abs(expected).max())


def test_dct_errors():
    x = jnp.ones((3, 4))
    for func in (xfft.dct, xfft.idct, xfft.dctn, xfft.idctn):
        for t in (1, 3, 4):
            with pytest.raises(NotImplementedError, match="Only DCT type 2"):
                func(x, type=t)
        with pytest.raises(ValueError, match="norm='forward' is not implemented"):
            func(x, norm="forward")
        with pytest.raises(TypeError):
            func([1.0, 2.0])
    with pytest.raises(ValueError, match="s must have at most x.ndim"):
        xfft.dctn(x, s=(2, 2, 2))
    with pytest.raises(ValueError, match="repeated axis"):
        xfft.idctn(x, axes=(0, -2))
    with pytest.raises(ValueError, match="out of bounds"):
        xfft.dct(x, axis=2)


def test_dct_jit_vmap():
    x = _random(np.random.default_rng(3), (5, 6), np.float32)
    jitted = xjax.jit(xfft.dct, static_argnames=("n", "axis", "norm"))
    _close(jitted(x, n=8, norm="ortho"), sfft.dct(x.astype(np.float64), n=8, norm="ortho"),
           scale=5)
    mapped = xjax.vmap(lambda row: xfft.idct(row, norm="ortho"))(x)
    _close(mapped, sfft.idct(x.astype(np.float64), norm="ortho"), scale=5)
    mapped_n = xjax.vmap(lambda col: xfft.dctn(col), in_axes=1, out_axes=1)(x)
    _close(mapped_n, sfft.dct(x.astype(np.float64), axis=0), scale=10)


def _finite_difference_grad(f, x, eps=1e-3):
    x = np.asarray(x, np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


@pytest.mark.parametrize("func,norm", [("dct", None), ("dct", "ortho"), ("idct", None),
                                       ("idctn", "ortho")])
def test_dct_grad_matches_finite_differences(func, norm):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 5))
    weights = rng.standard_normal((3, 5))
    ours, ref = getattr(xfft, func), getattr(sfft, func)

    def loss(v):  # quadratic in a linear map: central differences are exact
        return jnp.sum(weights * ours(v, norm=norm) ** 2)

    grad = xjax.grad(loss)(x.astype(np.float32))
    expected = _finite_difference_grad(lambda v: np.sum(weights * ref(v, norm=norm) ** 2), x)
    _close(grad, expected, scale=np.abs(expected).max(), tol=1e-4)


def test_dct_against_jax():
    jax = pytest.importorskip("jax")
    x = _random(np.random.default_rng(5), (4, 6, 5), np.float32)
    for kwargs in [{}, {"n": 3}, {"n": 9, "axis": 1, "norm": "ortho"}]:
        for name in ("dct", "idct"):
            _close(getattr(xfft, name)(x, **kwargs), getattr(jax.scipy.fft, name)(x, **kwargs),
                   scale=10, tol=1e-4)
    for kwargs in [{}, {"s": (2, 7)}, {"axes": (0, 2), "norm": "ortho"}]:
        for name in ("dctn", "idctn"):
            _close(getattr(xfft, name)(x, **kwargs),
                   getattr(jax.scipy.fft, name)(x, **kwargs), scale=50, tol=1e-4)


# --------------------------------------------------------------------------------------------
# trapezoid


def test_trapezoid_matches_scipy():
    rng = np.random.default_rng(6)
    y = rng.standard_normal((3, 7)).astype(np.float32)
    y64 = y.astype(np.float64)
    x1 = np.sort(rng.uniform(0, 5, 7)).astype(np.float32)
    x2 = np.sort(rng.uniform(0, 5, (3, 7)), axis=1).astype(np.float32)
    xt = np.sort(rng.uniform(0, 5, 3)).astype(np.float32)
    cases = [((y,), {}, (y64,), {}),
             ((y,), {"dx": 0.3}, (y64,), {"dx": 0.3}),
             ((y, x1), {}, (y64, x1.astype(np.float64)), {}),
             ((y, x2), {}, (y64, x2.astype(np.float64)), {}),
             ((y, xt), {"axis": 0}, (y64, xt.astype(np.float64)), {"axis": 0}),
             ((y,), {"axis": 0, "dx": 2.0}, (y64,), {"axis": 0, "dx": 2.0})]
    for args, kwargs, ref_args, ref_kwargs in cases:
        _close(xint.trapezoid(*args, **kwargs), sint.trapezoid(*ref_args, **ref_kwargs),
               scale=10)
    complex_y = _random(rng, (4, 5), np.complex64)
    _close(xint.trapezoid(complex_y), sint.trapezoid(complex_y.astype(np.complex128)),
           scale=5)
    assert xint.trapezoid(np.arange(5)).dtype == np.float32


def test_trapezoid_transforms():
    rng = np.random.default_rng(7)
    y = rng.standard_normal((4, 6)).astype(np.float32)
    x = np.sort(rng.uniform(0, 3, 6)).astype(np.float32)
    jitted = xjax.jit(xint.trapezoid, static_argnames="axis")
    _close(jitted(y, x), sint.trapezoid(y.astype(np.float64), x.astype(np.float64)), scale=5)
    _close(xjax.vmap(xint.trapezoid, in_axes=(0, None))(y, x),
           sint.trapezoid(y.astype(np.float64), x.astype(np.float64)), scale=5)
    grad = xjax.grad(lambda v: xint.trapezoid(v, x))(y[0])
    widths = np.diff(x.astype(np.float64))
    expected = np.zeros(6)
    expected[:-1] += widths / 2
    expected[1:] += widths / 2
    _close(grad, expected)


def test_trapezoid_against_jax():
    jax = pytest.importorskip("jax")
    y = np.random.default_rng(8).standard_normal((3, 5)).astype(np.float32)
    x = np.linspace(0, 1, 5, dtype=np.float32)
    _close(xint.trapezoid(y, x), jax.scipy.integrate.trapezoid(y, x))
    _close(xint.trapezoid(y, dx=0.5, axis=0), jax.scipy.integrate.trapezoid(y, dx=0.5, axis=0))
