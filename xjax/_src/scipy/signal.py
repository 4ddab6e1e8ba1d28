"""``xjax.scipy.signal``: convolution, detrending and spectral analysis (JAX's
``jax.scipy.signal``).

Direct convolutions lower to :func:`xjax.lax.conv_general_dilated` (``method='auto'`` is
``'direct'``, as in JAX); FFT convolutions use :mod:`xjax.numpy.fft`. As in JAX, direct
N-d convolutions need one input at least as large as the other along every axis (SciPy
allows mixed sizes), ``convolve2d``/``correlate2d`` support only ``boundary='fill'`` with
``fillvalue=0``, and ``detrend`` only ``'linear'``/``'constant'``. The spectral estimators
(:func:`stft`, :func:`istft`, :func:`csd`, :func:`welch`) live in
``xjax/scipy/_signal_spectral.py``.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.signal import convolve
>>> convolve(jnp.array([1., 2., 3.]), jnp.array([0., 1., 0.5]), mode='same')
Array([1. , 2.5, 4. ], dtype=float32)
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from xjax._src import lax
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, check_arraylike,
                                        promote_dtypes_inexact)
from xjax._src.scipy._signal_spectral import _is_complex, _jnp, _shape  # shared helpers
from xjax._src.scipy._signal_spectral import csd, istft, stft, welch  # noqa: F401

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]

_MODES = ("full", "same", "valid")


def _crop(x, axes, starts, sizes):
    """``x[start:start + size]`` along each of ``axes``."""
    shape = _shape(x)
    lo, hi = [0] * len(shape), list(shape)
    for axis, start, size in zip(axes, starts, sizes):
        lo[axis], hi[axis] = start, start + size
    return lax.slice(x, lo, hi)


def _centred_window(full: int, size: int) -> int:
    """Start of the centred ``size``-long part of a ``full``-long convolution (SciPy's)."""
    return (full - size) // 2


# --------------------------------------------------------------------------------------------
# direct convolution


def _checked_pair(in1, in2, mode):
    """JAX's checks for direct convolution; returns both inputs in their inexact dtype."""
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    check_arraylike("convolve", in1, in2)
    if np.ndim(in1) != np.ndim(in2):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if np.size(in1) == 0 or np.size(in2) == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{np.shape(in1)} and {np.shape(in2)}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)
    s1, s2 = _shape(in1), _shape(in2)
    if not (all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2))):
        raise ValueError("One input must be smaller than the other in every dimension.")
    return in1, in2


def _full_conv_window(a, b, starts, sizes, precision):
    """``convolve(a, b, 'full')[start:start + size, ...]`` computed directly: one
    convolution whose padding (negative where the window drops edge samples) yields just
    the window. Requires one input at least as large as the other along every axis."""
    if _shape(a) == ():
        return a * b
    if any(x < y for x, y in zip(_shape(a), _shape(b))):
        a, b = b, a  # convolution commutes; lax wants the larger operand as the input
    kernel = lax.rev(b, tuple(range(len(_shape(b)))))  # lax convolutions correlate
    padding = [(k - 1 - start, start + size - n)
               for n, k, start, size in zip(_shape(a), _shape(b), starts, sizes)]
    out = lax.conv_general_dilated(a[None, None], kernel[None, None],
                                   (1,) * len(padding), padding, precision=precision)
    return out[0, 0]


def _mode_window(s1, s2, mode):
    """``(starts, sizes)`` of SciPy's ``mode`` part of the full convolution."""
    full = [a + b - 1 for a, b in zip(s1, s2)]
    if mode == "full":
        return [0] * len(full), full
    if mode == "same":
        return [_centred_window(f, a) for f, a in zip(full, s1)], list(s1)
    return ([min(a, b) - 1 for a, b in zip(s1, s2)],
            [abs(a - b) + 1 for a, b in zip(s1, s2)])


def _direct(in1, in2, mode, precision):
    in1, in2 = _checked_pair(in1, in2, mode)
    starts, sizes = _mode_window(_shape(in1), _shape(in2), mode)
    return _full_conv_window(in1, in2, starts, sizes, precision)


def _flip_conj(x):
    jnp = _jnp()
    return jnp.flip(jnp.conj(x) if _is_complex(x) else x)


# --------------------------------------------------------------------------------------------
# FFT convolution


