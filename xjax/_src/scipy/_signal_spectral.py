"""Spectral estimators of ``xjax.scipy.signal``: :func:`stft`, :func:`istft`, :func:`csd`,
:func:`welch` (JAX's versions of SciPy's).

The signal is cut into overlapping segments (a gather of static indices), each segment is
detrended, windowed and Fourier transformed; ``istft`` inverts this by overlap-add (a
scatter-add of static indices). Segment lengths, overlaps and FFT sizes are static; the data,
an array window and ``fs`` may be traced, so everything jits, vmaps and differentiates.

Behaviour follows JAX's where it departs from SciPy: ``csd``/``welch`` default ``nperseg``
to the signal's length (SciPy: 256), and ``csd(x, None)`` means the auto-spectrum of ``x``.
Where JAX 0.10.2 has a bug we follow SciPy instead: a callable ``detrend`` receives the
segments with their samples along the last axis (JAX moves the wrong axis); ``istft`` honours
an explicit ``noverlap=0`` (JAX takes it as the default) and inverts odd-length segments (JAX
ignores the FFT length it computed there).
"""

from __future__ import annotations

import operator
import warnings

import numpy as np

from xjax._src.core import dtypes
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, check_arraylike,
                                        concrete_value, promote_dtypes_inexact)
from xjax._src.scipy._signal_windows import get_window
import xjax._src.numpy as jnp

_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def _jnp():
    return jnp


def _shape(x) -> tuple:
    return tuple(aval_of(x).shape)


def _is_complex(x) -> bool:
    return dtypes.issubdtype(aval_of(x).dtype, np.complexfloating)


def _static_int(value, context: str) -> int:
    return operator.index(int(concrete_value(value, context)))


def _real_dtype(dtype):
    return np.finfo(dtype).dtype


# --------------------------------------------------------------------------------------------
# windows, segments and boundary extensions


def _named_window(window, length: int, dtype):
    return _jnp().asarray(get_window(window, length).astype(_real_dtype(dtype))).astype(dtype)


def _triage_window(window, nperseg, input_length: int, dtype):
    """``(window array, nperseg)``: a named window is made ``nperseg`` long (default and
    at most the input length, as in JAX); an array window fixes ``nperseg``."""
    jnp = _jnp()
    if isinstance(window, (str, tuple)):
        length = input_length if nperseg is None else nperseg
        if length > input_length:
            warnings.warn(f"nperseg={length} is greater than input_length={input_length}, "
                          f"using nperseg={input_length}")
            length = input_length
        return _named_window(window, length, dtype), length
    win = jnp.asarray(window, dtype=dtype)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if input_length < win.size:
        raise ValueError("window is longer than input signal")
    if nperseg is not None and nperseg != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, int(win.size)


def _extend(x, n: int, boundary):
    """Extend the last axis of ``x`` by ``n`` samples at both ends."""
    jnp = _jnp()
    if boundary is None or n < 1:
        return x
    pad_width = [(0, 0)] * (x.ndim - 1) + [(n, n)]
    if boundary == "even":
        return jnp.pad(x, pad_width, mode="reflect")
    if boundary == "constant":
        return jnp.pad(x, pad_width, mode="edge")
    if boundary == "zeros":
        return jnp.pad(x, pad_width)
    # 'odd': point reflection through the end samples
    length = x.shape[-1]
    if n > length - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {length - 1}.")
    head = 2 * x[..., :1] - jnp.flip(x[..., 1:n + 1], axis=-1)
    tail = 2 * x[..., -1:] - jnp.flip(x[..., length - n - 1:length - 1], axis=-1)
    return jnp.concatenate([head, x, tail], axis=-1)


def _zero_pad_end(x, n: int):
    return x if n == 0 else _jnp().pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n)])


def _segment_indices(length: int, nperseg: int, step: int) -> np.ndarray:
    """``(nseg, nperseg)`` sample indices of the segments of a ``length``-long signal."""
    starts = np.arange(0, max(length - nperseg + 1, 0), step)
    return starts[:, None] + np.arange(nperseg)[None, :]


