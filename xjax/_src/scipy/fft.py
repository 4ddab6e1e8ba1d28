"""``xjax.scipy.fft``: discrete cosine transforms (JAX's ``jax.scipy.fft``).

As in JAX, only the type-2 DCT (and its inverse) is provided; other types raise
NotImplementedError. ``norm`` is ``None``/``'backward'`` (SciPy's default scaling) or
``'ortho'``. Complex inputs are transformed as ``dct(x.real) + 1j * dct(x.imag)``.

The transform uses Makhoul's N-point FFT algorithm: the input is reordered (even-indexed
samples, then the odd-indexed ones reversed) so that one complex FFT and a quarter-sample
phase twiddle give the DCT; the inverse undoes the twiddle and the reordering.

>>> import xjax.numpy as jnp
>>> from xjax.scipy.fft import dct, idct
>>> x = jnp.array([1., 2., 3., 4.])
>>> jnp.allclose(idct(dct(x)), x, atol=1e-6)
Array(True, dtype=bool)
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from xjax._src import lax
from xjax._src.core import dtypes
from xjax._src.numpy._promotion import (aval_of, canonicalize_axis, check_arraylike,
                                        promote_dtypes_inexact)
import xjax._src.numpy as jnp

__all__ = ["dct", "dctn", "idct", "idctn"]

_NORMS = (None, "backward", "ortho")


def _jnp():
    return jnp


def _check_args(func_name: str, x, type, norm):
    """Shared argument checks; returns ``x`` as an inexact array."""
    check_arraylike(func_name, x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm not in _NORMS:
        raise ValueError(f"xjax.scipy.fft.{func_name}: {norm=!r} is not implemented")
    (x,) = promote_dtypes_inexact(x)
    return x


def _is_complex(x) -> bool:
    return dtypes.issubdtype(aval_of(x).dtype, np.complexfloating)


def _resize_axis(x, n, axis: int):
    """Zero-pad or truncate ``x`` to length ``n`` along ``axis`` (``n=None``: unchanged)."""
    if n is None:
        return x
    n = operator.index(n)
    if n < 1:
        raise ValueError(f"invalid number of data points ({n}) specified")
    shape = aval_of(x).shape
    config = [(0, n - shape[axis] if a == axis else 0, 0) for a in range(len(shape))]
    return lax.pad(x, lax.full((), 0, aval_of(x).dtype), config)


def _along(values, axis: int, ndim: int):
    """A 1-D array of per-index values shaped to broadcast along ``axis``."""
    return lax.expand_dims(values, [a for a in range(ndim) if a != axis])


def _twiddle(n: int, axis: int, ndim: int, dtype, sign: int):
    """``exp(sign * i*pi*k / (2n))`` for ``k = 0..n-1`` along ``axis`` (computed in float64
    on the host: it depends only on static sizes)."""
    k = np.arange(n)
    phase = np.exp(sign * 0.5j * np.pi * k / n).astype(dtypes.to_complex_dtype(dtype))
    return _along(_jnp().asarray(phase), axis, ndim)


def _ortho_scale(n: int, axis: int, ndim: int, dtype):
    """Factors taking the unnormalized DCT-II to the orthonormal one."""
    scale = np.full(n, math.sqrt(1.0 / (2 * n)))
    scale[0] = math.sqrt(1.0 / (4 * n))
    return _along(_jnp().asarray(scale.astype(dtype)), axis, ndim)


def _reorder(x, axis: int):
    """Makhoul's reordering: even-indexed samples, then odd-indexed ones reversed."""
    evens = lax.slice_in_dim(x, 0, None, 2, axis)
    odds = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([evens, odds], axis)


def _undo_reorder(v, axis: int):
    """Inverse of :func:`_reorder`: interleave the first half with the reversed second half."""
    jnp = _jnp()
    n = aval_of(v).shape[axis]
    half = (n + 1) // 2
    evens = lax.slice_in_dim(v, 0, half, 1, axis)
    odds = lax.rev(lax.slice_in_dim(v, half, n, 1, axis), (axis,))
    if n % 2:  # one fewer odd sample: pad it so the two halves stack
        odds = _resize_axis(odds, half, axis)
    pairs = jnp.stack([evens, odds], axis=axis + 1)
    shape = list(aval_of(v).shape)
    shape[axis] = 2 * half
    out = jnp.reshape(pairs, shape)
    return lax.slice_in_dim(out, 0, n, 1, axis)


def _dct2_real(x, axis: int, norm):
    """Unbatched-by-type DCT-II of a real array along one (canonical) axis."""
    jnp = _jnp()
    shape = aval_of(x).shape
    n = shape[axis]
    spectrum = jnp.fft.fft(_reorder(x, axis), axis=axis)
    out = 2 * jnp.real(spectrum * _twiddle(n, axis, len(shape), aval_of(x).dtype, -1))
    if norm == "ortho":
        out = out * _ortho_scale(n, axis, len(shape), aval_of(out).dtype)
    return out


