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

from xjax._src.scipy.fft import (  # noqa: F401
    dct as dct, dctn as dctn, idct as idct, idctn as idctn,
)
from xjax._src.scipy.fft import __all__ as __all__  # noqa: F401
