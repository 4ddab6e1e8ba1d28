"""xjax.scipy.signal against scipy.signal (float64 references of the same float32/complex64
inputs): every mode/method of the convolutions, detrend, the windows, stft/istft/csd/welch
options; jit/vmap/grad (gradients against finite differences); JAX's errors; JAX 0.10.2 as a
differential reference where installed."""

import sys
import warnings

import numpy as np
import pytest
import scipy.signal as ss

import xjax
import xjax.numpy as jnp
from xjax.scipy import signal as xs
from xjax._src.scipy._signal_windows import get_window


def _random(rng, shape, dtype=np.float32):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _f64(x):
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _close(actual, expected, tol=3e-5):
    actual = np.asarray(actual)
    assert actual.shape == np.shape(expected)
    scale = max(1.0, float(np.abs(expected).max())) if np.size(expected) else 1.0
    np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol * scale)


def _close_all(actual, expected, tol=3e-5):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        _close(a, e, tol)


# --------------------------------------------------------------------------------------------
# convolutions

SHAPE_PAIRS = [((7,), (3,)), ((3,), (7,)), ((4,), (4,)), ((6,), (1,)), ((1,), (1,)),
               ((5, 6), (2, 3)), ((2, 3), (5, 6)), ((4, 4), (4, 1)), ((3, 4, 5), (2, 2, 3))]


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
@pytest.mark.parametrize("func", ["convolve", "correlate"])
def test_convolve_correlate_match_scipy(func, method, dtype):
    rng = np.random.default_rng(0)
    for s1, s2 in SHAPE_PAIRS:
        a, b = _random(rng, s1, dtype), _random(rng, s2, dtype)
        for mode in ("full", "same", "valid"):
            out = getattr(xs, func)(a, b, mode, method)
            assert out.dtype == dtype
            _close(out, getattr(ss, func)(_f64(a), _f64(b), mode, method="direct"))


def test_convolve_mixed_dtypes():
    rng = np.random.default_rng(1)
    a, b = _random(rng, (6,), np.complex64), _random(rng, (3,))
    assert xs.convolve(a, b).dtype == np.complex64
    assert xs.convolve(np.arange(5), np.arange(3)).dtype == np.float32
    _close(xs.correlate(b, a, "same"), ss.correlate(_f64(b), _f64(a), "same"))
    _close(xs.fftconvolve(a, b), ss.fftconvolve(_f64(a), _f64(b)))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("func", ["convolve2d", "correlate2d"])
def test_2d_match_scipy(func, dtype):
    rng = np.random.default_rng(2)
    for s1, s2 in [((5, 6), (2, 3)), ((2, 3), (5, 6)), ((4, 5), (4, 5)), ((4, 4), (3, 1)),
                   ((3, 3), (2, 2)), ((2, 2), (3, 4))]:
        a, b = _random(rng, s1, dtype), _random(rng, s2, dtype)
        for mode in ("full", "same", "valid"):
            _close(getattr(xs, func)(a, b, mode), getattr(ss, func)(_f64(a), _f64(b), mode))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_fftconvolve_axes_match_scipy(dtype):
    rng = np.random.default_rng(3)
    a, b = _random(rng, (3, 8, 5), dtype), _random(rng, (3, 4, 5), dtype)
    for axes in (None, 1, (1,), [0, 1], (-2, 2), (-2,)):
        for mode in ("full", "same", "valid"):
            _close(xs.fftconvolve(a, b, mode, axes=axes),
                   ss.fftconvolve(_f64(a), _f64(b), mode, axes=axes))
    c, d = _random(rng, (2, 3), dtype), _random(rng, (5, 7), dtype)  # in2 larger: swapped
    _close(xs.fftconvolve(c, d, "valid"), ss.fftconvolve(_f64(c), _f64(d), "valid"))


