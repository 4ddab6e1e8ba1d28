"""Rule-check records of convolution."""

import numpy as np

from xjax import lax
from op_table import OpRecord


def _conv(**kw):
    return lambda lhs, rhs: lax.conv_general_dilated(lhs, rhs, **kw)


_F = (np.float32,)
RECORDS = [
    OpRecord("conv_general_dilated", _conv(window_strides=(1,), padding=[(9, 9)]),
             [(1, 1, 3), (1, 1, 10)], _F, tol=1e-5, name="full1d"),
    OpRecord("conv_general_dilated", _conv(window_strides=(2, 1), padding="SAME",
                                           rhs_dilation=(1, 2)),
             [(2, 3, 7, 6), (4, 3, 3, 2)], _F + (np.int32,), tol=1e-5, name="strided"),
    OpRecord("conv_general_dilated",
             _conv(window_strides=(1, 1), padding=[(1, -1), (2, 0)], lhs_dilation=(2, 1),
                   dimension_numbers=("NHWC", "HWIO", "NHWC"), feature_group_count=2),
             [(2, 5, 4, 4), (3, 2, 2, 6)], _F, tol=1e-5, name="grouped"),
    OpRecord("conv_general_dilated",
             _conv(window_strides=(1,), padding="VALID", batch_group_count=2),
             [(4, 3, 6), (4, 3, 2)], _F, tol=1e-5, name="batch_group"),
]
