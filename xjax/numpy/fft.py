"""``xjax.numpy.fft``: NumPy's discrete Fourier transforms, composed from ``lax.fft``.

As in JAX, real inputs of complex transforms are converted to complex64 (complex128 with
x64), ``s`` crops or zero-pads each axis, and transforms over more than three axes are split
into transforms of at most three.

>>> import xjax.numpy as jnp
>>> jnp.fft.fft(jnp.array([1., 0., 0., 0.]))
Array([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j], dtype=complex64)
"""

from xjax._src.numpy.fft import (  # noqa: F401
    fft as fft, fft2 as fft2, fftfreq as fftfreq, fftn as fftn, fftshift as fftshift,
    hfft as hfft, ifft as ifft, ifft2 as ifft2, ifftn as ifftn, ifftshift as ifftshift,
    ihfft as ihfft, irfft as irfft, irfft2 as irfft2, irfftn as irfftn, rfft as rfft,
    rfft2 as rfft2, rfftfreq as rfftfreq, rfftn as rfftn,
)
from xjax._src.numpy.fft import __all__ as __all__  # noqa: F401