def test_convolution_errors():
    x, k = jnp.ones((5, 5)), jnp.ones((3, 3))
    with pytest.raises(ValueError, match=r"mode must be one of \['full', 'same', 'valid'\]"):
        xs.convolve(x, k, mode="middle")
    with pytest.raises(ValueError, match="expected 'auto', 'fft', or 'direct'"):
        xs.convolve(x, k, method="overlap-add")
    with pytest.raises(ValueError, match="same number of dimensions"):
        xs.convolve(x, jnp.ones(3))
    with pytest.raises(ValueError, match="zero-size arrays not supported"):
        xs.convolve(jnp.ones((0,)), jnp.ones((2,)))
    with pytest.raises(ValueError, match="One input must be smaller than the other"):
        xs.convolve(jnp.ones((5, 2)), jnp.ones((2, 5)))
    with pytest.raises(ValueError, match="One input must be smaller than the other"):
        xs.correlate2d(jnp.ones((5, 2)), jnp.ones((2, 5)), "valid")
    with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
        xs.convolve2d(x, k, boundary="wrap")
    with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
        xs.correlate2d(x, k, fillvalue=1)
    with pytest.raises(ValueError, match="only supports 2-dimensional inputs"):
        xs.convolve2d(jnp.ones(3), jnp.ones(3))
    with pytest.raises(ValueError, match="same dimensionality"):
        xs.fftconvolve(x, jnp.ones(3))
    with pytest.raises(ValueError, match=r"mode must be one of \['same', 'full', 'valid'\]"):
        xs.fftconvolve(x, k, mode="x")
    with pytest.raises(ValueError, match="mapped axes must have same shape"):
        xs.fftconvolve(jnp.ones((3, 5)), jnp.ones((2, 5)), axes=1)
    with pytest.raises(ValueError, match="For 'valid' mode, One input must be at least"):
        xs.fftconvolve(jnp.ones((5, 2)), jnp.ones((2, 5)), mode="valid")
    with pytest.raises(TypeError):
        xs.convolve([1.0, 2.0], [1.0])


def test_convolve_transforms():
    rng = np.random.default_rng(4)
    x, k = _random(rng, (4, 9)), _random(rng, (3,))
    expected = np.stack([ss.convolve(_f64(r), _f64(k), "same") for r in x])
    jitted = xjax.jit(xs.convolve, static_argnames=("mode", "method"))
    _close(jitted(x[0], k, mode="same"), expected[0])
    _close(xjax.vmap(lambda r: xs.convolve(r, k, "same"))(x), expected)
    _close(xjax.vmap(lambda r: xs.correlate(r, k, "valid", method="fft"))(x),
           np.stack([ss.correlate(_f64(r), _f64(k), "valid") for r in x]))
    _close(xjax.vmap(xs.fftconvolve, in_axes=(0, None))(x, k),
           np.stack([ss.convolve(_f64(r), _f64(k)) for r in x]))