def _overlap_add(frames, step: int):
    """Sum ``frames`` (``(..., nseg, nperseg)``) placed ``step`` samples apart."""
    jnp = _jnp()
    nseg, nperseg = frames.shape[-2:]
    length = step * (nseg - 1) + nperseg
    out = jnp.zeros(frames.shape[:-2] + (length,), frames.dtype)
    return out.at[..., _segment_indices(length, nperseg, step)].add(frames)


def _detrend_function(detrend_type):
    """The per-segment detrending; segments lie along the last axis."""
    if isinstance(detrend_type, str):
        from xjax._src.scipy.signal import detrend  # signal imports this module
        return lambda d: detrend(d, type=detrend_type, axis=-1)
    if callable(detrend_type):
        # Called on all segments at once, ``(..., nseg, nperseg)``: samples along the last
        # axis whatever ``axis`` is, as SciPy >= 1.12 passes them (JAX 0.10.2 moves the
        # wrong axis there).
        return detrend_type
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _windowed_ffts(x, win, detrend_func, nperseg, step, nfft, onesided):
    """FFTs of the detrended, windowed segments of ``x``'s last axis:
    ``(..., nseg, nfreq)``."""
    jnp = _jnp()
    segments = x[..., _segment_indices(x.shape[-1], nperseg, step)]
    segments = detrend_func(segments) * win
    if onesided:
        return jnp.fft.rfft(jnp.real(segments), n=nfft)
    return jnp.fft.fft(segments, n=nfft)


# --------------------------------------------------------------------------------------------
# the shared estimator


def _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend_type,
                     return_onesided, scaling, axis, mode, boundary=None, padded=False):
    """``(freqs, times, result)``: windowed FFTs (``mode='stft'``) or (cross) periodograms
    per segment (``mode='psd'``), with the frequency axis at ``axis`` and segments last.
    ``y=None`` means the auto-spectrum of ``x``."""
    jnp = _jnp()
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARIES)}")
    axis = _static_int(axis, "axis of windowed-FFT")
    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_dtypes_inexact(x)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y = promote_dtypes_inexact(x, y)
        if x.ndim != y.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
    axis = canonicalize_axis(axis, x.ndim)
    if y is not None:
        outer = [s for i, s in enumerate(x.shape) if i != axis]
        outer_y = [s for i, s in enumerate(y.shape) if i != axis]
        try:
            np.broadcast_shapes(tuple(outer), tuple(outer_y))
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = dtypes.to_complex_dtype(x.dtype)
    freq_dtype = _real_dtype(result_dtype)

    if nperseg is not None:
        nperseg = _static_int(nperseg, "nperseg of windowed-FFT")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _triage_window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = (nperseg // 2 if noverlap is None
                else _static_int(noverlap, "noverlap of windowed-FFT"))
    nfft = nperseg if nfft is None else _static_int(nfft, "nfft of windowed-FFT")

    if x.size == 0 or (y is not None and y.size == 0):
        shape = x.shape if y is None else tuple(
            min(x.shape[axis], y.shape[axis]) if i == axis else s
            for i, s in enumerate(jnp.broadcast_shapes(x.shape, y.shape)))
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))

    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = jnp.moveaxis(y, axis, -1)
        longest = max(x.shape[-1], y.shape[-1])  # the shorter signal is zero-padded
        x, y = _zero_pad_end(x, longest - x.shape[-1]), _zero_pad_end(y, longest - y.shape[-1])

    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    signals = [x] if y is None else [x, y]
    signals = [_extend(s, nperseg // 2, boundary) for s in signals]
    if padded:  # a whole number of segments
        extra = (-(signals[0].shape[-1] - nperseg) % step) % nperseg
        signals = [_zero_pad_end(s, extra) for s in signals]
    length = signals[0].shape[-1]

    detrend_func = _detrend_function(detrend_type)
    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / jnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)

    onesided = bool(return_onesided)
    if onesided and any(_is_complex(s) for s in signals):
        warnings.warn("Input data is complex, switching to return_onesided=False")
        onesided = False
    freq_fn = jnp.fft.rfftfreq if onesided else jnp.fft.fftfreq
    freqs = freq_fn(nfft, 1 / fs, dtype=freq_dtype)

    spectra = [_windowed_ffts(s, win, detrend_func, nperseg, step, nfft, onesided)
               for s in signals]
    if mode == "stft":
        result = spectra[0]
    else:
        result = jnp.conj(spectra[0]) * spectra[-1]
    result = result * scale
    if onesided and mode == "psd":  # fold in the power of the negative frequencies
        doubled = np.full(result.shape[-1], 2.0)
        doubled[0] = 1.0
        if nfft % 2 == 0:
            doubled[-1] = 1.0
        result = result * doubled.astype(freq_dtype)

    times = np.arange(nperseg / 2, length - nperseg / 2 + 1, step)
    if boundary is not None:
        times = times - nperseg / 2
    times = jnp.asarray(times.astype(freq_dtype)) / fs

    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = jnp.real(result)  # an auto-spectrum is real
    return freqs, times, jnp.moveaxis(result, -1, axis)


# --------------------------------------------------------------------------------------------
# public estimators


def stft(x, fs=1.0, window="hann", nperseg: int = 256, noverlap=None, nfft=None,
         detrend=False, return_onesided: bool = True, boundary="zeros",
         padded: bool = True, axis: int = -1):
    """Short-time Fourier transform (SciPy's ``stft``, 'spectrum' scaling).

    Parameters
    ----------
    x : array_like
        Signal.
    fs : float
        Sampling frequency (default 1.0).
    window : str, tuple or array_like
        Window name (``'hann'``), ``(name, *params)``, or a 1-D array of length
        ``nperseg``. Named windows are periodic, as :func:`scipy.signal.get_window`'s.
    nperseg : int
        Segment length (default 256; at most the signal's length).
    noverlap : int, optional
        Samples shared by neighbouring segments (default ``nperseg // 2``).
    nfft : int, optional
        FFT length (``>= nperseg``; default ``nperseg``).
    detrend : False, 'constant', 'linear' or callable
        Per-segment detrending (default none).
    return_onesided : bool
        One-sided spectrum for real input (complex input always gets two sides).
    boundary : {'zeros', 'even', 'odd', 'constant', None}
        How the signal is extended by ``nperseg // 2`` samples at both ends.
    padded : bool
        Zero-pad the end so the segments cover the whole signal.
    axis : int
        Time axis of ``x``.

    Returns
    -------
    f, t, Zxx : Array
        Frequencies, segment times and the STFT (frequencies at ``axis``, times last).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import stft
    >>> f, t, Z = stft(jnp.array([1., 2., 3., 2., 1., 0., 1., 2.]), nperseg=4)
    >>> Z.shape, t
    ((3, 5), Array([0., 2., 4., 6., 8.], dtype=float32))
    """
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                            return_onesided, "spectrum", axis, "stft", boundary, padded)


