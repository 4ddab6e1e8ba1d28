"""Resampling of images by separable kernels: ``resize`` and ``scale_and_translate``.

Every spatial dimension is resampled by one dense weight matrix ``W[in, out]`` computed with
``xjax.numpy`` operations (so scale and translation may be traced and differentiated), and the
image is contracted with all of them in one ``einsum``. Pixels are half-centred: input pixel
``j`` sits at ``j + 0.5``; output pixel ``i`` samples the input at ``(i + 0.5 - t) / s``.
When downsampling with ``antialias`` the kernel is stretched by ``1 / s`` (a low-pass filter).
"""

from __future__ import annotations

import enum
import math
import string

import numpy as np

from xjax._src import numpy as jnp
from xjax._src.transformations.jit import jit
from xjax._src.lax import Precision
from xjax._src.numpy._promotion import (canonicalize_axis, canonicalize_shape,
                                        promote_dtypes_inexact)

# Column sums at or below this are treated as "no input pixel contributes" (weights 0).
_MIN_WEIGHT_SUM = 1000.0 * float(np.finfo(np.float32).eps)


class ResizeMethod(enum.Enum):
    """Image resize method (``jax.image.ResizeMethod``).

    ``NEAREST`` (nearest neighbour), ``LINEAR`` (triangle kernel), ``LANCZOS3`` and
    ``LANCZOS5`` (Lanczos windowed sinc of radius 3 and 5), ``CUBIC`` (Keys cubic, a = -0.5),
    ``CUBIC_PYTORCH`` (as ``CUBIC`` with antialiasing; without it, PyTorch's a = -0.75 kernel
    with edge pixels repeated), ``AREA`` (average over each output pixel's footprint).

    Examples
    --------
    >>> import xjax
    >>> xjax.image.ResizeMethod.from_string("bilinear")
    <ResizeMethod.LINEAR: 1>
    """

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a string names; ValueError for an unknown name."""
        method = _NAMES.get(s) if isinstance(s, str) else None
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


def _as_method(method) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if not isinstance(method, ResizeMethod):
        # JAX fails an assertion here; keep its class, with a message that says why.
        raise AssertionError(f"method must be a ResizeMethod or a string, got {method!r}")
    return method


# -- kernels: functions of the distance x >= 0 (in input pixels, after any stretching) --


def _triangle(x):
    return jnp.maximum(0, 1 - x)


def _lanczos(radius):
    def kernel(x):
        # sinc(x) sinc(x / radius); near 0 the limit 1, with a divisor kept away from 0 so
        # that gradients stay finite.
        near_zero = x <= 1e-3
        safe = jnp.where(near_zero, 1.0, x)
        value = radius * jnp.sin(np.pi * safe) * jnp.sin(np.pi * safe / radius)
        value = value / (np.pi ** 2 * safe ** 2)
        return jnp.where(x > radius, 0.0, jnp.where(near_zero, 1.0, value))
    return kernel


def _cubic(a):
    """Keys' cubic convolution kernel with parameter ``a`` (support [0, 2))."""
    def kernel(x):
        inner = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0             # |x| < 1
        outer = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a      # 1 <= |x| < 2
        return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, outer, inner))
    return kernel


_AREA = "area"

# method -> (radius, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, _AREA),
}


def _normalize_columns(weights):
    """Each output pixel's weights divided by their sum (0 where the sum is ~0)."""
    total = jnp.sum(weights, axis=0, keepdims=True)
    divisor = jnp.where(total != 0, total, 1)
    return jnp.where(jnp.abs(total) > _MIN_WEIGHT_SUM, weights / divisor, 0)


def _fold_edges(weights, in_size: int, pad: int):
    """Rows for the ``pad`` virtual pixels beyond each edge added onto the edge pixels."""
    if in_size == 1:
        return jnp.sum(weights, axis=0, keepdims=True)
    first = jnp.sum(weights[:pad + 1], axis=0, keepdims=True)
    last = jnp.sum(weights[pad + in_size - 1:], axis=0, keepdims=True)
    return jnp.concatenate([first, weights[pad + 1:pad + in_size - 1], last], axis=0)


