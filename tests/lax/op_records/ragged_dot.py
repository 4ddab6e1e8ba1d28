"""Rule-check records of ragged_dot_general (through lax.ragged_dot): groups of rows, an
empty group, floats and integers."""

import dataclasses

import numpy as np

from xjax import lax
from op_records.shape import by_precision
from op_table import INTS, OpRecord

_GROUPS = np.array([2, 0, 3], np.int32)


def _ragged_dot(lhs, rhs):
    return lax.ragged_dot(lhs, rhs, _GROUPS)


# the transpose covers the ragged-free-dimension mode only, as JAX's: no second reverse
# derivative, so gradients are checked to first order
RECORDS = [
    dataclasses.replace(record, grad_order=1)
    for record in by_precision("ragged_dot_general", _ragged_dot, [(5, 3), (3, 3, 4)],
                               name="groups", with_complex=False)
] + [
    OpRecord("ragged_dot_general", _ragged_dot, [(5, 3), (3, 3, 4)], INTS[:1] + INTS[3:4],
             name="ints"),
]
