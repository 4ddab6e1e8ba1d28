"""Window functions for ``xjax.scipy.signal``'s spectral estimators.

A named window (``'hann'``) or a tuple ``(name, *params)`` (``('tukey', 0.25)``) is resolved
as :func:`scipy.signal.get_window` resolves it with its default ``fftbins=True``: a
*periodic* window (the symmetric window one sample longer, last sample dropped), unless the
name ends in ``'_symmetric'``. The common windows are computed here with NumPy (they depend
only on static sizes); other names are delegated to SciPy when it is installed, which is what
JAX does for every window but ``'hann'``.
"""

from __future__ import annotations

import math

import numpy as np

# Coefficients a_k of w = sum_k (-1)^k a_k cos(2 pi k n / (M - 1)).
_COSINE_SUMS = {
    "hann": (0.5, 0.5),
    "hamming": (0.54, 0.46),
    "blackman": (0.42, 0.50, 0.08),
    "nuttall": (0.3635819, 0.4891775, 0.1365995, 0.0106411),
    "blackmanharris": (0.35875, 0.48829, 0.14128, 0.01168),
    "flattop": (0.21557895, 0.41663158, 0.277263158, 0.083578947, 0.006947368),
}

_ALIASES = {
    "boxcar": ("boxcar", "box", "ones", "rect", "rectangular"),
    "triang": ("triang", "triangle", "tri"),
    "bartlett": ("bartlett", "bart", "brt"),
    "hann": ("hann", "han"),
    "hamming": ("hamming", "hamm", "ham"),
    "blackman": ("blackman", "black", "blk"),
    "nuttall": ("nuttall", "nutl", "nut"),
    "blackmanharris": ("blackmanharris", "blackharr", "bkh"),
    "flattop": ("flattop", "flat", "flt"),
    "cosine": ("cosine", "halfcosine"),
    "tukey": ("tukey", "tuk"),
    "kaiser": ("kaiser", "ksr"),
    "gaussian": ("gaussian", "gauss", "gss"),
    "general_hamming": ("general_hamming", "general hamming"),
}
_CANONICAL = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}

# How many parameters each window takes: (required, allowed).
_PARAM_COUNTS = {"tukey": (0, 1), "kaiser": (1, 1), "gaussian": (1, 1),
                 "general_hamming": (1, 1)}


def _cosine_sum(coefficients, m: int) -> np.ndarray:
    phase = np.linspace(-np.pi, np.pi, m)  # centred: the window peaks in the middle
    return sum(a * np.cos(k * phase) for k, a in enumerate(coefficients))


def _triang(m: int) -> np.ndarray:
    n = np.arange(1, (m + 1) // 2 + 1)
    if m % 2 == 0:
        half = (2 * n - 1.0) / m
        return np.concatenate([half, half[::-1]])
    half = 2 * n / (m + 1.0)
    return np.concatenate([half, half[-2::-1]])


def _bartlett(m: int) -> np.ndarray:
    n = np.arange(m)
    ramp = 2.0 * n / (m - 1)
    return np.where(n <= (m - 1) / 2.0, ramp, 2.0 - ramp)


def _tukey(m: int, alpha: float = 0.5) -> np.ndarray:
    if alpha <= 0:
        return np.ones(m)
    if alpha >= 1:
        return _cosine_sum(_COSINE_SUMS["hann"], m)
    n = np.arange(m)
    taper = int(math.floor(alpha * (m - 1) / 2.0))  # last index of the rising cosine
    w = np.ones(m)
    rise, fall = n[: taper + 1], n[m - taper - 1:]
    w[: taper + 1] = 0.5 * (1 + np.cos(np.pi * (2.0 * rise / (alpha * (m - 1)) - 1)))
    w[m - taper - 1:] = 0.5 * (1 + np.cos(
        np.pi * (2.0 * fall / (alpha * (m - 1)) - 2.0 / alpha + 1)))
    return w


def _kaiser(m: int, beta: float) -> np.ndarray:
    centre = (m - 1) / 2.0
    n = np.arange(m)
    return np.i0(beta * np.sqrt(1 - ((n - centre) / centre) ** 2)) / np.i0(float(beta))


def _gaussian(m: int, std: float) -> np.ndarray:
    n = np.arange(m) - (m - 1.0) / 2.0
    return np.exp(-(n ** 2) / (2.0 * std * std))


def _symmetric_window(name: str, m: int, params: tuple) -> np.ndarray:
    if m == 1:
        return np.ones(1)
    if name in _COSINE_SUMS:
        return _cosine_sum(_COSINE_SUMS[name], m)
    if name == "general_hamming":
        (alpha,) = params
        return _cosine_sum((alpha, 1.0 - alpha), m)
    if name == "boxcar":
        return np.ones(m)
    if name == "triang":
        return _triang(m)
    if name == "bartlett":
        return _bartlett(m)
    if name == "cosine":
        return np.sin(np.pi / m * (np.arange(m) + 0.5))
    if name == "tukey":
        return _tukey(m, *params)
    if name == "kaiser":
        return _kaiser(m, *params)
    return _gaussian(m, *params)


def _split_spec(window):
    """``(name, params)`` of a window given as a string or a tuple."""
    if isinstance(window, str):
        return window, ()
    if not window or not isinstance(window[0], str):
        raise ValueError(f"First tuple entry of parameter {window=} is not a str!")
    return window[0], tuple(window[1:])


def _scipy_window(window, length: int) -> np.ndarray:
    try:
        from scipy.signal import get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use {window=}") from err
    return np.asarray(get_window(window, length), dtype=np.float64)


def get_window(window, length: int) -> np.ndarray:
    """The float64 periodic window ``window`` (string or tuple) of ``length`` samples."""
    name, params = _split_spec(window)
    periodic = True
    base = name
    if name.endswith("_symmetric"):
        base, periodic = name[: -len("_symmetric")], False
    elif name.endswith("_periodic"):
        base = name[: -len("_periodic")]
    canonical = _CANONICAL.get(base)
    if canonical is None:
        return _scipy_window(window, length)
    required, allowed = _PARAM_COUNTS.get(canonical, (0, 0))
    if len(params) < required:
        raise ValueError(f"'{base}' must have parameters, but {window=}!")
    if len(params) > allowed:
        if allowed == 0:
            raise ValueError(f"'{base}' does not allow parameters, but {window=}!")
        raise TypeError(f"window {base!r} takes at most {allowed} parameter(s), got "
                        f"{len(params)} in {window=}")
    if length < 0:
        raise ValueError("Window length M must be a non-negative integer")
    if length <= 1:  # SciPy's guard: before any periodic extension
        return np.ones(length)
    if not periodic:
        return _symmetric_window(canonical, length, params)
    return _symmetric_window(canonical, length + 1, params)[:length]
