"""The ``fft`` primitive: discrete Fourier transforms over the trailing 1 to 3 axes.

Lowered to XLA's own ``stablehlo.fft`` (DUCC on the CPU). Eagerly, small transforms run
NumPy's pocketfft; large ones run XLA's FFT compiled alone (see ``_EAGER_XLA_MIN_SIZE``).
Spec: https://openxla.org/stablehlo/spec#fft
"""

from __future__ import annotations

import enum
import math

import numpy as np

from xjax._src.core import dtypes
from xjax._src.core.avals import ShapedArray
from xjax._src.core.primitive import Primitive
from xjax._src.lax.ad_helpers import linear_jvp_of
from xjax._src.lax.ad_rules import get_aval, transpose_by_parts
from xjax._src.lax.batch_rules import move_axis
from xjax._src.lax.operands import to_operand
from xjax._src.lowering.stablehlo import ModuleBuilder, aval_type, i64_array, tensor_type
from xjax._src.runtime import default_client
from xjax._src.lax.convert import convert_element_type
from xjax._src.lax.elementwise import conj, mul
from xjax._src.lax.shape import broadcast_in_dim

__all__ = ["FftType", "fft", "fft_p"]


class FftType(enum.IntEnum):
    """Which transform ``fft`` computes: complex forward/inverse, real-to-complex forward,
    complex-to-real inverse."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __repr__(self) -> str:  # jaxprs print the number, as JAX's do
        return str(int(self))

    __str__ = __repr__


_TYPE_NAMES = {**{t.name: t for t in FftType}, **{t.name.lower(): t for t in FftType}}


def _fft_type(fft_type) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        if fft_type not in _TYPE_NAMES:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        return _TYPE_NAMES[fft_type]
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _complex_dtype(dtype) -> np.dtype:
    return np.dtype(np.complex128 if np.dtype(dtype) == np.float64 else np.complex64)


def _real_dtype(dtype) -> np.dtype:
    return np.dtype(np.float64 if np.dtype(dtype) == np.complex128 else np.float32)


def _fft_abstract_eval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if k > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many input "
                         f"dimensions as fft_lengths {fft_lengths}.")
    minor = tuple(x.shape[x.ndim - k:])
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if minor != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must be equal to "
                             f"fft_lengths {fft_lengths}")
        shape = x.shape[:x.ndim - k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, _complex_dtype(x.dtype))
    if not dtypes.is_complex(x.dtype):
        raise ValueError(f"{fft_type.name} input must be complex64 or complex128, got "
                         f"{x.dtype}")
    if fft_type == FftType.IRFFT:
        if minor[:-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must be equal to "
                             f"all except the last fft_length, got fft_lengths={fft_lengths}")
        if minor[-1] != fft_lengths[-1] // 2 + 1:
            raise ValueError(f"IRFFT requires innermost dimension to be compatible with "
                             f"fft_length[-1]/2+1. Got: {minor[-1]} but fft_length is "
                             f"{fft_lengths[-1]}.")
        return ShapedArray(x.shape[:x.ndim - k] + fft_lengths, _real_dtype(x.dtype))
    if minor != fft_lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must be equal to "
                         f"fft_lengths {fft_lengths}")
    return ShapedArray(x.shape, x.dtype)


# Eager transforms of at least this many elements run XLA's FFT (DUCC, vectorized and
# threaded) compiled alone instead of NumPy's: for a complex64 FFT of 2**20 points NumPy 2.4
# took 74-110 ms here, XLA 22-30 ms (JAX's own time). Below it, NumPy avoids a compile.
_EAGER_XLA_MIN_SIZE = 1 << 15


def _fft_impl(x, *, fft_type, fft_lengths):
    x = np.asarray(x)
    out_aval = _fft_abstract_eval(ShapedArray(x.shape, x.dtype), fft_type=fft_type,
                                  fft_lengths=fft_lengths)
    if x.size >= _EAGER_XLA_MIN_SIZE:
        return _xla_fft(x, fft_type, fft_lengths, out_aval)
    return numpy_fft(x, fft_type, fft_lengths).astype(out_aval.dtype, copy=False)


def numpy_fft(x, fft_type, fft_lengths):
    """The transform with NumPy's pocketfft (the eager kernel of small transforms)."""
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    if fft_type == FftType.FFT:
        return np.fft.fftn(x, axes=axes)
    if fft_type == FftType.IFFT:
        return np.fft.ifftn(x, axes=axes)
    if fft_type == FftType.RFFT:
        return np.fft.rfftn(x, axes=axes)
    return np.fft.irfftn(x, s=fft_lengths, axes=axes)


_xla_executables: dict = {}


def _xla_fft(x, fft_type, fft_lengths, out_aval):
    """Run the transform with XLA: a one-operation module compiled once per signature."""
    key = (x.shape, x.dtype, fft_type, fft_lengths)
    executable = _xla_executables.get(key)
    if executable is None:
        module = ModuleBuilder("xjax_eager_fft")
        fb = module.function("main", [tensor_type(x.shape, x.dtype)], "public")
        fb.ret([_emit_fft(fb, fb.args[0], fft_type, fft_lengths, aval_type(out_aval))])
        executable = _xla_executables[key] = default_client().compile(module.text())
    (buffer,) = executable.execute([np.ascontiguousarray(x)])
    return np.asarray(buffer.to_numpy())


