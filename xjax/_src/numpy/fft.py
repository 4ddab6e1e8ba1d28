"""``xjax.numpy.fft``: NumPy's discrete Fourier transforms, composed from ``lax.fft``.

As in JAX, real inputs of complex transforms are converted to complex64 (complex128 with
x64), ``s`` crops or zero-pads each axis, and transforms over more than three axes are split
into transforms of at most three.

>>> import xjax.numpy as jnp
>>> jnp.fft.fft(jnp.array([1., 0., 0., 0.]))
Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
"""

from __future__ import annotations

import operator

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.lax.fft import FftType
from xjax._src.numpy._promotion import aval_of, check_arraylike, to_jax

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _jnp():
    import xjax._src.numpy as jnp  # numpy imports this module
    return jnp


def _norm_factor(s, func_name: str, norm, dtype):
    """The factor ``norm`` multiplies the unnormalized ('backward') transform by."""
    size = float(np.prod(s)) if len(s) else 1.0
    inverse = func_name.startswith("i")
    if norm == "ortho":
        factor = np.sqrt(size) if inverse else 1 / np.sqrt(size)
    elif norm == "forward":
        factor = size if inverse else 1 / size
    else:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         '"forward".')
    return np.asarray(factor, dtypes.to_inexact_dtype(dtype))


def _fft_core(func_name: str, fft_type: FftType, a, s, axes, norm):
    jnp = _jnp()
    full_name = f"jax.numpy.fft.{func_name}"
    check_arraylike(full_name, a)
    arr = to_jax(a)
    ndim = len(aval_of(arr).shape)
    if s is not None:
        s = tuple(map(operator.index, s))
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if orig_axes is not None:  # work on trailing axes, as lax.fft does
        axes = tuple(range(ndim - len(axes), ndim))
        arr = jnp.moveaxis(arr, orig_axes, axes)
    shape = aval_of(arr).shape
    if s is not None:
        in_s = list(shape)
        for axis, n in zip(axes, s, strict=True):
            in_s[axis] = n
        if fft_type == FftType.IRFFT:
            in_s[-1] = in_s[-1] // 2 + 1
        arr = arr[tuple(slice(n) for n in in_s)]
        arr = jnp.pad(arr, [(0, n - m) for n, m in zip(in_s, aval_of(arr).shape, strict=True)])
    elif fft_type == FftType.IRFFT:
        s = [shape[axis] for axis in axes[:-1]]
        if axes:
            s += [max(0, 2 * (shape[axes[-1]] - 1))]
    else:
        s = [shape[axis] for axis in axes]
    out = _fft_nd(arr, fft_type, tuple(s))
    if norm is not None and norm != "backward":
        out = out * _norm_factor(s, func_name, norm, aval_of(out).dtype)
    if orig_axes is not None:
        out = jnp.moveaxis(out, axes, orig_axes)
    return out


def _fft_nd(arr, fft_type: FftType, s: tuple):
    """lax.fft over the trailing ``len(s)`` axes; more than three axes in several steps."""
    if len(s) <= 3:
        return lax.fft(arr, fft_type, s)
    jnp = _jnp()
    ndim = len(aval_of(arr).shape)
    n = 2 if len(s) == 4 else 3
    src = tuple(range(ndim - len(s), ndim - n))
    dst = tuple(range(ndim - len(s) + n, ndim))
    if fft_type in (FftType.RFFT, FftType.FFT):
        arr = lax.fft(arr, fft_type, s[-n:])
        arr = jnp.moveaxis(arr, src, dst)
        arr = _fft_nd(arr, FftType.FFT, s[:-n])
        return jnp.moveaxis(arr, dst, src)
    arr = jnp.moveaxis(arr, src, dst)
    arr = _fft_nd(arr, FftType.IFFT, s[:-n])
    arr = jnp.moveaxis(arr, dst, src)
    return lax.fft(arr, fft_type, s[-n:])


def _check_1d_axis(func_name: str, axis) -> None:
    if isinstance(axis, (list, tuple)):
        full_name = f"jax.numpy.fft.{func_name}"
        raise ValueError(f"{full_name} does not support multiple axes. Please use "
                         f"{full_name}n. Got axis = {axis!r}.")


def _fft_1d(func_name, fft_type, a, n, axis, norm):
    _check_1d_axis(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n],
                     None if axis is None else [axis], norm)


def _fft_2d(func_name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = "
                         f"{axes!r}.")
    return _fft_core(func_name, fft_type, a, s, axes, norm)