def _finite_difference_grad(f, x, eps=1e-3):
    x = np.asarray(x, np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


@pytest.mark.parametrize("func,mode,method,s1,s2", [
    ("convolve", "full", "direct", (7,), (3,)),
    ("convolve", "same", "direct", (3,), (6,)),
    ("correlate", "valid", "fft", (6,), (4,)),
    ("convolve2d", "same", None, (4, 5), (2, 3)),
    ("correlate2d", "full", None, (3, 3), (4, 5)),
])
def test_convolution_grads_match_finite_differences(func, mode, method, s1, s2):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal(s1), rng.standard_normal(s2)
    extra = {} if method is None else {"method": method}
    ref_extra = {} if method is None else {"method": "direct"}
    weights = rng.standard_normal(getattr(ss, func)(a, b, mode).shape)

    def loss(u, v):  # quadratic in a bilinear map: central differences are exact
        return jnp.sum(weights * getattr(xs, func)(u, v, mode, **extra) ** 2)

    def ref_loss(u, v):
        return np.sum(weights * getattr(ss, func)(u, v, mode, **ref_extra) ** 2)

    ga, gb = xjax.grad(loss, argnums=(0, 1))(a.astype(np.float32), b.astype(np.float32))
    _close(ga, _finite_difference_grad(lambda u: ref_loss(u, b), a), tol=2e-4)
    _close(gb, _finite_difference_grad(lambda v: ref_loss(a, v), b), tol=2e-4)


# --------------------------------------------------------------------------------------------
# detrend


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_detrend_matches_scipy(dtype):
    rng = np.random.default_rng(6)
    x = _random(rng, (3, 12, 2), dtype)
    for kwargs in [{}, {"type": "constant"}, {"axis": 1}, {"axis": 0, "type": "constant"},
                   {"axis": 1, "bp": 5}, {"axis": -2, "bp": [2, 7, 11]},
                   {"axis": 1, "bp": np.array([6, 1])}, {"axis": 1, "bp": [11]},
                   {"axis": 1, "bp": [12]}]:
        out = xs.detrend(x, **kwargs)
        assert out.dtype == dtype
        _close(out, ss.detrend(_f64(x), **kwargs))
    assert xs.detrend(np.arange(6)).dtype == np.float32


def test_detrend_errors_and_transforms():
    x = jnp.arange(10.0) ** 2
    with pytest.raises(ValueError, match="Trend type must be 'linear' or 'constant'"):
        xs.detrend(x, type="l")
    with pytest.raises(NotImplementedError, match="overwrite_data"):
        xs.detrend(x, overwrite_data=True)
    with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
        xs.detrend(x, bp=[11])
    with pytest.raises(ValueError, match="Breakpoints must be non-negative"):
        xs.detrend(x, bp=[-1])
    rows = _random(np.random.default_rng(7), (3, 10))
    _close(xjax.vmap(lambda r: xs.detrend(r, bp=[4]))(rows), ss.detrend(_f64(rows), bp=[4]))
    jitted = xjax.jit(xs.detrend, static_argnames=("type", "bp"))
    _close(jitted(rows, bp=(3, 6)), ss.detrend(_f64(rows), bp=[3, 6]))
    # detrending is a linear projection P: the gradient of sum(w * P x) is P^T w = P w
    w = rows[0]
    _close(xjax.grad(lambda v: jnp.sum(w * xs.detrend(v, bp=[5])))(rows[1]),
           ss.detrend(_f64(w), bp=[5]))


# --------------------------------------------------------------------------------------------
# windows

WINDOWS = ["hann", "hamming", "blackman", "nuttall", "blackmanharris", "flattop", "boxcar",
           "rect", "triang", "bartlett", "cosine", "tukey", ("tukey", 0.0), ("tukey", 1.0),
           ("tukey", 0.3), ("kaiser", 8.0), ("gaussian", 2.5), ("general_hamming", 0.6),
           "hann_symmetric", "tri_periodic", "parzen", ("exponential", None, 3.0)]


def test_windows_match_scipy_get_window():
    for window in WINDOWS:
        for n in (1, 2, 3, 4, 7, 16, 17):
            expected = ss.get_window(window, n)
            np.testing.assert_allclose(get_window(window, n), expected, rtol=1e-12,
                                       atol=1e-12, err_msg=str((window, n)))


def test_window_errors(monkeypatch):
    for bad, message in [("kaiser", "must have parameters"), (("hann", 1.0), "does not allow"),
                         ("nope", "Invalid window name"), ((1, 2), "is not a str")]:
        with pytest.raises(ValueError, match=message):
            get_window(bad, 8)
    # Windows not computed natively need SciPy, as in JAX.
    monkeypatch.setitem(sys.modules, "scipy.signal", None)
    with pytest.raises(ImportError, match="scipy must be available"):
        get_window("parzen", 8)
    assert get_window("hamming", 8).shape == (8,)


# --------------------------------------------------------------------------------------------
# stft / istft

HANN16 = np.hanning(16).astype(np.float32)
def _case_id(kwargs):
    """A test id that is the same in every process (xdist workers compare them): functions by
    name, arrays by shape, never by a repr holding an address."""
    def show(value):
        if callable(value):
            return value.__name__
        if isinstance(value, np.ndarray):
            return f"array{value.shape}"
        return str(value)
    return ",".join(f"{key}={show(value)}" for key, value in kwargs.items())


STFT_CASES = [dict(nperseg=16), dict(nperseg=16, noverlap=4), dict(nperseg=15, nfft=20),
              dict(nperseg=16, window="hamming"), dict(nperseg=16, window=("tukey", 0.3)),
              dict(nperseg=16, window=HANN16), dict(nperseg=16, detrend="constant"),
              dict(nperseg=16, detrend="linear"), dict(nperseg=16, return_onesided=False),
              dict(nperseg=16, boundary="even"), dict(nperseg=16, boundary="odd"),
              dict(nperseg=16, boundary="constant"), dict(nperseg=16, boundary=None),
              dict(nperseg=16, padded=False), dict(nperseg=16, boundary=None, padded=False),
              dict(nperseg=16, fs=10.0), dict(nperseg=1, noverlap=0, boundary=None),
              dict(nperseg=64)]


@pytest.mark.parametrize("kwargs", STFT_CASES, ids=_case_id)
def test_stft_matches_scipy(kwargs):
    x = _random(np.random.default_rng(8), (50,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nperseg=64 > 50: both warn and clip
        out = xs.stft(x, **kwargs)
        expected = ss.stft(_f64(x), **kwargs)
    assert out[2].dtype == np.complex64 and out[0].dtype == np.float32
    _close_all(out, expected)


def test_stft_complex_and_axes():
    rng = np.random.default_rng(9)
    xc = _random(rng, (40,), np.complex64)
    with pytest.warns(UserWarning, match="Input data is complex"):
        out = xs.stft(xc, nperseg=16)
    _close_all(out, ss.stft(_f64(xc), nperseg=16, return_onesided=False))
    x2 = _random(rng, (40, 3))
    _close_all(xs.stft(x2, nperseg=16, axis=0), ss.stft(_f64(x2), nperseg=16, axis=0))
    x3 = _random(rng, (2, 3, 40))
    _close_all(xs.stft(x3, nperseg=8, noverlap=2), ss.stft(_f64(x3), nperseg=8, noverlap=2))


ISTFT_CASES = [(dict(nperseg=16), {}), (dict(nperseg=16), dict(nperseg=16)),
               (dict(nperseg=15), dict(nperseg=15)),
               (dict(nperseg=16, nfft=20), dict(nperseg=16, nfft=20)),
               (dict(nperseg=16, noverlap=12), dict(noverlap=12)),
               (dict(nperseg=16, window="boxcar", noverlap=0), dict(window="boxcar", noverlap=0)),
               (dict(nperseg=16, boundary=None), dict(boundary=False)),
               (dict(nperseg=16, window=("tukey", 0.5)), dict(window=("tukey", 0.5))),
               (dict(nperseg=16, window=HANN16), dict(window=HANN16)),
               (dict(nperseg=16, fs=4.0), dict(fs=4.0))]


@pytest.mark.filterwarnings("ignore:NOLA condition failed")  # SciPy's, for boundary=None
@pytest.mark.parametrize("stft_kwargs,istft_kwargs", ISTFT_CASES)
def test_istft_matches_scipy(stft_kwargs, istft_kwargs):
    x = _random(np.random.default_rng(10), (50,))
    z = ss.stft(_f64(x), **stft_kwargs)[2].astype(np.complex64)
    out = xs.istft(z, **istft_kwargs)
    assert out[1].dtype == np.float32
    _close_all(out, ss.istft(_f64(z), **istft_kwargs))


def test_istft_two_sided_and_axes():
    rng = np.random.default_rng(11)
    xc = _random(rng, (48,), np.complex64)
    z = ss.stft(_f64(xc), nperseg=16, return_onesided=False)[2].astype(np.complex64)
    out = xs.istft(z, input_onesided=False)
    assert out[1].dtype == np.complex64
    _close_all(out, ss.istft(_f64(z), input_onesided=False))
    z2 = ss.stft(_f64(_random(rng, (3, 40))), nperseg=16)[2].astype(np.complex64)  # (3, F, T)
    _close_all(xs.istft(z2), ss.istft(_f64(z2)))
    for zt, kwargs in [(np.moveaxis(z2, -1, 0), dict(time_axis=0, freq_axis=-1)),
                       (np.moveaxis(z2, 0, -1), dict(time_axis=1, freq_axis=0))]:
        _close_all(xs.istft(zt, **kwargs), ss.istft(_f64(zt), **kwargs))
    # and it inverts stft
    x = _random(rng, (2, 64))
    restored = xs.istft(xs.stft(x, nperseg=20, noverlap=15)[2], nperseg=20, noverlap=15)[1]
    _close(restored[:, :64], x, tol=1e-5)  # stft padded the end to whole segments


def test_stft_istft_errors():
    x = jnp.ones(32)
    with pytest.raises(ValueError, match="Unknown boundary option 'wrap'"):
        xs.stft(x, nperseg=8, boundary="wrap")
    with pytest.raises(ValueError, match="nperseg must be a positive integer"):
        xs.stft(x, nperseg=0)
    with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
        xs.stft(x, nperseg=8, noverlap=8)
    with pytest.raises(ValueError, match="nfft must be greater than or equal to nperseg"):
        xs.stft(x, nperseg=8, nfft=4)
    with pytest.raises(ValueError, match="window must be 1-D"):
        xs.stft(x, window=jnp.ones((2, 4)))
    with pytest.raises(ValueError, match="window is longer than input signal"):
        xs.stft(x, window=jnp.ones(40), nperseg=None)
    with pytest.raises(ValueError, match="different from length of window"):
        xs.stft(x, window=jnp.ones(8), nperseg=16)
    z = jnp.ones((5, 4), jnp.complex64)
    with pytest.raises(ValueError, match="at least 2d"):
        xs.istft(jnp.ones(5))
    with pytest.raises(ValueError, match="differing time and frequency axes"):
        xs.istft(z, time_axis=0, freq_axis=0)
    with pytest.raises(ValueError, match=r"FFT length \(8\) must be longer than nperseg \(10\)"):
        xs.istft(z, nperseg=10)
    with pytest.raises(ValueError, match="noverlap must be less than nperseg"):
        xs.istft(z, noverlap=8)
    with pytest.raises(ValueError, match="window must have length of 8"):
        xs.istft(z, window=jnp.ones(6))
    with pytest.raises(xjax.errors.ConcretizationTypeError):
        xjax.jit(lambda n: xs.stft(x, nperseg=n))(8)


def test_stft_istft_transforms():
    rng = np.random.default_rng(12)
    x = _random(rng, (4, 40))
    z = xjax.vmap(lambda r: xs.stft(r, nperseg=16)[2])(x)
    _close(z, ss.stft(_f64(x), nperseg=16)[2])
    _close(xjax.jit(lambda zz: xs.istft(zz)[1])(z), x, tol=1e-5)
    _close(xjax.vmap(lambda zz: xs.istft(zz)[1])(z), x, tol=1e-5)
    # |stft|^2 summed is a quadratic form in x: central differences are exact
    weights = rng.standard_normal(ss.stft(_f64(x[0]), nperseg=16, noverlap=10)[2].shape)

    def loss(v):
        return jnp.sum(weights * jnp.abs(xs.stft(v, nperseg=16, noverlap=10)[2]) ** 2)

    def ref_loss(v):
        return np.sum(weights * np.abs(ss.stft(v, nperseg=16, noverlap=10)[2]) ** 2)

    x0 = x[0].astype(np.float64)
    _close(xjax.grad(loss)(x[0]), _finite_difference_grad(ref_loss, x0), tol=2e-4)


# --------------------------------------------------------------------------------------------
# welch / csd

WELCH_CASES = [dict(nperseg=16), dict(nperseg=16, noverlap=10), dict(nperseg=16, nfft=21),
               dict(nperseg=15), dict(nperseg=16, scaling="spectrum"),
               dict(nperseg=16, average="median"), dict(nperseg=16, detrend="linear"),
               dict(nperseg=16, detrend=False), dict(nperseg=16, return_onesided=False),
               dict(nperseg=16, window="blackman", fs=3.0), dict(nperseg=16, window=HANN16),
               dict(nperseg=50), dict(nperseg=16, detrend=lambda d: d - d.mean(-1, keepdims=True))]


@pytest.mark.parametrize("kwargs", WELCH_CASES, ids=_case_id)
def test_welch_matches_scipy(kwargs):
    x = _random(np.random.default_rng(13), (50,))
    out = xs.welch(x, **kwargs)
    assert out[1].dtype == np.float32
    _close_all(out, ss.welch(_f64(x), **kwargs))


def test_welch_defaults_axes_and_complex():
    rng = np.random.default_rng(14)
    x = _random(rng, (50,))
    # As in JAX, nperseg defaults to the signal length (SciPy: 256, clipped).
    _close_all(xs.welch(x), ss.welch(_f64(x), nperseg=50))
    x2 = _random(rng, (40, 3))
    _close_all(xs.welch(x2, nperseg=16, axis=0), ss.welch(_f64(x2), nperseg=16, axis=0))
    _close_all(xs.welch(x2.T, nperseg=16, average="median"),
               ss.welch(_f64(x2.T), nperseg=16, average="median"))
    xc = _random(rng, (50,), np.complex64)
    for average in ("mean", "median"):
        with pytest.warns(UserWarning, match="Input data is complex"):
            out = xs.welch(xc, nperseg=16, average=average)
        _close_all(out, ss.welch(_f64(xc), nperseg=16, average=average))


def test_csd_matches_scipy():
    rng = np.random.default_rng(15)
    x, y = _random(rng, (50,)), _random(rng, (50,))
    for kwargs in [dict(nperseg=16), dict(nperseg=16, average="median"),
                   dict(nperseg=16, scaling="spectrum", return_onesided=False),
                   dict(nperseg=16, window="hamming", detrend="linear")]:
        out = xs.csd(x, y, **kwargs)
        assert out[1].dtype == np.complex64
        _close_all(out, ss.csd(_f64(x), _f64(y), **kwargs))
    x2, y2 = _random(rng, (3, 40)), _random(rng, (1, 40))  # broadcast outer axes
    _close_all(xs.csd(x2, y2, nperseg=16), ss.csd(_f64(x2), _f64(y2), nperseg=16))
    y_long = _random(rng, (60,))  # the shorter signal is zero-padded
    _close_all(xs.csd(x, y_long, nperseg=16), ss.csd(_f64(x), _f64(y_long), nperseg=16))
    xc = _random(rng, (50,), np.complex64)
    with pytest.warns(UserWarning, match="Input data is complex"):
        out = xs.csd(xc, y, nperseg=16)
    _close_all(out, ss.csd(_f64(xc), _f64(y), nperseg=16))
    out = xs.csd(x, None, nperseg=16)  # y=None: the auto-spectrum, real
    assert out[1].dtype == np.float32
    _close_all(out, ss.csd(_f64(x), _f64(x), nperseg=16))


def test_welch_csd_errors():
    x = jnp.ones(32)
    with pytest.raises(ValueError, match="Unknown scaling: power"):
        xs.welch(x, nperseg=8, scaling="power")
    with pytest.raises(ValueError, match='average must be "median" or "mean"'):
        xs.welch(x, nperseg=8, average="mode")
    with pytest.raises(ValueError, match="Unsupported detrend type"):
        xs.welch(x, nperseg=8, detrend=3)
    with pytest.raises(ValueError, match="Trend type must be"):
        xs.welch(x, nperseg=8, detrend="quadratic")
    with pytest.raises(ValueError, match="same rank"):
        xs.csd(jnp.ones((2, 32)), x, nperseg=8)
    with pytest.raises(ValueError, match="cannot be broadcast together"):
        xs.csd(jnp.ones((2, 32)), jnp.ones((3, 32)), nperseg=8)
    with pytest.warns(UserWarning, match="nperseg=64 is greater than input_length=32"):
        f, p = xs.welch(x, nperseg=64)
    assert p.shape == (17,)
    with pytest.raises(TypeError):
        xs.welch([1.0, 2.0])


def test_welch_transforms():
    rng = np.random.default_rng(16)
    x = _random(rng, (4, 40))
    jitted = xjax.jit(lambda v, fs: xs.welch(v, fs=fs, nperseg=16)[1])
    _close(jitted(x, 2.0), ss.welch(_f64(x), fs=2.0, nperseg=16)[1])
    _close(xjax.vmap(lambda r: xs.csd(r, x[0], nperseg=16)[1])(x),
           ss.csd(_f64(x), _f64(x[0]), nperseg=16)[1])
    weights = rng.standard_normal(9)

    def loss(v):  # the PSD is quadratic in the signal
        return jnp.sum(weights * xs.welch(v, nperseg=16, detrend="linear")[1])

    def ref_loss(v):
        return np.sum(weights * ss.welch(v, nperseg=16, detrend="linear")[1])

    _close(xjax.grad(loss)(x[0]), _finite_difference_grad(ref_loss, x[0]), tol=2e-4)
    # and differentiable in an array window
    grad_w = xjax.grad(lambda w: jnp.sum(xs.welch(x[0], window=w)[1]))(HANN16)
    assert grad_w.shape == (16,) and np.all(np.isfinite(np.asarray(grad_w)))


# --------------------------------------------------------------------------------------------
# JAX as a differential reference


def test_signal_against_jax():
    jax = pytest.importorskip("jax")
    js = jax.scipy.signal
    rng = np.random.default_rng(17)
    a, b = _random(rng, (6, 7), np.complex64), _random(rng, (3, 2), np.complex64)
    for mode in ("full", "same", "valid"):
        _close(xs.correlate2d(b, a, mode), js.correlate2d(b, a, mode), tol=1e-4)
        _close(xs.convolve(a, b, mode), js.convolve(a, b, mode), tol=1e-4)
    c, d = _random(rng, (3, 9, 4)), _random(rng, (3, 4, 4))
    _close(xs.fftconvolve(c, d, "same", axes=(1, 2)), js.fftconvolve(c, d, "same", axes=(1, 2)),
           tol=1e-4)
    x = _random(rng, (2, 40))
    _close(xs.detrend(x, bp=[7, 20]), js.detrend(x, bp=[7, 20]), tol=1e-4)
    _close_all(xs.welch(x), js.welch(x), tol=1e-4)
    _close_all(xs.csd(x, x[::-1], nperseg=12, average="median"),
               js.csd(x, x[::-1], nperseg=12, average="median"), tol=1e-4)
    f, t, z = xs.stft(x, nperseg=12, window=("tukey", 0.4), boundary="odd")
    _close_all((f, t, z), js.stft(x, nperseg=12, window=("tukey", 0.4), boundary="odd"),
               tol=1e-4)
    _close_all(xs.istft(z, window=("tukey", 0.4)), js.istft(np.asarray(z), window=("tukey", 0.4)),
               tol=1e-4)