def _emit_fft(builder, x, fft_type, fft_lengths, out_type):
    return builder.op1("stablehlo.fft", [x], out_type,
                       {"fft_type": f"#stablehlo<fft_type {fft_type.name}>",
                        "fft_length": i64_array(fft_lengths)})


def _fft_lower(ctx, x, *, fft_type, fft_lengths):
    return _emit_fft(ctx.builder, x, fft_type, fft_lengths, aval_type(ctx.avals_out[0]))


# -- transposes (the pairing of cotangents is Re(sum(a * b)), as for every complex rule) --

def _fft_transpose(ct, x, *, fft_type, fft_lengths):
    if fft_type == FftType.RFFT:
        return _rfft_transpose(ct, fft_lengths)
    if fft_type == FftType.IRFFT:
        return _irfft_transpose(ct, fft_lengths)
    # The DFT matrix is symmetric: the complex FFT and IFFT are their own transposes.
    return fft_p.bind(ct, fft_type=fft_type, fft_lengths=fft_lengths)


def _last_axis_weights(m: int, n: int, dtype, inner: float, edges: float):
    """Weights along the half-spectrum axis of length ``m`` for a real length ``n``: ``edges``
    at the zero frequency (and at n/2 when n is even), ``inner`` elsewhere."""
    w = np.full((m,), inner, dtype)
    w[0] = edges
    if n % 2 == 0:
        w[-1] = edges
    return w


def _rfft_transpose(ct, fft_lengths):
    # ct_x[n] = Re(sum_k ct[k] w^(-k.n)) over the half spectrum = N * irfft(conj(ct) * mask),
    # where irfft counts the inner frequencies twice (mask 1/2) and the edges once.
    ct_aval = get_aval(ct)
    n = fft_lengths[-1]
    scale = math.prod(fft_lengths)
    weights = _last_axis_weights(ct_aval.shape[-1], n, _real_dtype(ct_aval.dtype),
                                 0.5 * scale, 1.0 * scale)
    weighted = mul(conj(ct), _along_last_axis(weights, ct_aval))
    return fft_p.bind(weighted, fft_type=FftType.IRFFT, fft_lengths=fft_lengths)


def _irfft_transpose(ct, fft_lengths):
    # irfft(z)[n] = (1/N) Re(sum_k m_k z_k w^(k.n)), m_k = 1 at the edges of the last axis and
    # 2 inside; so ct_z[k] = m_k conj(rfft(ct))[k] / N.
    spectrum = fft_p.bind(ct, fft_type=FftType.RFFT, fft_lengths=fft_lengths)
    n = fft_lengths[-1]
    scale = math.prod(fft_lengths)
    weights = _last_axis_weights(n // 2 + 1, n, _real_dtype(get_aval(spectrum).dtype),
                                 2.0 / scale, 1.0 / scale)
    return mul(conj(spectrum), _along_last_axis(weights, get_aval(spectrum)))


def _along_last_axis(weights, aval):
    """The 1-D ``weights`` as an array of ``aval``'s shape and dtype, varying along its
    last axis."""
    weights = to_operand(np.asarray(weights, aval.dtype))
    return broadcast_in_dim(weights, aval.shape, (len(aval.shape) - 1,))


def _fft_batch(args, dims, *, fft_type, fft_lengths):
    (x,), (dim,) = args, dims
    return fft_p.bind(move_axis(x, dim, 0), fft_type=fft_type, fft_lengths=fft_lengths), 0


fft_p = Primitive("fft", abstract_eval=_fft_abstract_eval, impl=_fft_impl, lower=_fft_lower,
                  jvp=linear_jvp_of("fft"), transpose=transpose_by_parts(_fft_transpose),
                  batch=_fft_batch)


def fft(x, fft_type, fft_lengths):
    """Discrete Fourier transform over the trailing ``len(fft_lengths)`` axes of ``x``.

    Parameters
    ----------
    x : array
        Real input for ``RFFT``; otherwise complex (real inputs are converted).
    fft_type : FftType or str
        ``FFT``, ``IFFT`` (complex to complex), ``RFFT`` (real to half spectrum) or
        ``IRFFT`` (half spectrum to real).
    fft_lengths : sequence of int
        The transform's length along each of the 0 to 3 trailing axes.

    Examples
    --------
    >>> from xjax import lax
    >>> import xjax.numpy as jnp
    >>> lax.fft(jnp.array([1., 0., 0., 0.]), "fft", (4,))
    Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
    """
    typ = _fft_type(fft_type)
    x = to_operand(x)
    dtype = x.aval.dtype
    if typ == FftType.RFFT:
        if dtypes.is_complex(dtype):
            raise ValueError("only real valued inputs supported for rfft")
        x = convert_element_type(x, dtypes.to_inexact_dtype(dtype))
    else:
        x = convert_element_type(x, dtypes.to_complex_dtype(dtype))
    fft_lengths = tuple(int(n) for n in fft_lengths)
    if not fft_lengths:  # XLA has no rank-0 transform
        return x
    return fft_p.bind(x, fft_type=typ, fft_lengths=fft_lengths)