def _weight_matrix(in_size: int, out_size: int, scale, translation, kernel,
                   antialias: bool, edge_padding: bool, radius: int):
    """The ``[in_size, out_size]`` resampling matrix of one dimension."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    stretch = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    out_pos = jnp.arange(out_size, dtype=dtype)
    # input coordinate (in pixel indices) of each output pixel's centre
    centres = (out_pos + 0.5) * inv_scale - translation * inv_scale - 0.5

    if kernel is _AREA:
        # overlap of output pixel i's footprint [lo_i, lo_i + 1/s) with input pixel [j, j + 1)
        lo = out_pos * inv_scale - translation * inv_scale
        hi = lo + inv_scale
        in_lo = jnp.arange(in_size, dtype=dtype)[:, None]
        weights = jnp.maximum(0.0, jnp.minimum(hi[None, :], in_lo + 1.0)
                              - jnp.maximum(lo[None, :], in_lo))
    else:
        if edge_padding:
            # Only reachable without antialiasing (CUBIC_PYTORCH), so the pad is the radius.
            pad = radius if not antialias else math.ceil(
                radius * max(1.0 / float(scale), 1.0))
        else:
            pad = 0
        in_pos = jnp.arange(-pad, in_size + pad, dtype=dtype) if pad else jnp.arange(
            in_size, dtype=dtype)
        weights = kernel(jnp.abs(centres[None, :] - in_pos[:, None]) / stretch)
        if edge_padding:
            return _normalize_columns(_fold_edges(weights, in_size, pad))

    weights = _normalize_columns(weights)
    # an output pixel whose centre falls outside the input image is 0
    inside = (centres >= -0.5) & (centres <= in_size - 0.5)
    return jnp.where(inside[None, :], weights, 0)


def _scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                         antialias: bool, precision):
    if not spatial_dims:
        return image
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method is ResizeMethod.CUBIC_PYTORCH
    ndim = image.ndim
    letters = string.ascii_letters
    if ndim + len(spatial_dims) > len(letters):
        raise ValueError(f"images of rank {ndim} are too large to resample")
    image_names = list(letters[:ndim])
    out_names = list(image_names)
    operands, names = [image], ["".join(image_names)]
    for i, d in enumerate(spatial_dims):
        d = canonicalize_axis(d, ndim)
        weights = _weight_matrix(image.shape[d], shape[d], scale[i], translation[i], kernel,
                                 antialias, edge_padding, radius)
        new = letters[ndim + i]
        operands.append(weights.astype(image.dtype))
        names.append(image_names[d] + new)
        out_names[d] = new
    subscripts = ",".join(names) + "->" + "".join(out_names)
    return jnp.einsum(subscripts, *operands, precision=precision)


def _check_rank(shape, image):
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias: bool = True, precision=Precision.HIGHEST):
    """Resample ``image`` under a scale and translation of its ``spatial_dims``.

    Input location ``x`` of dimension ``spatial_dims[k]`` moves to
    ``x * scale[k] + translation[k]`` in the output (pixel centres at ``index + 0.5``); the
    output samples the input at the inverse warp, and output pixels that map outside the
    input are zero.

    Parameters
    ----------
    image : array_like
        The image; integer and bool images are promoted to the default float dtype.
    shape : sequence of int
        The output shape, one entry per dimension of ``image``.
    spatial_dims : sequence of int
        The K dimensions that ``scale`` and ``translation`` apply to.
    scale, translation : array_like of shape [K]
        Per spatial dimension; may be traced (and differentiated).
    method : str or ResizeMethod
        Any method of :class:`ResizeMethod` but ``NEAREST``.
    antialias : bool
        Low-pass filter when downsampling (no effect when upsampling).
    precision : lax.Precision
        Precision of the contraction on accelerators.

    Returns
    -------
    Array
        Of ``shape`` and ``image``'s (inexact) dtype.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> x = jnp.array([1., 2., 3., 4.])
    >>> xjax.image.scale_and_translate(x, (4,), (0,), jnp.array([1.]), jnp.array([1.]),
    ...                                "linear")
    Array([0., 1., 2., 3.], dtype=float32)
    """
    shape = canonicalize_shape(shape)
    _check_rank(shape, image)
    method = _as_method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    (image,) = promote_dtypes_inexact(image)
    scale, translation = promote_dtypes_inexact(scale, translation)
    if len(spatial_dims) != len(scale) or len(spatial_dims) != len(translation):
        raise AssertionError("scale and translation must have one entry per spatial "
                             f"dimension: spatial_dims={tuple(spatial_dims)}, scale of "
                             f"length {len(scale)}, translation of length {len(translation)}")
    return _scale_and_translate(image, shape, tuple(spatial_dims), scale, translation, method,
                                antialias, precision)


def _nearest_indices(in_size: int, out_size: int) -> np.ndarray:
    """Input index of each output pixel: floor((i + 0.5) * in / out), in float32 as JAX.

    JAX writes ``(i + 0.5) * in / out``, which XLA's simplifier folds to
    ``(i + 0.5) * (in * (1 / out))`` in float32; that rounding decides ties such as
    ``in=10, out=25``, so the same steps are taken here.
    """
    f32 = np.float32
    ratio = f32(in_size) * (f32(1) / f32(max(out_size, 1)))
    pos = (np.arange(out_size, dtype=f32) + f32(0.5)) * ratio
    return np.clip(np.floor(pos), 0, max(in_size - 1, 0)).astype(np.int32)


@jit(static_argnums=(1, 2, 3, 4))
def _resize(image, shape, method, antialias, precision):
    _check_rank(shape, image)
    method = _as_method(method)
    if method is ResizeMethod.NEAREST:
        for d, (m, n) in enumerate(zip(image.shape, shape, strict=True)):
            if m != n:
                index = [slice(None)] * image.ndim
                index[d] = _nearest_indices(m, n)
                image = image[tuple(index)]
        return image
    (image,) = promote_dtypes_inexact(image)
    # Identity dimensions are skipped: every kernel interpolates, so they would not change.
    dims = tuple(d for d, (m, n) in enumerate(zip(image.shape, shape, strict=True)) if m != n)
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _scale_and_translate(image, shape, dims, scale, [0.0] * len(dims), method,
                                antialias, precision)


def resize(image, shape, method, antialias: bool = True, precision=Precision.HIGHEST):
    """Resize ``image`` to ``shape`` (``jax.image.resize``).

    Every dimension whose size changes is resampled (batch and channel dimensions are those
    left the same size); pixel centres are at ``index + 0.5``.

    Parameters
    ----------
    image : array_like
        The image.
    shape : sequence of int
        The output shape, one entry per dimension of ``image``.
    method : str or ResizeMethod
        ``"nearest"``; ``"linear"`` (``"bilinear"``, ``"trilinear"``, ``"triangle"``);
        ``"lanczos3"``; ``"lanczos5"``; ``"cubic"`` (``"bicubic"``, ``"tricubic"``);
        ``"cubic-pytorch"``; ``"area"``; or a :class:`ResizeMethod`.
    antialias : bool
        Low-pass filter when downsampling (no effect when upsampling or for ``NEAREST``).
    precision : lax.Precision
        Precision of the contraction on accelerators (ignored for ``NEAREST``).

    Returns
    -------
    Array
        Of ``shape``; ``NEAREST`` keeps ``image``'s dtype, other methods promote integer and
        bool images to the default float dtype.

    Examples
    --------
    >>> import xjax, xjax.numpy as jnp
    >>> xjax.image.resize(jnp.array([0., 1.]), (4,), "linear")
    Array([0.  , 0.25, 0.75, 1.  ], dtype=float32)
    >>> xjax.image.resize(jnp.array([[1, 2]]), (2, 4), "nearest")
    Array([[1, 1, 2, 2],
           [1, 1, 2, 2]], dtype=int32)
    """
    return _resize(image, canonicalize_shape(shape), method, antialias, precision)