def _conv_axes(ndim: int, axes) -> tuple:
    if axes is None:
        return tuple(range(ndim))
    if isinstance(axes, Sequence) or hasattr(axes, "__iter__"):
        axes = tuple(canonicalize_axis(operator.index(a), ndim) for a in axes)
    else:
        axes = (canonicalize_axis(operator.index(axes), ndim),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in fftconvolve: {axes}")
    return axes


def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """N-dimensional convolution through the FFT (SciPy's ``fftconvolve``).

    Parameters
    ----------
    in1, in2 : array_like
        Inputs of equal rank.
    mode : {'full', 'same', 'valid'}
        ``'full'``: the whole convolution; ``'same'``: its centred part the size of
        ``in1``; ``'valid'``: the part that does not depend on zero-padding (one input
        must then be at least as large as the other along every convolved axis).
    axes : int or sequence of int, optional
        Axes to convolve along (default all). Along the other axes the inputs must have
        the same length and are treated as a batch.

    Returns
    -------
    Array
        The convolution, in the inputs' promoted inexact dtype.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import fftconvolve
    >>> jnp.round(fftconvolve(jnp.array([1., 2., 3.]), jnp.array([1., 1.])), 4)
    Array([1., 3., 5., 3.], dtype=float32)
    """
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(in1, in2)
    s1, s2 = _shape(in1), _shape(in2)
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    axes = _conv_axes(len(s1), axes)
    if any(s1[a] != s2[a] for a in range(len(s1)) if a not in axes):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={s1} "
                         f"in2.shape={s2} axes={axes}")
    n1, n2 = [s1[a] for a in axes], [s2[a] for a in axes]
    if mode == "valid":
        if not (all(a >= b for a, b in zip(n1, n2)) or all(a <= b for a, b in zip(n1, n2))):
            raise ValueError("For 'valid' mode, One input must be at least as large as the "
                             "other in every dimension.")
    full = [a + b - 1 for a, b in zip(n1, n2)]
    if all(a == 1 or b == 1 for a, b in zip(n1, n2)):
        product = in1 * in2  # no overlap to sum: the convolution is a (broadcast) product
    else:
        fft = _jnp().fft
        if _is_complex(in1):
            product = fft.ifftn(fft.fftn(in1, full, axes) * fft.fftn(in2, full, axes),
                                full, axes)
        else:
            product = fft.irfftn(fft.rfftn(in1, full, axes) * fft.rfftn(in2, full, axes),
                                 full, axes)
    starts, sizes = _mode_window(n1, n2, mode)
    return _crop(product, axes, starts, sizes)