def fft(a, n=None, axis: int = -1, norm=None):
    """One-dimensional discrete Fourier transform (NumPy's ``fft.fft``).

    Parameters
    ----------
    a : array_like
    n : int, optional
        Length of the transform: ``a`` is cropped or zero-padded along ``axis``.
    axis : int
    norm : {None, "backward", "ortho", "forward"}

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.fft.fft(jnp.array([1., 2.]))
    Array([ 3.+0.j, -1.+0.j], dtype=complex64)
    """
    return _fft_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis: int = -1, norm=None):
    """Inverse of :func:`fft`."""
    return _fft_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis: int = -1, norm=None):
    """Transform of a real input: the ``n // 2 + 1`` non-negative frequencies."""
    return _fft_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis: int = -1, norm=None):
    """Inverse of :func:`rfft`: a real output of length ``n`` (default
    ``2 * (a.shape[axis] - 1)``)."""
    return _fft_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis: int = -1, norm=None):
    """Transform of a signal with Hermitian symmetry given by its first half: a real
    spectrum of length ``n`` (default ``2 * (a.shape[axis] - 1)``)."""
    _check_1d_axis("hfft", axis)
    conj_a = _jnp().conj(a)
    full = (aval_of(conj_a).shape[axis] - 1) * 2 if n is None else n
    return _fft_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * full


def ihfft(a, n=None, axis: int = -1, norm=None):
    """Inverse of :func:`hfft`."""
    _check_1d_axis("ihfft", axis)
    arr = to_jax(a)
    full = aval_of(arr).shape[axis] if n is None else n
    out = _fft_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return _jnp().conj(out) * (1 / full)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional discrete Fourier transform."""
    return _fft_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """Inverse of :func:`fft2`."""
    return _fft_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """Two-dimensional transform of a real input (half spectrum along the last axis)."""
    return _fft_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """Inverse of :func:`rfft2`."""
    return _fft_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a, s=None, axes=None, norm=None):
    """N-dimensional discrete Fourier transform (all axes by default).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.fft.fftn(jnp.ones((2, 2)))
    Array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]], dtype=complex64)
    """
    return _fft_core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """Inverse of :func:`fftn`."""
    return _fft_core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """N-dimensional transform of a real input (half spectrum along the last axis)."""
    return _fft_core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """Inverse of :func:`rfftn`."""
    return _fft_core("irfftn", FftType.IRFFT, a, s, axes, norm)


def _check_freq_args(func_name: str, n, d) -> None:
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{func_name} only takes an int. "
                         f"Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{func_name} only takes a single "
                         f"value. Got d = {list(d)}.")


def fftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of :func:`fft`: ``[0, 1, ..., n//2 - 1 (or n//2), -n//2, ..., -1]
    / (d * n)``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> jnp.fft.fftfreq(4)
    Array([ 0.  ,  0.25, -0.5 , -0.25], dtype=float32)
    """
    jnp = _jnp()
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtype or dtypes.default_float_dtype()
    dtype = dtypes.finfo(dtypes.to_inexact_dtype(out_dtype)).dtype
    i = jnp.arange(n, dtype=dtype)
    k = (i + n // 2) % n - n // 2
    return (k.astype(dtype) / jnp.array(d * n, dtype=dtype)).astype(out_dtype)


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """Sample frequencies of :func:`rfft`: ``[0, 1, ..., n//2] / (d * n)``."""
    jnp = _jnp()
    _check_freq_args("rfftfreq", n, d)
    dtype = dtype or dtypes.default_float_dtype()
    k = jnp.arange(0, n // 2 + 1, dtype=dtype)
    return k / jnp.array(d * n, dtype=dtype)


def _shifts(x, axes, sign: int):
    shape = aval_of(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
        return [sign * (n // 2) for n in shape], axes
    if isinstance(axes, int):
        return sign * (shape[axes] // 2), axes
    return [sign * (shape[ax] // 2) for ax in axes], axes


def fftshift(x, axes=None):
    """Move the zero frequency to the centre (a roll by half of each axis)."""
    check_arraylike("fftshift", x)
    x = to_jax(x)
    shift, axes = _shifts(x, axes, 1)
    return _jnp().roll(x, shift, axes)


def ifftshift(x, axes=None):
    """Inverse of :func:`fftshift`."""
    check_arraylike("ifftshift", x)
    x = to_jax(x)
    shift, axes = _shifts(x, axes, -1)
    return _jnp().roll(x, shift, axes)