def _idct2_real(x, axis: int, norm):
    """Inverse of :func:`_dct2_real` (a scaled DCT-III)."""
    jnp = _jnp()
    shape = aval_of(x).shape
    ndim, n = len(shape), shape[axis]
    if norm == "ortho":
        x = x / _ortho_scale(n, axis, ndim, aval_of(x).dtype)
    # With X the DCT-II of real x and V = fft(reordered x): exp(-i*pi*k/2n) V_k equals
    # (X_k - i X_{n-k}) / 2, where X_n is taken as 0.
    mirrored = lax.concatenate(
        [lax.full_like(lax.slice_in_dim(x, 0, 1, 1, axis), 0),
         lax.rev(lax.slice_in_dim(x, 1, n, 1, axis), (axis,))], axis)
    spectrum = lax.complex(x, -mirrored) * _twiddle(n, axis, ndim, aval_of(x).dtype, 1) * 0.5
    return _undo_reorder(jnp.real(jnp.fft.ifft(spectrum, axis=axis)), axis)


def _split_complex(transform, x, *args):
    if _is_complex(x):
        jnp = _jnp()
        return lax.complex(transform(jnp.real(x), *args), transform(jnp.imag(x), *args))
    return transform(x, *args)


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Discrete cosine transform (type 2) of ``x`` along ``axis``.

    Parameters
    ----------
    x : array_like
        Input (integer inputs compute in the default float dtype).
    type : int
        DCT type; only 2 is implemented.
    n : int, optional
        Transform length: ``x`` is zero-padded or truncated to ``n`` along ``axis``.
    axis : int
        Axis of the transform (default last).
    norm : {None, 'backward', 'ortho'}
        Normalization; ``None`` and ``'backward'`` are SciPy's default.

    Returns
    -------
    Array
        ``y[k] = 2 * sum_j x[j] cos(pi * k * (2j + 1) / (2n))`` (times SciPy's orthonormal
        factors for ``norm='ortho'``).

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.fft import dct
    >>> dct(jnp.array([1., 1., 1.]))
    Array([6., 0., 0.], dtype=float32)
    """
    x = _check_args("dct", x, type, norm)
    axis = canonicalize_axis(axis, len(aval_of(x).shape))
    x = _resize_axis(x, n, axis)
    return _split_complex(_dct2_real, x, axis, norm)


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Inverse of :func:`dct` (type 2) along ``axis``.

    Parameters are those of :func:`dct`; ``idct(dct(x, norm=m), norm=m) == x``.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.fft import idct
    >>> idct(jnp.array([6., 0., 0.]))
    Array([1., 1., 1.], dtype=float32)
    """
    x = _check_args("idct", x, type, norm)
    axis = canonicalize_axis(axis, len(aval_of(x).shape))
    x = _resize_axis(x, n, axis)
    return _split_complex(_idct2_real, x, axis, norm)


def _nd_axes_and_sizes(x, s, axes) -> list:
    """``(axis, length or None)`` pairs for an n-dimensional transform, as JAX pairs them:
    ``axes=None`` means the last ``len(s)`` axes (all axes without ``s``); sizes pair with
    axes in order (extra entries of either are ignored / left unresized)."""
    ndim = len(aval_of(x).shape)
    if s is not None:
        if isinstance(s, Sequence) or hasattr(s, "__iter__"):
            s = [operator.index(v) for v in s]
        else:
            s = [operator.index(s)]
        if len(s) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    elif isinstance(axes, Sequence):
        axes = tuple(canonicalize_axis(a, ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis: {axes}")
    else:
        axes = (canonicalize_axis(axes, ndim),)
    sizes = list(s) if s is not None else []
    sizes += [None] * (len(axes) - len(sizes))
    return list(zip(axes, sizes))


def _nd(func_name: str, one_d, x, type, s, axes, norm):
    x = _check_args(func_name, x, type, norm)
    pairs = _nd_axes_and_sizes(x, s, axes)
    for axis, size in pairs:
        x = _resize_axis(x, size, axis)
    for axis, _ in pairs:  # separable: one 1-D transform per axis
        x = _split_complex(one_d, x, axis, norm)
    return x


def dctn(x, type: int = 2, s: Sequence[int] | None = None,
         axes: Sequence[int] | None = None, norm: str | None = None):
    """Multidimensional DCT (type 2): :func:`dct` along each of ``axes``.

    Parameters
    ----------
    x : array_like
    type : int
        Only 2 is implemented.
    s : int or sequence of int, optional
        Lengths along ``axes`` (zero-padding or truncating).
    axes : int or sequence of int, optional
        Axes to transform; default the last ``len(s)`` axes, or all axes without ``s``.
    norm : {None, 'backward', 'ortho'}

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.fft import dctn
    >>> dctn(jnp.ones((2, 2)))
    Array([[16.,  0.],
           [ 0.,  0.]], dtype=float32)
    """
    return _nd("dctn", _dct2_real, x, type, s, axes, norm)


def idctn(x, type: int = 2, s: Sequence[int] | None = None,
          axes: Sequence[int] | None = None, norm: str | None = None):
    """Multidimensional inverse DCT (type 2): :func:`idct` along each of ``axes``.

    Parameters are those of :func:`dctn`.

    Examples
    --------
    >>> import xjax.numpy as jnp
    >>> from xjax.scipy.fft import idctn
    >>> idctn(jnp.array([[16., 0.], [0., 0.]]))
    Array([[1., 1.],
           [1., 1.]], dtype=float32)
    """
    return _nd("idctn", _idct2_real, x, type, s, axes, norm)