# --------------------------------------------------------------------------------------------
# public convolutions


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """N-dimensional convolution (SciPy's ``convolve``).

    Parameters
    ----------
    in1, in2 : array_like
        Inputs of equal rank.
    mode : {'full', 'same', 'valid'}
        Size of the output: the full convolution, its centred part the size of ``in1``,
        or the part computed without zero-padding.
    method : {'auto', 'direct', 'fft'}
        ``'auto'`` (as in JAX) and ``'direct'`` use :func:`xjax.lax.conv_general_dilated`
        (one input must then be at least as large as the other along every axis);
        ``'fft'`` uses :func:`fftconvolve`.
    precision : optional
        :class:`xjax.lax.Precision` of the direct convolution.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import convolve
    >>> x, y = jnp.array([1., 2., 3., 2., 1.]), jnp.array([1., 1., 1.])
    >>> convolve(x, y)
    Array([1., 3., 6., 7., 6., 3., 1.], dtype=float32)
    >>> convolve(x, y, mode='valid')
    Array([6., 7., 6.], dtype=float32)
    """
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _direct(in1, in2, mode, precision)
    raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """N-dimensional cross-correlation (SciPy's ``correlate``):
    ``z[k] = sum_l in1[l] * conj(in2[l - k + n2 - 1])``, i.e. ``in1`` convolved with
    ``in2`` reversed and conjugated. Parameters are those of :func:`convolve`.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import correlate
    >>> correlate(jnp.array([1., 2., 3., 2., 1.]), jnp.array([1., 3., 2.]))
    Array([ 2.,  7., 13., 15., 11.,  5.,  1.], dtype=float32)
    """
    check_arraylike("correlate", in1, in2)
    return convolve(in1, _flip_conj(_jnp().asarray(in2)), mode, method, precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
               precision=None):
    """Two-dimensional convolution (SciPy's ``convolve2d``).

    Parameters
    ----------
    in1, in2 : array_like
        2-D inputs.
    mode : {'full', 'same', 'valid'}
        As in :func:`convolve`.
    boundary, fillvalue
        Only SciPy's defaults (``'fill'``, ``0``) are supported, as in JAX.
    precision : optional
        :class:`xjax.lax.Precision` of the convolution.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import convolve2d
    >>> convolve2d(jnp.array([[1., 2.], [3., 4.]]), jnp.ones((2, 2)), mode='valid')
    Array([[10.]], dtype=float32)
    """
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _direct(in1, in2, mode, precision)


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0,
                precision=None):
    """Two-dimensional cross-correlation (SciPy's ``correlate2d``).

    Unlike :func:`correlate`, and as in SciPy, ``'same'`` takes the window starting at
    ``in2.shape // 2`` of the full correlation (not ``(in2.shape - 1) // 2``), and in
    ``'valid'`` mode with ``in2`` the larger input the result is conjugated.

    Parameters are those of :func:`convolve2d`.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import correlate2d
    >>> x = jnp.array([[2., 1., 3.], [1., 3., 1.], [4., 1., 2.]])
    >>> correlate2d(x, jnp.array([[1., 3.], [4., 2.]]), mode='valid')
    Array([[15., 24.],
           [28., 14.]], dtype=float32)
    """
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = _checked_pair(in1, in2, mode)
    s1, s2 = _shape(in1), _shape(in2)
    kernel = _flip_conj(in2)
    if mode == "same":
        starts, sizes = [b // 2 for b in s2], list(s1)
    else:
        starts, sizes = _mode_window(s1, s2, mode)
    out = _full_conv_window(in1, kernel, starts, sizes, precision)
    in2_larger = all(a <= b for a, b in zip(s1, s2)) and s1 != s2
    if mode == "valid" and in2_larger and _is_complex(out):
        out = _jnp().conj(out)  # SciPy correlates the swapped pair and only reverses it
    return out


# --------------------------------------------------------------------------------------------
# detrending


def _remove_line(segment, npts: int):
    """``segment`` (samples along axis 0) minus its least-squares line."""
    jnp = _jnp()
    if npts == 1:
        return jnp.zeros_like(segment)  # a line fits one point exactly
    t = np.arange(npts, dtype=np.float64)
    t -= t.mean()  # with centred times the slope and the mean decouple
    real_dtype = np.finfo(aval_of(segment).dtype).dtype
    t_col = jnp.asarray(t.astype(real_dtype).reshape((npts,) + (1,) * (segment.ndim - 1)))
    centred = segment - jnp.mean(segment, axis=0, keepdims=True)
    slope = jnp.sum(t_col * centred, axis=0, keepdims=True) * (1.0 / float(np.sum(t * t)))
    return centred - slope * t_col


def detrend(data, axis: int = -1, type: str = "linear", bp=0, overwrite_data=None):
    """Remove a constant or (piecewise) linear least-squares trend along ``axis``.

    Parameters
    ----------
    data : array_like
    axis : int
        Axis to detrend along (default last).
    type : {'linear', 'constant'}
        ``'constant'`` removes the mean; ``'linear'`` the least-squares line, fitted
        separately on each piece between breakpoints.
    bp : int or sequence of int
        Static breakpoints for ``'linear'``, in ``[0, data.shape[axis]]``.
    overwrite_data : None
        Not supported (must be None), as in JAX.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.signal import detrend
    >>> jnp.round(detrend(jnp.array([1., 4., 8., 8., 9.])), 4) + 0.
    Array([-1.,  0.,  2.,  0., -1.], dtype=float32)
    >>> detrend(jnp.array([1., 4., 8., 8., 9.]), type='constant')
    Array([-5., -2.,  2.,  2.,  3.], dtype=float32)
    """
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    jnp = _jnp()
    check_arraylike("detrend", data)
    (data,) = promote_dtypes_inexact(data)
    if type == "constant":
        return data - jnp.mean(data, axis=axis, keepdims=True)
    axis = canonicalize_axis(axis, len(_shape(data)))
    n = _shape(data)[axis]
    edges = np.unique(np.concatenate([[0], np.atleast_1d(np.asarray(bp, dtype=int)), [n]]))
    if edges[0] < 0 or edges[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data "
                         "along given axis.")
    moved = jnp.moveaxis(data, axis, 0)
    pieces = [_remove_line(moved[lo:hi], int(hi - lo))
              for lo, hi in zip(edges[:-1], edges[1:])]
    return jnp.moveaxis(jnp.concatenate(pieces, axis=0), 0, axis)