def _median_bias(n: int) -> float:
    """Ratio of the median to the mean of ``n`` exponentially distributed periodograms."""
    even = np.arange(2.0, n, 2.0)
    return float(1 + np.sum(1.0 / (even + 1) - 1.0 / even))


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided: bool = True, scaling: str = "density",
        axis: int = -1, average: str = "mean"):
    """Cross power spectral density by Welch's method (SciPy's ``csd``).

    Parameters
    ----------
    x, y : array_like
        Signals (``y=None``: the power spectral density of ``x``, as :func:`welch`).
        The shorter one is zero-padded to the other's length along ``axis``.
    fs, window, noverlap, nfft, detrend, return_onesided, axis
        As in :func:`stft` (``detrend`` defaults to ``'constant'``).
    nperseg : int, optional
        Segment length; default (as in JAX) the signal's length.
    scaling : {'density', 'spectrum'}
        Power spectral density (V**2/Hz) or power spectrum (V**2).
    average : {'mean', 'median'}
        How the per-segment periodograms are combined (the median is bias-corrected).

    Returns
    -------
    f, Pxy : Array
        Frequencies and the (complex, unless ``y`` is None) cross spectral density.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import csd
    >>> x = jnp.sin(jnp.arange(64.))
    >>> f, P = csd(x, 2 * x, nperseg=16)
    >>> f.shape, P.dtype
    ((9,), dtype('complex64'))
    """
    jnp = _jnp()
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1])
                if _is_complex(pxy):  # medians of the real and imaginary parts
                    pxy = (jnp.median(jnp.real(pxy), axis=-1)
                           + 1j * jnp.median(jnp.imag(pxy), axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy * (1.0 / bias)
            elif average == "mean":
                pxy = jnp.mean(pxy, axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided: bool = True, scaling: str = "density",
          axis: int = -1, average: str = "mean"):
    """Power spectral density by Welch's method (SciPy's ``welch``): the mean (or median)
    of the modified periodograms of overlapping segments. Parameters are those of
    :func:`csd` without ``y``.

    Returns
    -------
    f, Pxx : Array
        Frequencies and the (real) power spectral density.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import welch
    >>> f, P = welch(jnp.ones(8), window='boxcar', nperseg=4, detrend=False,
    ...              scaling='spectrum')
    >>> P
    Array([1., 0., 0.], dtype=float32)
    """
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                     nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                     scaling=scaling, axis=axis, average=average)
    return freqs, _jnp().real(pxx)


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided: bool = True, boundary: bool = True, time_axis: int = -1,
          freq_axis: int = -2):
    """Inverse short-time Fourier transform (SciPy's ``istft``): the inverse of
    :func:`stft` by weighted overlap-add.

    Parameters
    ----------
    Zxx : array_like
        STFT, at least 2-D.
    fs : float
        Sampling frequency (default 1.0).
    window : str, tuple or array_like
        The window :func:`stft` used.
    nperseg : int, optional
        Segment length (default from the number of frequencies).
    noverlap : int, optional
        Overlap of segments (default ``nperseg // 2``).
    nfft : int, optional
        FFT length (default from the number of frequencies and ``nperseg``).
    input_onesided : bool
        Whether ``Zxx`` holds a one-sided spectrum.
    boundary : bool
        Whether :func:`stft` extended the signal at both ends (the extension is removed).
    time_axis, freq_axis : int
        Axes of segments and of frequencies in ``Zxx``.

    Returns
    -------
    t, x : Array
        Sample times and the reconstructed signal.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import istft, stft
    >>> x = jnp.array([1., 2., 3., 2., 1., 0., 1., 2.])
    >>> t, y = istft(stft(x, nperseg=4)[2])
    >>> jnp.allclose(y, x, atol=1e-6)
    Array(True, dtype=bool)
    """
    jnp = _jnp()
    check_arraylike("istft", Zxx)
    Zxx = jnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, Zxx.ndim)
    time_axis = canonicalize_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(dtypes.to_complex_dtype(dtypes.to_inexact_dtype(Zxx.dtype)))

    nfreq = Zxx.shape[freq_axis]
    n_default = 2 * (nfreq - 1) if input_onesided else nfreq
    nperseg = n_default if nperseg is None else _static_int(nperseg, "nperseg: segment "
                                                                     "length of STFT")
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        # an odd one-sided segment length is recognised from nperseg
        nfft = n_default + 1 if (input_onesided and nperseg == n_default + 1) else n_default
    else:
        nfft = _static_int(nfft, "nfft of STFT")
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = (nperseg // 2 if noverlap is None
                else _static_int(noverlap, "noverlap of STFT"))
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap

    outer = tuple(a for a in range(Zxx.ndim) if a not in (time_axis, freq_axis))
    Zxx = jnp.transpose(Zxx, outer + (time_axis, freq_axis))  # (..., segments, freqs)
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    frames = inverse(Zxx, n=nfft, axis=-1)[..., :nperseg]

    if isinstance(window, (str, tuple)):
        win = _named_window(window, nperseg, _real_dtype(frames.dtype))
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    frames = frames * jnp.sum(win)  # undoes stft's 'spectrum' scaling

    x = _overlap_add(frames * win, step)
    nseg = frames.shape[-2]
    norm = _overlap_add(jnp.broadcast_to(win * win, (nseg, nperseg)), step)
    if boundary:  # SciPy's slice (empty when nperseg == 1, as there)
        trim = slice(nperseg // 2, -(nperseg // 2))
        x, norm = x[..., trim], norm[..., trim]
    x = x * (1.0 / jnp.where(norm > 1e-10, norm, 1.0))  # (multiply: x may be complex)

    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = jnp.moveaxis(x, -1, time_axis)
    times = jnp.arange(x.shape[0], dtype=_real_dtype(x.dtype)) / fs
    return times, x
