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

from xjax._src.scipy.signal import (  # noqa: F401
    convolve as convolve, convolve2d as convolve2d, correlate as correlate,
    correlate2d as correlate2d, detrend as detrend, fftconvolve as fftconvolve,
)
from xjax._src.scipy._signal_spectral import (  # noqa: F401
    csd as csd, istft as istft, stft as stft, welch as welch,
)
from xjax._src.scipy.signal import __all__ as __all__  # noqa: F401
