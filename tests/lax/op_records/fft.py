"""Rule-check records of ``fft``: each transform type over one, two and three trailing axes,
with odd and even lengths (the half spectrum's Nyquist term), and batch axes in front."""

import numpy as np

from xjax import lax
from op_table import COMPLEX, OpRecord

_TOL = 1e-4


def _fft(fft_type, lengths):
    return lambda x: lax.fft(x, fft_type, lengths)


RECORDS = [
    OpRecord("fft", _fft("fft", (8,)), [(3, 8)], COMPLEX, tol=_TOL, name="fft-1d"),
    # a real input is converted to complex by the wrapper
    OpRecord("fft", _fft("fft", (6,)), [(6,)], (np.float32,), tol=_TOL, name="fft-real"),
    OpRecord("fft", _fft("ifft", (5,)), [(2, 5)], COMPLEX, tol=_TOL, name="ifft-1d"),
    OpRecord("fft", _fft("fft", (4, 6)), [(2, 4, 6)], COMPLEX, tol=_TOL, name="fft-2d"),
    OpRecord("fft", _fft("ifft", (3, 4, 5)), [(2, 3, 4, 5)], COMPLEX, tol=_TOL,
             name="ifft-3d", grad_order=1),
    OpRecord("fft", _fft("rfft", (8,)), [(3, 8)], (np.float32,), tol=_TOL, name="rfft-even"),
    OpRecord("fft", _fft("rfft", (7,)), [(7,)], (np.float32,), tol=_TOL, name="rfft-odd"),
    OpRecord("fft", _fft("rfft", (4, 6)), [(2, 4, 6)], (np.float32,), tol=_TOL,
             name="rfft-2d"),
    OpRecord("fft", _fft("irfft", (8,)), [(3, 5)], COMPLEX, tol=_TOL, name="irfft-even"),
    OpRecord("fft", _fft("irfft", (7,)), [(4,)], COMPLEX, tol=_TOL, name="irfft-odd"),
    OpRecord("fft", _fft("irfft", (3, 4, 6)), [(2, 3, 4, 4)], COMPLEX, tol=_TOL,
             name="irfft-3d", grad_order=1),
]
